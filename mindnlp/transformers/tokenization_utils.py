# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The v4 import path of the Python tokenizer base: remote-code tokenizers written for v4 import
`PreTrainedTokenizer` and `AddedToken` from `transformers.tokenization_utils`, which HF v5 keeps
as an alias of its sentencepiece module; this module is that alias."""
from .tokenization_python import AddedToken, PreTrainedTokenizer, PythonBackend
from .tokenization_utils_base import BatchEncoding, PreTrainedTokenizerBase
from .tokenization_utils_sentencepiece import SPIECE_UNDERLINE, SentencePieceBackend

__all__ = ["SPIECE_UNDERLINE", "AddedToken", "BatchEncoding", "PreTrainedTokenizer", "PreTrainedTokenizerBase",
           "PythonBackend", "SentencePieceBackend"]
