# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import IA3Config
from .layer import IA3Layer
from .model import IA3Model

__all__ = ["IA3Config", "IA3Layer", "IA3Model"]
