# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ALBERT configuration (defaults: albert/albert-xxlarge-v2)."""
from ...configuration_utils import PretrainedConfig


class AlbertConfig(PretrainedConfig):
    """BERT's fields plus `embedding_size` (the factorised embedding width), `num_hidden_groups`
    (how many distinct layer groups the `num_hidden_layers` share) and `inner_group_num`
    (layers per group). `classifier_dropout_prob` is what BERT's heads read as `classifier_dropout`."""

    model_type = "albert"
    attribute_map = {"classifier_dropout": "classifier_dropout_prob"}

    vocab_size: int = 30000
    embedding_size: int = 128
    hidden_size: int = 4096
    num_hidden_layers: int = 12
    num_hidden_groups: int = 1
    num_attention_heads: int = 64
    intermediate_size: int = 16384
    inner_group_num: int = 1
    hidden_act: str = "gelu_new"
    hidden_dropout_prob: float | int = 0
    attention_probs_dropout_prob: float | int = 0
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    classifier_dropout_prob: float | int | None = 0.1
    pad_token_id: int | None = 0
    bos_token_id: int | None = 2
    eos_token_id: int | list[int] | None = 3
    tie_word_embeddings: bool = True
