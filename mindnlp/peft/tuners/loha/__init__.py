# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import LoHaConfig
from .layer import LoHaLayer
from .model import LoHaModel

__all__ = ["LoHaConfig", "LoHaLayer", "LoHaModel"]
