# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Tensor creation: from data, filled, ranges, identity.

Called without a device, these factories use the default device (core.get_default_device;
`with core.device(...)` blocks); the `*_like` ones follow their input's device instead.
"""
import math
import numbers

import numpy as np

from .. import _dtype
from .._device import CPU, as_device, default_device
from .._tensor import Tensor, _wrap
from ..backends import get_backend
from ._out import creation_out


def _finish(array, device, requires_grad):
    device = as_device(device) if device is not None else default_device()
    if device is not None and device.type != "cpu":
        array = get_backend(device).from_host(array, device.index)
    t = _wrap(array)
    if requires_grad:
        if not _is_float_np(array.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t.requires_grad = True
    return t


def _is_float_np(np_dtype):
    return np_dtype.kind == "f" or np_dtype == _dtype.bfloat16.np_dtype


def _infer_array(data):
    """Turn nested Python data into an array with torch's inferred dtype."""
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, (list, tuple)):
        data = [_infer_array(d) if isinstance(d, (Tensor, list, tuple)) else d for d in data]
        if any(isinstance(d, np.ndarray) and d.dtype == _dtype.bfloat16.np_dtype for d in data):
            data = [np.asarray(d, dtype=np.float32) for d in data]
    array = np.asarray(data)
    if array.dtype == np.float64 and not _has_float64_source(data):
        array = array.astype(_dtype.get_default_dtype().np_dtype)
    elif array.dtype.kind in "iu" and array.dtype != np.uint8 or array.dtype == object:
        if array.dtype == object:
            raise TypeError(f"cannot build a tensor from data of mixed or unsupported types: {data!r:.80}")
        array = array.astype(np.int64)
    elif array.dtype.kind == "U":
        raise TypeError("cannot build a tensor from strings")
    return array


def _has_float64_source(data):
    """True when data holds float64 arrays or NumPy float64 scalars (torch keeps those)."""
    if isinstance(data, np.ndarray):
        return data.dtype == np.float64
    if isinstance(data, np.float64):
        return True
    if isinstance(data, (list, tuple)):
        return any(_has_float64_source(d) for d in data)
    return False


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Copy data into a new leaf tensor; dtype inferred as torch does (floats → default)."""
    if isinstance(data, Tensor):
        device = device if device is not None else default_device() or data.device
        if device == "meta" or data.device.type == "meta":
            result = data.detach().to(device=device, dtype=dtype, copy=True)
            return result.requires_grad_(True) if requires_grad else result
        array = data._host().copy()
    elif isinstance(data, (np.ndarray, np.generic)):
        array = np.array(data)
    else:
        array = _infer_array(data)
        if array.dtype == np.float64 and isinstance(data, numbers.Real) and not isinstance(data, np.float64):
            array = array.astype(_dtype.get_default_dtype().np_dtype)
    if dtype is not None:
        array = array.astype(_dtype.as_dtype(dtype).np_dtype)
    else:
        _dtype.from_numpy_dtype(array.dtype)
    # np.ascontiguousarray would turn a 0-dim array into shape (1,).
    return _finish(np.require(array, requirements="C"), device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), but reuses a tensor's or array's memory when dtype and device allow."""
    if isinstance(data, Tensor):
        device = device if device is not None else default_device()
        return data.to(device=device, dtype=dtype) if (dtype or device) else data
    if isinstance(data, np.ndarray) and (dtype is None or _dtype.as_dtype(dtype).np_dtype == data.dtype):
        _dtype.from_numpy_dtype(data.dtype)
        return _finish(data, device, False)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing memory with a NumPy array."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _dtype.from_numpy_dtype(array.dtype)
    return _wrap(array)


def _shape_arg(size, keyword=None):
    """The shape from torch's two spellings: positional sizes (2, 3) or ((2, 3),), or `size=(2, 3)`."""
    if keyword is not None:
        if size:
            raise TypeError("pass the shape either positionally or as size=, not both")
        size = (keyword,)
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    shape = tuple(int(s) for s in size)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"negative dimension in shape {shape}")
    return shape


def _filled(shape, value, dtype, device, requires_grad):
    """A new tensor holding `value` everywhere; `None` leaves it uninitialised (empty). Zeros
    and empty come from the allocator (calloc / malloc: the OS supplies zeroed pages as they
    are touched), not from a pass writing every element: a KV cache allocates far more than a
    prompt fills."""
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    device = as_device(device) if device is not None else default_device()
    cpu = device is None or device.type == "cpu"
    xp = np if cpu else get_backend(device).xp
    if value is None:
        array = xp.empty(shape, dtype=dtype.np_dtype)
    elif isinstance(value, (int, float)) and value == 0:
        array = xp.zeros(shape, dtype=dtype.np_dtype)
    else:
        array = xp.full(shape, value, dtype=dtype.np_dtype)
    if cpu:
        return _finish(array, CPU, requires_grad)
    t = _wrap(array)
    return t.requires_grad_(True) if requires_grad else t


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          pin_memory=False):
    shape = _shape_arg(sizes, size)
    if out is not None:
        return creation_out("zeros", out, dtype, lambda dt, dev: zeros(shape, dtype=dt, device=dev))
    return _filled(shape, 0, dtype, device, requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          pin_memory=False):
    shape = _shape_arg(sizes, size)
    if out is not None:
        return creation_out("ones", out, dtype, lambda dt, dev: ones(shape, dtype=dt, device=dev))
    return _filled(shape, 1, dtype, device, requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None, pin_memory=False,
          memory_format=None):
    shape = _shape_arg(sizes, size)
    if out is not None:
        return creation_out("empty", out, dtype, lambda dt, dev: empty(shape, dtype=dt, device=dev))
    return _filled(shape, None, dtype, device, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return creation_out("full", out, dtype, lambda dt, dev: full(size, fill_value, dtype=dt, device=dev))
    if dtype is None:
        dtype = _dtype.result_type(fill_value) if not isinstance(fill_value, Tensor) else fill_value.dtype
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(_shape_arg((size,) if isinstance(size, int) else tuple(size)), fill_value, dtype, device,
                   requires_grad)


def _like(x, value, dtype, device, requires_grad):
    return _filled(tuple(x.shape), value, dtype if dtype is not None else x.dtype,
                   device if device is not None else x.device, requires_grad)


def zeros_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _like(input, 0, dtype, device, requires_grad)


def ones_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _like(input, 1, dtype, device, requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _like(input, None, dtype, device, requires_grad)


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return _like(input, fill_value, dtype, device, requires_grad)


def _number(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    """Values from start to end (exclusive); int64 unless an argument is a float."""
    if out is not None:
        return creation_out("arange", out, dtype, lambda dt, dev: arange(start, end, step, dtype=dt, device=dev))
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = _dtype.get_default_dtype() if is_float else _dtype.int64
    dtype = _dtype.as_dtype(dtype)
    length = max(0, math.ceil((end - start) / step))
    array = (start + np.arange(length, dtype=np.float64) * step) if dtype.is_floating_point else \
        np.arange(start, start + length * step, step, dtype=np.int64)[:length]
    return _finish(array.astype(dtype.np_dtype), device, requires_grad)


def range_(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """torch.range: like arange but including end (deprecated in torch, kept for old code)."""
    if end is None:
        start, end = 0, start
    return arange(start, end + step / 2 if step > 0 else end - abs(step) / 2, step,
                  dtype=dtype or _dtype.get_default_dtype(), device=device, requires_grad=requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return creation_out("linspace", out, dtype, lambda dt, dev: linspace(start, end, steps, dtype=dt, device=dev))
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    array = np.linspace(_number(start), _number(end), int(steps), dtype=np.float64)
    return _finish(array.astype(dtype.np_dtype), device, requires_grad)


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    array = np.logspace(_number(start), _number(end), int(steps), base=base, dtype=np.float64)
    return _finish(array.astype(dtype.np_dtype), device, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return creation_out("eye", out, dtype, lambda dt, dev: eye(n, m, dtype=dt, device=dev))
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return _finish(np.eye(n, m if m is not None else n, dtype=dtype.np_dtype), device, requires_grad)


def scalar_tensor(value, dtype=None, device=None, requires_grad=False):
    dtype = dtype if dtype is not None else _dtype.get_default_dtype()
    return tensor(value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor_like(x, data, dtype=None, device=None, requires_grad=False):
    return tensor(data, dtype=dtype if dtype is not None else x.dtype,
                  device=device if device is not None else x.device, requires_grad=requires_grad)


__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like", "linspace",
    "logspace", "ones", "ones_like", "range_", "scalar_tensor", "tensor", "zeros", "zeros_like", "CPU",
]
