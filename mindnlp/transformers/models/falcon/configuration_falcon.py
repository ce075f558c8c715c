# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Falcon configuration (defaults: tiiuae/falcon-7b).

Two layer layouts: `new_decoder_architecture` (Falcon-40B/180B, Falcon 2) has `num_kv_heads`
grouped key/value heads and, unless `num_ln_in_parallel_attn` is 1, separate norms for the
attention and the MLP of its parallel block; the old one (Falcon-7B, RW) has one key/value
head with `multi_query`, else one per query head, and a parallel (`parallel_attn`) or
sequential block. Positions are rotary (`rope_parameters`) or, with `alibi`, a linear bias on
the attention scores. `bias` adds biases to every linear layer, `ffn_hidden_size` (default:
4 × hidden_size) is the MLP's width; v4 files name hidden_size `n_embed`.
"""
from ...configuration_utils import PretrainedConfig


class FalconConfig(PretrainedConfig):
    model_type = "falcon"
    keys_to_ignore_at_inference = ["past_key_values"]

    vocab_size: int = 65024
    hidden_size: int = 4544
    num_hidden_layers: int = 32
    num_attention_heads: int = 71
    num_ln_in_parallel_attn: int | None = None
    layer_norm_epsilon: float | None = 1e-5
    initializer_range: float = 0.02
    use_cache: bool = True
    hidden_dropout: float | int | None = 0.0
    attention_dropout: float | int | None = 0.0
    num_kv_heads: int | None = None
    alibi: bool | None = False
    new_decoder_architecture: bool | None = False
    multi_query: bool | None = True
    parallel_attn: bool | None = True
    bias: bool | None = False
    max_position_embeddings: int = 2048
    rope_parameters: dict | None = None
    bos_token_id: int | None = 11
    eos_token_id: int | list[int] | None = 11
    pad_token_id: int | None = None
    ffn_hidden_size: int | None = None
    activation: str | None = "gelu"
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        self.hidden_size = kwargs.pop("n_embed", None) or self.hidden_size
        kwargs.pop("num_key_value_heads", None)  # derived from the layout below, as in HF
        if self.num_kv_heads is None:
            self.num_kv_heads = self.num_attention_heads
        if self.ffn_hidden_size is None:
            self.ffn_hidden_size = 4 * self.hidden_size
        super().__post_init__(**kwargs)

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    @property
    def rotary(self):
        return not self.alibi

    @property
    def num_key_value_heads(self):
        """The key/value heads the layout has; the shared attention and the cache read this."""
        if self.new_decoder_architecture:
            return self.num_kv_heads
        return 1 if self.multi_query else self.num_attention_heads

    def validate_architecture(self):
        super().validate_architecture()
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be a multiple of num_attention_heads "
                             f"({self.num_attention_heads})")
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"num_attention_heads ({self.num_attention_heads}) must be a multiple of num_kv_heads "
                             f"({self.num_key_value_heads})")
        if self.new_decoder_architecture and not self.parallel_attn:
            raise ValueError("new_decoder_architecture has a parallel block only: parallel_attn must be True")
