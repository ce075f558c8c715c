# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_camembert import CamembertConfig
from .tokenization_camembert import CamembertTokenizer, CamembertTokenizerFast


def __getattr__(name):
    """Model classes load on first use, so importing the config or tokenizer stays cheap."""
    import importlib

    modeling = importlib.import_module(f"{__name__}.modeling_camembert")
    if name in modeling.__all__:
        return getattr(modeling, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
