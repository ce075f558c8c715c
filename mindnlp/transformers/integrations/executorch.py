# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ExecuTorch export: not available, mindnlp has no graph export."""
from ..utils.unsupported import unsupported

TorchExportableModuleForDecoderOnlyLM = unsupported("TorchExportableModuleForDecoderOnlyLM", "ExecuTorch export")
TorchExportableModuleWithStaticCache = unsupported("TorchExportableModuleWithStaticCache", "ExecuTorch export")
TorchExportableModuleWithHybridCache = unsupported("TorchExportableModuleWithHybridCache", "ExecuTorch export")


def convert_and_export_with_cache(*args, **kwargs):
    raise NotImplementedError("convert_and_export_with_cache: mindnlp has no graph export (ExecuTorch)")
