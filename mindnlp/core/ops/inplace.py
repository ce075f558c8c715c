# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""In-place updates: write a result into a tensor's memory and rebase its autograd history.

An in-place op is computed functionally and then copied into the target's array, so views
of the target see the new values. When autograd is recording, the functional op runs on
an alias holding a copy of the old values (anything it saved stays valid), and the target
takes over the result's grad_fn. When the target is a view (autograd.function notes how
each was made), the base's history is rewritten too, so that its later uses see the op.
The shared version counter is bumped, which lets backward detect tensors modified after
they were saved.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd import function as _function
from ..autograd import grad_mode
from ..autograd.function import Function
from ..backends import get_backend


def _check_leaf(t, what="a leaf Variable that requires grad"):
    if t.requires_grad and t.grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError(
            f"{what} is being used in an in-place operation. "
            "Wrap the update in `with core.no_grad():` or operate on a clone."
        )


def _store(t, array):
    """Copy array into t's memory with torch's same-kind casting rule for in-place results."""
    src = array.dtype
    dst = t._data.dtype
    if src != dst:
        src_dt, dst_dt = _dtype.from_numpy_dtype(src), _dtype.from_numpy_dtype(dst)
        if src_dt.category > dst_dt.category:
            raise RuntimeError(
                f"result type {_dtype.scalar_type_name(src_dt)} can't be cast to the desired output type "
                f"{_dtype.scalar_type_name(dst_dt)}"
            )
    if tuple(array.shape) != tuple(t._data.shape):
        try:
            np.broadcast_shapes(array.shape, t._data.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape {list(t._data.shape)} doesn't match the broadcast shape {list(array.shape)}"
            ) from None
        if np.broadcast_shapes(array.shape, t._data.shape) != tuple(t._data.shape):
            raise RuntimeError(
                f"output with shape {list(t._data.shape)} doesn't match the broadcast shape {list(array.shape)}"
            )
    t._data[...] = array
    t._version[0] += 1
    if _function._tracer is not None:
        _function._tracer.write(assign, t, (array,))


def assign(target, value, key=Ellipsis):
    """The raw write `target[key] = value` on arrays, as graph capture records it."""
    target[key] = value
    return target


def apply_inplace(t, fn, *args, **kwargs):
    """Run `fn(t, *args, **kwargs)` functionally and store the result into t."""
    recording = grad_mode.is_grad_enabled() and (
        t.requires_grad or any(isinstance(a, Tensor) and a.requires_grad for a in args)
    )
    if not recording:
        with grad_mode.no_grad():
            result = fn(t, *args, **kwargs)
        _store(t, result._data)
        return t
    _check_leaf(t)
    if t._data.dtype.kind not in "f" and t._data.dtype.name != "bfloat16":
        raise RuntimeError(f"in-place {getattr(fn, '__name__', 'op')} on a {t.dtype} tensor cannot record gradients")
    old = _wrap(t._data.copy())
    old.requires_grad = t.requires_grad
    old.grad_fn = t.grad_fn
    old._output_nr = t._output_nr
    result = fn(old, *args, **kwargs)
    if result._data.dtype != t._data.dtype:
        result = result.to(t.dtype)
    view = t.__dict__.get("_view")
    if view is not None:
        _check_leaf(view[0], "a view of a leaf Variable that requires grad")
    _store(t, result._data)
    # The old values no longer reach the output: the history becomes the result's (none
    # when the new values do not depend on anything that requires grad).
    t.grad_fn = result.grad_fn
    t._output_nr = result._output_nr
    t.requires_grad = result.requires_grad
    if view is not None:
        _rebase_view(t, *view, result)
    return t


class _CopySlices(Function):
    """A view's base after an in-place op on the view: the base with the view's region
    replaced by `region` (the memory already holds it). `remake(tensor)` makes the view
    of any base-shaped tensor, here of the gradient."""

    @staticmethod
    def forward(ctx, base, region, remake):
        ctx.remake = remake
        return base._data

    @staticmethod
    def backward(ctx, grad):
        grad_base = grad.clone()
        with grad_mode.no_grad():
            ctx.remake(grad_base).zero_()      # the old region no longer reaches the output
        return grad_base, ctx.remake(grad), None


def _rebase_view(view, base, remake, region):
    """After an in-place op wrote `region` through `view`: give the base a history in which
    that region comes from the op, and the view a history as a view of the new base."""
    old_base = _wrap(base._data, version=base._version)
    old_base.requires_grad, old_base.grad_fn, old_base._output_nr = base.requires_grad, base.grad_fn, base._output_nr
    new_base = _CopySlices.apply(old_base, region, remake)
    base.grad_fn, base._output_nr, base.requires_grad = new_base.grad_fn, 0, new_base.requires_grad
    remade = remake(base)
    view.grad_fn, view._output_nr, view.requires_grad = remade.grad_fn, remade._output_nr, remade.requires_grad


def write_inplace(t, values):
    """Overwrite t with a host array (random fills, init), never recorded. `values` may be a
    function making the array: a meta tensor, which holds no values, never calls it."""
    _check_leaf(t)
    if t._device.type == "meta":
        t._version[0] += 1
        return t
    array = np.asarray(values() if callable(values) else values).astype(t._data.dtype, copy=False)
    if t._device.type != "cpu":
        array = get_backend(t._device).from_host(array, t._device.index)
    _store(t, array)
    return t
