# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import LoraConfig
from .layer import Conv1d, Conv2d, Embedding, Linear, LoraLayer
from .model import LoraModel

__all__ = ["LoraConfig", "LoraLayer", "LoraModel", "Linear", "Embedding", "Conv1d", "Conv2d"]
