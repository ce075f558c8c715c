# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`mindnlp.core.utils`: data loading utilities (torch.utils)."""
from . import data

__all__ = ["data"]
