# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""RoBERTa configuration (defaults: FacebookAI/roberta-base).

BERT's fields; the defaults differ in vocabulary size and special-token ids.
"""
from ..bert.configuration_bert import BertConfig


class RobertaConfig(BertConfig):
    model_type = "roberta"

    vocab_size: int = 50265
    pad_token_id: int | None = 1
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 2
