# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Multi-process data parallelism (torch.nn.parallel)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
