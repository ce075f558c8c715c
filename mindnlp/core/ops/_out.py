# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch's `out=` argument: an op's result written into a tensor the caller gives.

The op runs as usual (without recording: torch refuses `out=` when autograd would have to
record it) and its result is copied into `out`: cast to out's dtype when torch's same-kind
rule allows, and resized when the shapes differ (with torch's deprecation warning unless
`out` was empty). `out` keeps its memory when its shape is right, so its views see the
result, and its version counter is bumped like any in-place write. The op returns `out`.
"""
import warnings

from .. import _dtype
from .._tensor import Tensor
from ..autograd import function as _function
from ..autograd import grad_mode


def _tensors(values):
    for value in values:
        if isinstance(value, Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)


def write_out(name, out, fn, *args, **kwargs):
    """Run `fn(*args, **kwargs)` and write its result into `out`; a tuple of tensors for the
    ops with several results (values and indices), one per result."""
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if grad_mode.is_grad_enabled() and any(t.requires_grad for t in _tensors((*args, *kwargs.values(), *outs))):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    with grad_mode.no_grad():
        result = fn(*args, **kwargs)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors")
        written = [store(name, o, r) for o, r in zip(out, result)]
        return tuple(written) if type(result) is tuple else type(result)(*written)
    return store(name, out, result)


def creation_out(name, out, dtype, make):
    """Fill `out` from a factory: `make(dtype, device)` builds the values in out's dtype and on
    its device; a dtype the caller gives must be out's. Resizing is silent, as torch's is."""
    _check_out_tensor(name, out)
    if dtype is not None and _dtype.as_dtype(dtype) is not out.dtype:
        raise RuntimeError(f"dtype {_dtype.scalar_type_name(_dtype.as_dtype(dtype))} does not match dtype of out "
                           f"parameter ({_dtype.scalar_type_name(out.dtype)})")
    with grad_mode.no_grad():
        result = make(out.dtype, out.device)
    return store(name, out, result, warn_resize=False)


def _check_out_tensor(name, out):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def store(name, out, result, warn_resize=True):
    """Copy result into out (cast, resized if needed); return out."""
    _check_out_tensor(name, out)
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    src, dst = result.dtype, out.dtype
    if src.category > dst.category:
        raise RuntimeError(f"result type {_dtype.scalar_type_name(src)} can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(dst)}")
    array = result._data if src is dst else result._data.astype(dst.np_dtype)
    if tuple(out.shape) == tuple(result.shape):
        out._data[...] = array
        if _function._tracer is not None:
            from .inplace import assign

            _function._tracer.write(assign, out, (result._data,))
    else:
        if _function._tracer is not None:
            _function._tracer.graph_break("an out= tensor was resized")
        if warn_resize and out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does "
                f"not match the required output shape {list(result.shape)}. This behavior is deprecated, and in a "
                "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning, stacklevel=4)
        out._data = array.copy() if array is result._data else array
    out._version[0] += 1
    return out
