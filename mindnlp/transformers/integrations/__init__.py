# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Hugging Face's integrations with other libraries, as far as mindnlp has them.

Module sizes (accelerate) and tensor-parallel plan matching are pure bookkeeping and work;
DeepSpeed, graph export and the fused MoE expert kernels are not available and say so.
"""
from .deepspeed import HfDeepSpeedConfig, is_deepspeed_available, is_deepspeed_zero3_enabled

__all__ = ["HfDeepSpeedConfig", "is_deepspeed_available", "is_deepspeed_zero3_enabled"]
