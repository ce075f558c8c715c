# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_whisper import WhisperConfig
from .feature_extraction_whisper import WhisperFeatureExtractor
from .processing_whisper import WhisperProcessor
from .tokenization_whisper import WhisperTokenizer, WhisperTokenizerFast


def __getattr__(name):
    """Model classes load on first use, so importing the config stays cheap."""
    import importlib

    modeling = importlib.import_module(f"{__name__}.modeling_whisper")
    if name in modeling.__all__:
        return getattr(modeling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
