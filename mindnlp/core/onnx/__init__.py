# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ONNX export of models and functions: `core.onnx.export`, torch.onnx.export's contract.

Built on core.jit's captured graphs (trace.py), an op -> converter table (ops.py) and the
`onnx` package (the `onnx` extra: pip install 'mindnlp[onnx]').
"""
from .errors import OnnxExporterError, UnsupportedOperatorError
from .export import export
from .trace import is_in_onnx_export

__all__ = ["OnnxExporterError", "UnsupportedOperatorError", "export", "is_in_onnx_export"]
