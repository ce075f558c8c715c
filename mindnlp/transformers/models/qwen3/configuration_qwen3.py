# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen3 configuration (defaults: Qwen/Qwen3-8B).

Qwen2's fields (sliding windows from `max_window_layers` when `use_sliding_window`) with a
`head_dim` set on its own (128) and one `attention_bias` for every attention projection.
"""
from ..qwen2.configuration_qwen2 import Qwen2Config


class Qwen3Config(Qwen2Config):
    model_type = "qwen3"

    head_dim: int = 128
    attention_bias: bool = False
