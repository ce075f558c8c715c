# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""softmax, log_softmax and softmin, each one fused graph node.

Forward runs on the backend's arrays with the max subtracted first (no overflow) and as few
temporaries as possible. The backward of each op is itself a fused `Function` whose own
backward is written with core ops, so gradients of gradients work to any order.
float16/bfloat16 are computed in float32 and rounded back, as torch's CPU kernels do.
Over the last dim, softmax and its backward use the backend's fused kernels where it has
them; `softmax_array` and the composed backward here are their reference.
"""
import warnings

from ... import ops
from ...autograd.function import Function
from ...ops._helpers import fused_kernel, narrow, normalize_dim, widen, wrap, xp_of
from ...amp.autocast_mode import autocast_op

__all__ = ["softmax", "log_softmax", "softmin"]


def softmax_array(xp, a, dim):
    """softmax of array a along dim, in a single fresh array."""
    out = a - a.max(axis=dim, keepdims=True)
    xp.exp(out, out=out)
    out /= out.sum(axis=dim, keepdims=True)
    return out


def log_softmax_array(xp, a, dim):
    """log_softmax of array a along dim: shifted - log(sum(exp(shifted)))."""
    shifted = a - a.max(axis=dim, keepdims=True)
    lse = xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))
    shifted -= lse
    return shifted


class _SoftmaxBackward(Function):
    """grad_in = y * (g - sum(g * y)): the softmax vector-Jacobian product as one node."""

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        g, p = widen(grad._data), widen(y._data)
        kernel = fused_kernel("softmax_backward", y) if dim == y.ndim - 1 else None
        if kernel is not None:
            out = kernel(g, p)
        else:
            out = g - (g * p).sum(axis=dim, keepdims=True)
            out *= p
        return narrow(out, y._data.dtype)

    @staticmethod
    def backward(ctx, h):
        grad, y = ctx.saved_tensors
        dim = ctx.dim
        hy_sum = ops.sum(ops.mul(h, y), dim=dim, keepdim=True)
        d_grad = ops.mul(y, ops.sub(h, hy_sum)) if ctx.needs_input_grad[0] else None
        d_y = None
        if ctx.needs_input_grad[1]:
            gy_sum = ops.sum(ops.mul(grad, y), dim=dim, keepdim=True)
            d_y = ops.sub(ops.mul(h, ops.sub(grad, gy_sum)), ops.mul(grad, hy_sum))
        return d_grad, d_y, None


class _LogSoftmaxBackward(Function):
    """grad_in = g - exp(y) * sum(g): the log_softmax vector-Jacobian product as one node."""

    @staticmethod
    def forward(ctx, grad, y, dim):
        ctx.save_for_backward(grad, y)
        ctx.dim = dim
        xp = xp_of(y)
        g = widen(grad._data)
        out = xp.exp(widen(y._data))
        out *= g.sum(axis=dim, keepdims=True)
        xp.subtract(g, out, out=out)
        return narrow(out, y._data.dtype)

    @staticmethod
    def backward(ctx, h):
        grad, y = ctx.saved_tensors
        dim = ctx.dim
        p = ops.exp(y)
        d_grad = ops.sub(h, ops.sum(ops.mul(h, p), dim=dim, keepdim=True)) if ctx.needs_input_grad[0] else None
        d_y = None
        if ctx.needs_input_grad[1]:
            d_y = ops.neg(ops.mul(ops.mul(h, p), ops.sum(grad, dim=dim, keepdim=True)))
        return d_grad, d_y, None


class Softmax(Function):
    """softmax(sign * x) along dim; sign = -1 gives softmin with the same single node."""

    @staticmethod
    def forward(ctx, x, dim, sign):
        a = widen(x._data)
        kernel = fused_kernel("softmax", x) if dim == x.ndim - 1 and sign > 0 else None
        probs = kernel(a) if kernel is not None else softmax_array(xp_of(x), -a if sign < 0 else a, dim)
        y = wrap(narrow(probs, x._data.dtype))
        ctx.dim, ctx.sign = dim, sign
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        grad_x = _SoftmaxBackward.apply(grad, y, ctx.dim)
        return (ops.neg(grad_x) if ctx.sign < 0 else grad_x), None, None


class LogSoftmax(Function):
    @staticmethod
    def forward(ctx, x, dim):
        y = wrap(narrow(log_softmax_array(xp_of(x), widen(x._data), dim), x._data.dtype))
        ctx.dim = dim
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _LogSoftmaxBackward.apply(grad, y, ctx.dim), None


def _legacy_softmax_dim(name, ndim):
    """torch's choice when dim is omitted (deprecated): 0 for 0-, 1- and 3-dim inputs, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _prepare(name, input, dim, dtype):
    if dim is None:
        dim = _legacy_softmax_dim(name, input.ndim)
    if dtype is not None:
        input = ops.cast(input, dtype)
    elif not input.is_floating_point():
        raise RuntimeError(f'"{name}_lastdim_kernel_impl" not implemented for \'{input.dtype}\'')
    return input, normalize_dim(dim, input.ndim)


@autocast_op("softmax", 1)
def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim; `dtype` casts the input first (torch's dtype= argument)."""
    input, dim = _prepare("softmax", input, dim, dtype)
    return Softmax.apply(input, dim, 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along dim."""
    input, dim = _prepare("softmin", input, dim, dtype)
    return Softmax.apply(input, dim, -1)


@autocast_op("log_softmax", 1)
def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """x - logsumexp(x) along dim, computed without forming softmax first."""
    input, dim = _prepare("log_softmax", input, dim, dtype)
    return LogSoftmax.apply(input, dim)
