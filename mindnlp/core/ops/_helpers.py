# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Shared plumbing for ops: array module lookup, operand promotion, device checks."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd import function as _function
from ..backends import backend_for_array, get_backend

HALF_NP = (np.dtype(np.float16), _dtype.bfloat16.np_dtype)


def narrow(array, dtype):
    """array cast to `dtype` as astype casts it: a float32 result rounded to a half dtype (the
    half ops compute in float32), or any other cast. Large arrays of the casts between float32
    and a half dtype go through the backend's compiled loops (NumPy's are a call per element)."""
    if array.dtype == dtype:
        return array
    if array.dtype == np.float32 and dtype in HALF_NP:
        kernel = backend_for_array(array).fused("round_half", array)
        out = None if kernel is None else kernel(array, dtype)
        if out is not None:
            return out
    elif array.dtype in HALF_NP and dtype == np.float32:
        return widen(array)
    return array.astype(dtype)


def widen(array):
    """A half array as float32 (exact), where the half ops compute; any other array as it is."""
    if array.dtype not in HALF_NP:
        return array
    kernel = backend_for_array(array).fused("widen_half", array)
    out = None if kernel is None else kernel(array)
    return array.astype(np.float32) if out is None else out


def xp_of(t):
    """The array module (numpy or cupy) holding tensor t's data."""
    if t._device.type == "cpu":
        return np
    return get_backend(t._device).xp


def special_of(t):
    """The backend's special-function module (scipy.special or cupyx.scipy.special)."""
    return get_backend(t._device).special


def fused_kernel(name, t, work=None):
    """The backend's fused kernel `name` for tensor t's data, or None to run the composed op.

    `work` sizes the op where t's element count does not (attention: its score elements).
    """
    return get_backend(t._device).fused(name, t._data, work)


def is_float_array(array):
    return array.dtype.kind == "f" or array.dtype == _dtype.bfloat16.np_dtype


def compute_float(fn, array):
    """Apply fn, computing float16/bfloat16 in float32 and rounding back as torch's CPU does."""
    if array.dtype in HALF_NP:
        return narrow(fn(widen(array)), array.dtype)
    return fn(array)


def devices_differ(first, second):
    """torch's error for tensors on two devices."""
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{first} and {second}!")


def check_same_device(*tensors):
    """Raise when tensors sit on different devices (0-dim cpu tensors may join any device)."""
    first = None
    for t in tensors:
        if not isinstance(t, Tensor) or (t._data.ndim == 0 and t._device.type == "cpu"):
            continue
        if first is None:
            first = t
        elif t._device != first._device:
            raise devices_differ(first._device, t._device)
    return first


def broadcast_error(a, b):
    """torch's error for operands whose shapes do not broadcast (NumPy raises ValueError)."""
    shape_a, shape_b = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    ndim = max(len(shape_a), len(shape_b))
    for dim in range(ndim - 1, -1, -1):
        size_a = shape_a[dim - ndim + len(shape_a)] if dim - ndim + len(shape_a) >= 0 else 1
        size_b = shape_b[dim - ndim + len(shape_b)] if dim - ndim + len(shape_b) >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            return RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b ({size_b}) at non-singleton "
                f"dimension {dim}"
            )
    return RuntimeError(f"shapes {list(shape_a)} and {list(shape_b)} cannot be broadcast together")


_FAST_SCALARS = (int, float)


def promote_operands(a, b, wrap_ints=True):
    """Cast tensor operands to torch's result dtype; Python scalars stay scalars.

    A Python int outside an integer result dtype's range wraps into it, as torch casts the
    scalar to the tensor's dtype (int8 tensor + 1000 adds -24); NumPy would raise. Comparisons
    pass wrap_ints=False: NumPy compares such an int by its value (int8 tensor < 1000 is all
    True), where torch's wrapped comparison gives an answer that is simply wrong."""
    # Fast paths for the common cases, where nothing needs casting: two tensors of one
    # dtype on one device, a floating tensor with a Python number, or an integer tensor with
    # a Python int (a position plus one) -- NumPy 2 keeps the array's dtype for Python
    # scalars, as torch does.
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._data.dtype == b._data.dtype and a._device is b._device:
                return a, b
        elif _keeps_dtype(a, b, wrap_ints):
            return a, b
    elif isinstance(b, Tensor) and _keeps_dtype(b, a, wrap_ints):
        return a, b
    return _promote_slow(a, b, wrap_ints)


_INT_BOUNDS = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
               for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}


def _keeps_dtype(tensor, scalar, wrap_ints):
    dtype = tensor._data.dtype
    if type(scalar) in _FAST_SCALARS and dtype.kind == "f":
        return True
    if type(scalar) is int and dtype.kind in "iu":
        if not wrap_ints:
            return True
        low, high = _INT_BOUNDS[dtype]
        return low <= scalar <= high
    return False


def _promote_slow(a, b, wrap_ints=True):
    from .conversion import cast, to_device

    dtype = _dtype.result_type(a, b)
    a_t, b_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_t and b_t and a._device != b._device:
        home = check_same_device(a, b)
        home = a if home is None else home
        a = a if a._device == home._device else to_device(a, home._device)
        b = b if b._device == home._device else to_device(b, home._device)
    if a_t and a._data.dtype != dtype.np_dtype:
        a = cast(a, dtype)
    if b_t and b._data.dtype != dtype.np_dtype:
        b = cast(b, dtype)
    if not a_t:
        a = _scalar_for(a, dtype, wrap_ints)
    if not b_t:
        b = _scalar_for(b, dtype, wrap_ints)
    return a, b


def _scalar_for(value, dtype, wrap_ints=True):
    """A Python scalar in the form NumPy combines with `dtype` arrays without widening them
    (an int out of an integer dtype's range wrapped into it, see promote_operands)."""
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.item()
    if dtype.is_floating_point:
        return float(value)
    if dtype is _dtype.bool_:
        return bool(value)
    value = int(value)
    bounds = _INT_BOUNDS.get(dtype.np_dtype)
    if wrap_ints and bounds is not None and not bounds[0] <= value <= bounds[1] and -2 ** 63 <= value < 2 ** 64:
        # values beyond 64 bits raise OverflowError in NumPy, as they do in torch
        span = bounds[1] - bounds[0] + 1
        value = (value - bounds[0]) % span + bounds[0]
    return value


def as_tensor_like(value, like):
    """Wrap a Python scalar or array as a tensor on `like`'s device (dtype per torch rules)."""
    if isinstance(value, Tensor):
        return value
    from .creation import tensor

    dtype = _dtype.result_type(value) if not isinstance(value, np.ndarray) else None
    if dtype is not None and dtype.is_floating_point and like.is_floating_point():
        dtype = like.dtype
    return tensor(value, dtype=dtype, device=like.device)


def normalize_dim(dim, ndim):
    """Map a possibly negative dim into range, with torch's error for a bad one."""
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not lo <= dim <= hi:
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})")
    return dim % ndim if ndim else 0


def normalize_dims(dim, ndim):
    """None → all dims; an int or a sequence → a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (normalize_dim(int(dim), ndim),)
    return tuple(sorted(normalize_dim(int(d), ndim) for d in dim))


def wrap(array, version=None):
    return _wrap(array, version=version)


def array_op(kernel, *operands):
    """A non-differentiable op computed directly on arrays: `kernel(*arrays)` as a tensor.

    Cheaper than a Function for comparisons and logic; graph capture records it here since
    it does not pass through Function.apply. A kernel returning a tuple of arrays (or None)
    gives a tuple of tensors (the array-level fast paths of backward formulas).
    """
    if _function._tracer is not None:
        return _function._tracer.record_raw(kernel, operands)
    if len(operands) == 2:
        a, b = operands
        return _wrap(kernel(a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b))
    return wrap_result(kernel(*[o._data if isinstance(o, Tensor) else o for o in operands]))


def wrap_result(result):
    """An array, or a tuple of arrays and Nones, as tensors."""
    if type(result) is tuple:
        return tuple(None if r is None else _wrap(r) for r in result)
    return _wrap(result)


def wrap_constant(array):
    """Wrap an array computed from shapes and Python values only (a causal mask): graph
    capture keeps it as a constant of the graph."""
    t = _wrap(array)
    if _function._tracer is not None:
        _function._tracer.mark_constant(t)
    return t
