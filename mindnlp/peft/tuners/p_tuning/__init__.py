# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .config import PromptEncoderConfig, PromptEncoderReparameterizationType
from .model import BidirectionalLSTM, PromptEncoder

__all__ = ["BidirectionalLSTM", "PromptEncoder", "PromptEncoderConfig", "PromptEncoderReparameterizationType"]
