# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import PromptTuningConfig, PromptTuningInit
from .model import BasePromptEncoder, PromptEmbedding

__all__ = ["BasePromptEncoder", "PromptEmbedding", "PromptTuningConfig", "PromptTuningInit"]
