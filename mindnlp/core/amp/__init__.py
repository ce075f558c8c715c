# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`mindnlp.core.amp`: mixed precision (autocast regions and loss scaling), as torch.amp."""
from .autocast_mode import autocast, autocast_inputs, get_autocast_dtype, is_autocast_available, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "autocast_inputs", "GradScaler", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_enabled"]
