# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BERT configuration (defaults: google-bert/bert-base-uncased)."""
from ...configuration_utils import PretrainedConfig


class BertConfig(PretrainedConfig):
    """Hyper-parameters of a BERT encoder; `is_decoder`/`add_cross_attention` turn it into a
    decoder for encoder-decoder use, `classifier_dropout` (None: use `hidden_dropout_prob`)
    applies to the classification heads."""

    model_type = "bert"

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float | int = 0.1
    attention_probs_dropout_prob: float | int = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int | None = 0
    use_cache: bool = True
    classifier_dropout: float | int | None = None
    is_decoder: bool = False
    add_cross_attention: bool = False
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    tie_word_embeddings: bool = True
