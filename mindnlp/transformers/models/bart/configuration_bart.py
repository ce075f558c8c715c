# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BART configuration (defaults: facebook/bart-large).

Encoder and decoder have their own depth, width of the feed-forward block and head count;
`d_model` is shared. `scale_embedding` multiplies token embeddings by sqrt(d_model).
Generation starts the decoder with `decoder_start_token_id` (BART: EOS) and forces EOS as the
last token (`forced_eos_token_id`).
"""
from ...configuration_utils import PretrainedConfig


class BartConfig(PretrainedConfig):
    model_type = "bart"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    }
    # BART's classification checkpoints (MNLI) have three labels; its relatives keep the usual two.
    default_num_labels = 3

    vocab_size: int = 50265
    max_position_embeddings: int = 1024
    encoder_layers: int = 12
    encoder_ffn_dim: int = 4096
    encoder_attention_heads: int = 16
    decoder_layers: int = 12
    decoder_ffn_dim: int = 4096
    decoder_attention_heads: int = 16
    encoder_layerdrop: float | int = 0.0
    decoder_layerdrop: float | int = 0.0
    activation_function: str = "gelu"
    d_model: int = 1024
    dropout: float | int = 0.1
    attention_dropout: float | int = 0.0
    activation_dropout: float | int = 0.0
    init_std: float = 0.02
    classifier_dropout: float | int = 0.0
    scale_embedding: bool = False
    use_cache: bool = True
    pad_token_id: int | None = 1
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 2
    is_encoder_decoder: bool = True
    decoder_start_token_id: int | None = 2
    forced_eos_token_id: int | list[int] | None = 2
    is_decoder: bool = False
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        if self.id2label is None:
            self.num_labels = kwargs.pop("num_labels", self.default_num_labels)
        super().__post_init__(**kwargs)


__all__ = ["BartConfig"]
