# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import AdaLoraConfig
from .layer import AdaLoraLayer, RankAllocator, SVDConv2d, SVDLinear
from .model import AdaLoraModel

__all__ = ["AdaLoraConfig", "AdaLoraLayer", "AdaLoraModel", "RankAllocator", "SVDConv2d", "SVDLinear"]
