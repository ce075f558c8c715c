# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Optimizers for data-parallel jobs (torch.distributed.optim)."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
