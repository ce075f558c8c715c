# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_t5 import T5Config
from .tokenization_t5 import T5Tokenizer, T5TokenizerFast


def __getattr__(name):
    """Model classes load on first use, so importing the config stays cheap."""
    import importlib

    modeling = importlib.import_module(f"{__name__}.modeling_t5")
    if name in modeling.__all__:
        return getattr(modeling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
