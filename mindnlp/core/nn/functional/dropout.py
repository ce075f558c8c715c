# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Dropout: zero random elements (or whole channels) in training and rescale the rest.

Masks are drawn from `core.random`, so `core.manual_seed` makes them reproducible. On the
CPU with numba, one draw of the generator keys a stream compiled code expands into the
mask (core.backends.cpu_jit_random); elsewhere each element is a float draw compared with p.
"""
import math

import numpy as np

from ... import random
from ...backends import cpu_jit
from ..._tensor import _wrap
from ...autograd.function import Function
from ...ops import mul
from ...ops.inplace import apply_inplace

__all__ = [
    "alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout",
]

_SELU_NEG_SATURATION = 1.7580993408473766  # -scale * alpha of SELU


class _MaskedScale(Function):
    """x * mask, with mask a constant array (zeros and the keep-rescale factor)."""

    @staticmethod
    def forward(ctx, x, mask):
        ctx.mask = mask
        return x._data * mask

    @staticmethod
    def backward(ctx, grad):
        return mul(grad, _wrap(ctx.mask)), None


class _Dropout(Function):
    """x times a keep-mask scaled by 1 / (1 - p). The mask is drawn inside the op, so that a
    graph capture records one random op that a training replay draws again in order."""

    @staticmethod
    def forward(ctx, x, p, mask_shape):
        scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
        ctx.mask = _keep_mask(x, p, mask_shape, scale)
        return x._data * ctx.mask

    @staticmethod
    def backward(ctx, grad):
        return mul(grad, _wrap(ctx.mask)), None, None


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def keep_mask(shape, p, dtype, device, kept=1.0):
    """An array of `shape` holding `kept` and 0 in `dtype` (a NumPy dtype) on `device`: each
    entry kept with probability 1 - p."""
    dtype = np.dtype(dtype)
    compiled = cpu_jit.random_masks() if device.type == "cpu" and dtype in (np.float32, np.float64) else None
    if compiled is not None:
        return compiled.keep_mask(shape, dtype, random._draw_key(), p, kept)
    draws = random.rand(*shape, dtype=None, device=device)
    keep = (draws._data >= p).astype(dtype)
    return keep if kept == 1.0 else keep * dtype.type(kept)


def _keep_mask(input, p, mask_shape, kept=1.0):
    """keep_mask in input's dtype, on its device."""
    return keep_mask(mask_shape, p, input._data.dtype, input.device, kept)


def _apply(input, p, mask_shape, inplace):
    fn = (lambda t: _Dropout.apply(t, p, mask_shape))
    return apply_inplace(input, fn) if inplace else fn(input)


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    return _apply(input, p, tuple(input.shape), inplace)


def _feature_dropout(input, p, training, inplace, batched_ndim, name):
    """Drop whole channels: the mask has size 1 in every dim after the channel dim."""
    _check_p(p)
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise RuntimeError(f"{name}: Expected {batched_ndim - 1}D or {batched_ndim}D input, but received a "
                           f"{input.ndim}D input")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    channel_dims = 1 if input.ndim == batched_ndim - 1 else 2
    mask_shape = tuple(input.shape[:channel_dims]) + (1,) * (input.ndim - channel_dims)
    return _apply(input, p, mask_shape, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 5, "dropout3d")


def _alpha_dropout(input, p, mask_shape, inplace):
    """Dropped units (elements or, with a (N, C, 1, ...) mask, whole channels) take SELU's
    saturation value, then an affine map restores the input's mean and variance (torch's
    formula); p = 1 drops everything to zero, as torch does."""
    if p == 1.0:
        fn = (lambda t: mul(t, 0.0))
        return apply_inplace(input, fn) if inplace else fn(input)
    keep = _keep_mask(input, p, mask_shape)
    a = 1.0 / math.sqrt((_SELU_NEG_SATURATION ** 2 * p + 1.0) * (1.0 - p))
    offset = ((keep - 1.0) * _SELU_NEG_SATURATION * a + _SELU_NEG_SATURATION * a * p).astype(input._data.dtype)
    fn = (lambda t: _MaskedScale.apply(t, keep * a) + _wrap(offset))
    return apply_inplace(input, fn) if inplace else fn(input)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: keeps self-normalizing activations' mean and variance."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    return _alpha_dropout(input, p, tuple(input.shape), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels: one draw per (sample, channel) of (N, C, *) inputs."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _alpha_dropout(input, p, tuple(input.shape[:2]) + (1,) * (input.ndim - 2), inplace)
