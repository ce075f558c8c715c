# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ELECTRA configuration (defaults: google/electra-small-discriminator)."""
from ..bert.configuration_bert import BertConfig


class ElectraConfig(BertConfig):
    """BERT's fields, sized for the small discriminator, plus `embedding_size` (projected to
    `hidden_size` when they differ) and the `summary_*` options of the multiple-choice head's
    sequence summary."""

    model_type = "electra"

    embedding_size: int = 128
    hidden_size: int = 256
    num_attention_heads: int = 4
    intermediate_size: int = 1024
    summary_type: str = "first"
    summary_use_proj: bool = True
    summary_activation: str | None = "gelu"
    summary_last_dropout: float | int = 0.1
