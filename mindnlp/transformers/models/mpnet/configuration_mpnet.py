# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""MPNet configuration (defaults: microsoft/mpnet-base)."""
from ...configuration_utils import NotAField
from ..roberta.configuration_roberta import RobertaConfig


class MPNetConfig(RobertaConfig):
    """RoBERTa's fields without token types or decoder options, plus
    `relative_attention_num_buckets` (the rows of the learned relative-position bias)."""

    model_type = "mpnet"

    vocab_size: int = 30527
    relative_attention_num_buckets: int = 32
    type_vocab_size = NotAField()
    use_cache = NotAField()
    classifier_dropout = NotAField()
    is_decoder = NotAField()
    add_cross_attention = NotAField()
