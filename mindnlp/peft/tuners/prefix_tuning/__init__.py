# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import PrefixTuningConfig
from .model import PrefixEncoder

__all__ = ["PrefixEncoder", "PrefixTuningConfig"]
