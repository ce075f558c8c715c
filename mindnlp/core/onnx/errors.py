# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Export errors, with torch.onnx's names."""


class OnnxExporterError(RuntimeError):
    """Export cannot represent the program (a graph break, a size it cannot follow)."""


class UnsupportedOperatorError(OnnxExporterError):
    """A core op of the captured graph has no ONNX converter."""
