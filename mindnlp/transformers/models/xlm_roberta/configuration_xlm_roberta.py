# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""XLM-RoBERTa configuration.

The architecture is RoBERTa's; the class exists so that config.json files with
`"model_type": "xlm-roberta"` load and save under their own type. The defaults are the ones
transformers declares (BERT-sized vocabulary); real checkpoints always state vocab_size.
"""
from ..roberta.configuration_roberta import RobertaConfig


class XLMRobertaConfig(RobertaConfig):
    model_type = "xlm-roberta"

    vocab_size: int = 30522
