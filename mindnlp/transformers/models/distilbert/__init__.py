# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_distilbert import DistilBertConfig
from .tokenization_distilbert import DistilBertTokenizer, DistilBertTokenizerFast


def __getattr__(name):
    """Model classes load on first use, so importing the config or tokenizer stays cheap."""
    import importlib

    if not name.startswith("DistilBert"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    modeling = importlib.import_module(f"{__name__}.modeling_distilbert")
    if name in modeling.__all__:
        return getattr(modeling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
