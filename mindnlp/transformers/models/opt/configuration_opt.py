# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""OPT configuration (defaults: facebook/opt-350m's sizes with the pre-norm of the other sizes).

`ffn_dim` is the feed-forward width, `activation_function` its activation (ReLU), `dropout`
the dropout on both residual branches. `do_layer_norm_before` False is opt-350m's post-norm
layer; `word_embed_proj_dim` (default: hidden_size) is the width of the token embeddings when
they are projected in and out of the layers (opt-350m: 512 against 1024). `enable_bias` and
`layer_norm_elementwise_affine` drop the linear biases and the norms' weights.
`_remove_final_layer_norm` is kept for checkpoints fine-tuned before transformers v4.20.1,
which had no final norm.
"""
from ...configuration_utils import PretrainedConfig


class OPTConfig(PretrainedConfig):
    model_type = "opt"
    keys_to_ignore_at_inference = ["past_key_values"]

    vocab_size: int = 50272
    hidden_size: int = 768
    num_hidden_layers: int = 12
    ffn_dim: int = 3072
    max_position_embeddings: int = 2048
    do_layer_norm_before: bool = True
    _remove_final_layer_norm: bool = False
    word_embed_proj_dim: int | None = None
    dropout: float | int = 0.1
    attention_dropout: float | int = 0.0
    num_attention_heads: int = 12
    activation_function: str = "relu"
    layerdrop: float | int = 0.0
    init_std: float = 0.02
    use_cache: bool = True
    pad_token_id: int | None = 1
    bos_token_id: int | None = 2
    eos_token_id: int | list[int] | None = 2
    enable_bias: bool = True
    layer_norm_elementwise_affine: bool = True
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        if self.word_embed_proj_dim is None:
            self.word_embed_proj_dim = self.hidden_size
        super().__post_init__(**kwargs)

