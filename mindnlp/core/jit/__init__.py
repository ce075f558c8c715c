# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Graph mode: capture a function's core ops once, replay them without per-op dispatch.

`core.compile(fn_or_module)` (torch.compile's contract) and `mindnlp.set_context(
mode=mindnlp.GRAPH_MODE)` (MindSpore's switch) are built here: capture.py records an
eager run into a Graph (graph.py), passes.py simplifies it, lower.py turns it into one
generated function of kernel calls, compile.py keeps graphs keyed by guards.
"""
from . import kernels  # noqa: F401  (registers the direct array kernels of hot ops)
from .capture import GraphBreak
from .compile import CompiledFunction, ExplainOutput, OptimizedModule, compile, config, explain, reset

__all__ = ["CompiledFunction", "ExplainOutput", "GraphBreak", "OptimizedModule", "compile", "config", "explain",
           "reset"]
