# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch.compiler's names: `reset`, `explain`, and the graph-mode settings."""
from .jit import GraphBreak, config, explain, reset  # noqa: F401


def is_compiling():
    """True while core.compile captures a graph (code may skip host-side checks then)."""
    from .jit.capture import active

    return active() is not None
