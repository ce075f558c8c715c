# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""CamemBERT configuration.

RoBERTa's fields under `model_type = "camembert"`, with the defaults transformers declares
(BERT-sized vocabulary); real checkpoints always state vocab_size.
"""
from ..roberta.configuration_roberta import RobertaConfig


class CamembertConfig(RobertaConfig):
    model_type = "camembert"

    vocab_size: int = 30522
