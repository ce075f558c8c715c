# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Normalization: layer_norm, rms_norm and group_norm as fused nodes (instance_norm is group_norm
with a group per channel); batch_norm and local_response_norm composed.

The fused forwards compute statistics once on the backend arrays (float16/bfloat16 in
float32); layer_norm and rms_norm use the backend's fused kernel where it has one, with
`_forward_stats` as its reference. Their backwards use the closed-form gradients written
with core ops. When a backward runs without create_graph, the mean and reciprocal std
saved by forward are reused; when it records a graph, they are recomputed from the input
with core ops so that second derivatives see their dependence on x.
"""
import math

import numpy as np

from ... import _dtype, ops
from ..._tensor import _wrap
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import HALF_NP, fused_kernel, narrow, widen, xp_of
from ...amp.autocast_mode import autocast_op
from .vision import pad

__all__ = [
    "batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm", "rms_norm",
]


def _compute_dtype(array):
    return np.float32 if array.dtype in HALF_NP else array.dtype


def _param(t, dtype):
    return None if t is None else t._data.astype(dtype, copy=False)


def _normalize_stats(x, dims, eps, centered, saved):
    """(xhat, rstd) as tensors: differentiable when a graph is being recorded, else from saved arrays."""
    if not grad_mode.is_grad_enabled():
        mean, rstd = saved
        rstd_t = _wrap(rstd.astype(x._data.dtype, copy=False))
        xc = ops.sub(x, _wrap(mean.astype(x._data.dtype, copy=False))) if centered else x
        return ops.mul(xc, rstd_t), rstd_t
    xc = ops.sub(x, ops.mean(x, dim=dims, keepdim=True)) if centered else x
    rstd_t = ops.rsqrt(ops.add(ops.mean(ops.mul(xc, xc), dim=dims, keepdim=True), eps))
    return ops.mul(xc, rstd_t), rstd_t


def _normalized_input_grad(gxhat, xhat, rstd, dims, centered):
    """d(loss)/dx given d(loss)/d(xhat), for xhat = (x - mean) * rstd over `dims`."""
    proj = ops.mul(xhat, ops.mean(ops.mul(gxhat, xhat), dim=dims, keepdim=True))
    inner = ops.sub(gxhat, proj)
    if centered:
        inner = ops.sub(inner, ops.mean(gxhat, dim=dims, keepdim=True))
    return ops.mul(inner, rstd)


def _forward_stats(xp, a, axes, eps, centered):
    mean = a.mean(axis=axes, keepdims=True) if centered else None
    xc = a - mean if centered else a
    var = (xc * xc).mean(axis=axes, keepdims=True)
    rstd = 1.0 / xp.sqrt(var + eps)
    return xc * rstd, (mean if centered else np.zeros((), a.dtype)), rstd


class _LayerNorm(Function):
    """Normalize over the trailing dims `dims`, then scale by weight and shift by bias (both optional)."""

    @staticmethod
    def forward(ctx, x, weight, bias, dims, eps, centered):
        xp = xp_of(x)
        dtype = _compute_dtype(x._data)
        kernel = fused_kernel("layer_norm", x)
        if kernel is not None:      # a half x's out comes in its dtype (the kernel rounds it)
            out, mean, rstd = kernel(x._data, _param(weight, dtype), _param(bias, dtype), eps, centered, len(dims))
            mean = mean if centered else np.zeros((), dtype)
        else:
            a = widen(x._data).astype(dtype, copy=False)
            xhat, mean, rstd = _forward_stats(xp, a, dims, eps, centered)
            out = xhat
            if weight is not None:
                out = out * _param(weight, dtype)
            if bias is not None:
                out = out + _param(bias, dtype)
        ctx.save_for_backward(x, weight)
        ctx.saved_stats = (mean, rstd)
        ctx.config = (dims, eps, centered)
        return narrow(out, x._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        dims, eps, centered = ctx.config
        if not grad_mode.is_grad_enabled():
            fused = _fused_backward(ctx, grad, x, weight, dims, centered)
            if fused is not None:
                return fused
        xhat, rstd = _normalize_stats(x, dims, eps, centered, ctx.saved_stats)
        gxhat = ops.mul(grad, weight) if weight is not None else grad
        gx = _normalized_input_grad(gxhat, xhat, rstd, dims, centered) if ctx.needs_input_grad[0] else None
        gw = ops.mul(grad, xhat) if ctx.needs_input_grad[1] else None
        gb = grad if ctx.needs_input_grad[2] else None
        return gx, gw, gb, None, None, None


def _fused_backward(ctx, grad, x, weight, dims, centered):
    """layer_norm's gradients from the backend's one-pass kernel (float32, no graph of the
    gradients asked for), or None where it has none."""
    if not x._data.dtype == grad._data.dtype == np.float32 or fused_kernel("layer_norm_backward", x) is None:
        return None
    mean, rstd = ctx.saved_stats
    gx, gw, gb = _NormBackward.apply(grad, x, weight, _wrap(mean) if centered else None, _wrap(rstd), len(dims))
    needs = ctx.needs_input_grad
    return (gx if needs[0] else None, gw if needs[1] else None, gb if needs[2] else None, None, None, None)


class _NormBackward(Function):
    """(gx, gw, gb) of layer_norm (mean given) or RMS norm (mean None) in the backend's one
    pass, as an op of its own so that a compiled backward captures it. Applied only where no
    graph of the gradients is recorded, so it has no backward of its own."""

    @staticmethod
    def forward(ctx, grad, x, weight, mean, rstd, n_dims):
        kernel = fused_kernel("layer_norm_backward", x)
        return kernel(grad._data, x._data, None if weight is None else weight._data,
                      None if mean is None else mean._data, rstd._data, mean is not None, n_dims)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("layer_norm's fused gradient has no gradient of its own (create_graph composes it)")


def _trailing_dims(input, normalized_shape, name):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(int(s) for s in normalized_shape)
    k = len(normalized_shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k:]) != normalized_shape:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size{list(input.shape)}"
        )
    return normalized_shape, tuple(range(input.ndim - k, input.ndim))


def _check_param(t, shape, what):
    if t is not None and tuple(t.shape) != shape:
        raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} of shape "
                           f"{list(t.shape)} and normalized_shape = {list(shape)}")


@autocast_op("layer_norm", 1)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    normalized_shape, dims = _trailing_dims(input, normalized_shape, "layer_norm")
    _check_param(weight, normalized_shape, "weight")
    _check_param(bias, normalized_shape, "bias")
    return _LayerNorm.apply(input, weight, bias, dims, float(eps), True)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight; eps defaults to the dtype's machine epsilon (as torch)."""
    normalized_shape, dims = _trailing_dims(input, normalized_shape, "rms_norm")
    _check_param(weight, normalized_shape, "weight")
    if eps is None:
        eps = _dtype.finfo(input.dtype).eps if input.is_floating_point() else 1.1920928955078125e-07
    return _LayerNorm.apply(input, weight, None, dims, float(eps), False)


class _GroupNorm(Function):
    """Normalize (N, C, *) over each group of C/G channels and the spatial dims; per-channel affine."""

    @staticmethod
    def forward(ctx, x, weight, bias, num_groups, eps):
        xp = xp_of(x)
        dtype = _compute_dtype(x._data)
        n, c = x.shape[0], x.shape[1]
        a = widen(x._data).astype(dtype, copy=False).reshape(n, num_groups, -1)
        xhat, mean, rstd = _forward_stats(xp, a, (2,), eps, True)
        out = xhat.reshape(x._data.shape)
        channel_shape = (1, c) + (1,) * (x.ndim - 2)
        if weight is not None:
            out = out * _param(weight, dtype).reshape(channel_shape)
        if bias is not None:
            out = out + _param(bias, dtype).reshape(channel_shape)
        ctx.save_for_backward(x, weight)
        ctx.saved_stats = (mean, rstd)
        ctx.config = (num_groups, eps, channel_shape)
        return narrow(out, x._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        num_groups, eps, channel_shape = ctx.config
        shape = tuple(x.shape)
        grouped = (shape[0], num_groups, -1)
        xhat, rstd = _normalize_stats(x.reshape(grouped), (2,), eps, True, ctx.saved_stats)
        xhat_full = xhat.reshape(shape)
        gxhat = ops.mul(grad, weight.reshape(channel_shape)) if weight is not None else grad
        gx = None
        if ctx.needs_input_grad[0]:
            gx = _normalized_input_grad(gxhat.reshape(grouped), xhat, rstd, (2,), True).reshape(shape)
        reduce_dims = (0,) + tuple(range(2, len(shape)))
        gw = ops.sum(ops.mul(grad, xhat_full), dim=reduce_dims) if ctx.needs_input_grad[1] else None
        gb = ops.sum(grad, dim=reduce_dims) if ctx.needs_input_grad[2] else None
        return gx, gw, gb, None, None


@autocast_op("group_norm", 1)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    channels = input.shape[1]
    if channels % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.ndim != 1 or t.shape[0] != channels):
            raise RuntimeError(
                f"Expected {what} to be a vector of size equal to the number of channels in input, but got "
                f"{what} of shape {list(t.shape)} and input of shape {list(input.shape)}"
            )
    return _GroupNorm.apply(input, weight, bias, int(num_groups), float(eps))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Normalize each channel (dim 1) over the batch and spatial dims.

    In training the batch statistics are used and the running estimates (when given) are
    updated in place with the unbiased variance, as torch does; otherwise the running
    estimates normalize. Composed from core ops, so it differentiates to any order.
    """
    if input.ndim < 2:
        raise ValueError(f"expected 2D or more input (got {input.ndim}D input)")
    channels = input.shape[1]
    reduce_dims = (0,) + tuple(range(2, input.ndim))
    count = input.numel() // channels
    if training and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    shape = (1, channels) + (1,) * (input.ndim - 2)
    if training:
        mean = ops.mean(input, dim=reduce_dims, keepdim=True)
        centered = ops.sub(input, mean)
        var = ops.mean(ops.mul(centered, centered), dim=reduce_dims, keepdim=True)
        if running_mean is not None or running_var is not None:
            with grad_mode.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(ops.mul(mean.detach().reshape(channels), momentum))
                if running_var is not None:
                    unbiased = ops.mul(var.detach().reshape(channels), count / (count - 1))
                    running_var.mul_(1 - momentum).add_(ops.mul(unbiased, momentum))
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        mean = running_mean.reshape(shape)
        centered = ops.sub(input, mean)
        var = running_var.reshape(shape)
    out = ops.mul(centered, ops.rsqrt(ops.add(var, eps)))
    if weight is not None:
        out = ops.mul(out, weight.reshape(shape))
    if bias is not None:
        out = ops.add(out, bias.reshape(shape))
    return out


def _repeated_size(t, what, batch, expected):
    """torch's check of a per-channel vector that instance_norm repeats over the batch."""
    if t is not None and t.numel() * batch != expected:
        raise RuntimeError(f"{what} should contain {expected} elements not {t.numel() * batch}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial dims, then a per-channel affine map.

    With use_input_stats the sample's own statistics normalize (group_norm with one group per
    channel) and running estimates, when given, move towards the batch average of the
    per-sample mean and unbiased variance; otherwise the running estimates normalize.
    """
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    batch, channels = input.shape[0], input.shape[1]
    for t, what in ((weight, "weight"), (bias, "bias"), (running_mean, "running_mean"),
                    (running_var, "running_var")):
        _repeated_size(t, what, batch, batch * channels)
    shape = (1, channels) + (1,) * (input.ndim - 2)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
        out = ops.mul(ops.sub(input, running_mean.reshape(shape)), ops.rsqrt(ops.add(running_var.reshape(shape), eps)))
        if weight is not None:
            out = ops.mul(out, weight.reshape(shape))
        return ops.add(out, bias.reshape(shape)) if bias is not None else out
    if running_mean is not None or running_var is not None:
        with grad_mode.no_grad():
            dims = tuple(range(2, input.ndim))
            count = math.prod(input.shape[2:])
            mean = ops.mean(input.detach(), dim=dims)
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(ops.mul(ops.mean(mean, dim=0), momentum))
            if running_var is not None:
                centered = ops.sub(input.detach(), mean.reshape(mean.shape + (1,) * len(dims)))
                unbiased = ops.div(ops.sum(ops.mul(centered, centered), dim=dims), count - 1)
                running_var.mul_(1 - momentum).add_(ops.mul(ops.mean(unbiased, dim=0), momentum))
    return _GroupNorm.apply(input, weight, bias, channels, float(eps))


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta.

    The window around channel c spans channels c - size//2 .. c + (size-1)//2, zero outside,
    and its mean always divides by `size` (torch's average pooling over zero padding).
    """
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = ops.mul(input, input)
    padded = pad(squares, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    window = padded.narrow(1, 0, channels)
    for offset in range(1, size):
        window = ops.add(window, padded.narrow(1, offset, channels))
    div = ops.pow(ops.add(ops.mul(window, alpha / size), k), beta)
    return ops.div(input, div)
