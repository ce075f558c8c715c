# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Hugging Face's backend-availability checks, answered for mindnlp.

HF code guards torch-only imports with `if is_torch_available():`; here `mindnlp.core` plays
torch's part and is always importable, so such guarded code always runs.
"""
import importlib.util


def is_torch_available():
    """mindnlp's core plays torch's part, so it is always available."""
    return True


def is_mlx_available():
    """Apple's MLX arrays are not a `return_tensors` target here."""
    return False


def is_sklearn_available():
    return importlib.util.find_spec("sklearn") is not None


def is_torch_fp16_available_on_device(device):
    """float16 tensors (stored as such, computed in float32 on CPU) exist on every backend."""
    return True


def is_torch_bf16_available_on_device(device):
    """bfloat16 tensors (ml_dtypes' type on CPU) exist on every backend."""
    return True


def is_flash_attn_2_available():
    """mindnlp's attention kernels are its own; the flash-attn package is never used."""
    return False


def is_torch_greater_or_equal(library_version, accept_dev=False):
    """HF gates code on a torch release's features; mindnlp.core is not torch and claims no version."""
    return False


def is_torchdynamo_compiling():
    """True while `core.compile` records a call (torch.compile's tracing, here), so that code may
    skip work a captured graph need not hold, as HF's does under torch.compile."""
    from ...core.jit import capture

    return capture.active() is not None


def is_torchdynamo_exporting():
    """True while `core.onnx.export` records a model (torch.export's tracing, here)."""
    from ...core.onnx import is_in_onnx_export

    return is_in_onnx_export()


def is_sentencepiece_available():
    """Whether the sentencepiece package is installed. mindnlp reads sentencepiece models without it;
    HF code checks this before importing the package itself."""
    return importlib.util.find_spec("sentencepiece") is not None


def is_torchaudio_available():
    """torchaudio extends torch, not mindnlp.core: audio is read and resampled by audio_utils."""
    return False


def is_torch_xpu_available(check_device=False):
    """mindnlp.core has no Intel XPU backend."""
    return False


def is_datasets_available():
    return importlib.util.find_spec("datasets") is not None


def direct_transformers_import(path, file="__init__.py"):
    """HF loads its source tree as a module; mindnlp's equivalent of that tree is mindnlp.transformers."""
    return importlib.import_module("mindnlp.transformers")
