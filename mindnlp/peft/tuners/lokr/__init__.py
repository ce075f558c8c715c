# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import LoKrConfig
from .layer import LoKrLayer
from .model import LoKrModel

__all__ = ["LoKrConfig", "LoKrLayer", "LoKrModel"]
