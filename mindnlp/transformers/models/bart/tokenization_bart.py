# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BART's tokenizer is RoBERTa's (GPT-2's byte-level BPE, `<s> A </s></s> B </s>`); HF v5
exposes it under BART's names too."""
from ..roberta.tokenization_roberta import RobertaTokenizerFast

BartTokenizer = BartTokenizerFast = RobertaTokenizerFast

__all__ = ["BartTokenizer", "BartTokenizerFast"]
