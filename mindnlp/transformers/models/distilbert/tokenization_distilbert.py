# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DistilBERT uses BERT's tokenizer but takes no token type ids."""
from ..bert.tokenization_bert import BertTokenizerFast


class DistilBertTokenizerFast(BertTokenizerFast):
    model_input_names = ["input_ids", "attention_mask"]


DistilBertTokenizer = DistilBertTokenizerFast
