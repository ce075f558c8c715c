# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Device backends: which array library holds a device's data and how arrays move.

A backend is a small object: `xp` (the array module ops are written against), its device
type, `to_host`/`from_host`, and optional fused kernels that override an op's composed
default. The CUDA backend imports CuPy only when a CUDA tensor is first asked for.
"""
from .._device import device
from .meta_backend import MetaArray, MetaBackend
from .numpy_backend import NumpyBackend

_BACKENDS = {"cpu": NumpyBackend(), "meta": MetaBackend()}


def get_backend(dev):
    """The backend for a device (object or string); CUDA is loaded on first use."""
    kind = dev.type if isinstance(dev, device) else device(dev).type
    backend = _BACKENDS.get(kind)
    if backend is None:
        if kind != "cuda":
            raise RuntimeError(f"no backend for device type {kind!r}")
        from .cupy_backend import CupyBackend

        backend = _BACKENDS["cuda"] = CupyBackend()
    return backend


def backend_for_array(array):
    """The backend that owns an array (NumPy arrays are cpu, MetaArrays meta, anything else cuda)."""
    import numpy

    if isinstance(array, (numpy.ndarray, numpy.generic)):
        return _BACKENDS["cpu"]
    if isinstance(array, MetaArray):
        return _BACKENDS["meta"]
    return get_backend("cuda")


def cuda_available():
    """True when CuPy imports and sees at least one GPU."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no cupy, no driver or no device: all mean "not available"
        return False
