# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_gpt2 import GPT2Config
from .tokenization_gpt2 import GPT2Tokenizer, GPT2TokenizerFast


def __getattr__(name):
    """Model classes load on first use, so importing the config or tokenizer stays cheap."""
    import importlib

    if not name.startswith("GPT2"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    modeling = importlib.import_module(f"{__name__}.modeling_gpt2")
    if name in modeling.__all__:
        return getattr(modeling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
