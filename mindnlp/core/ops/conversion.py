# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Dtype casts, device moves and copies: differentiable, gradients flow back converted."""
import numpy as np

from .. import _dtype
from ..autograd.function import Function
from ..backends import get_backend
from ._helpers import is_float_array, narrow, xp_of


class Cast(Function):
    @staticmethod
    def forward(ctx, x, dtype):
        ctx.src = x._data.dtype
        return narrow(x._data, dtype.np_dtype)

    @staticmethod
    def backward(ctx, grad):
        return cast(grad, _dtype.from_numpy_dtype(ctx.src)) if is_float_array(np.empty(0, ctx.src)) else None, None


def cast(x, dtype):
    dtype = _dtype.as_dtype(dtype)
    if x._data.dtype == dtype.np_dtype:
        return x
    return Cast.apply(x, dtype)


class ToDevice(Function):
    @staticmethod
    def forward(ctx, x, device):
        ctx.src = x._device
        host = get_backend(x._device).to_host(x._data)
        return get_backend(device).from_host(host, device.index)

    @staticmethod
    def backward(ctx, grad):
        return to_device(grad, ctx.src), None


def to_device(x, device):
    if x._device == device:
        return x
    return ToDevice.apply(x, device)


class Clone(Function):
    @staticmethod
    def forward(ctx, x):
        return xp_of(x).array(x._data, copy=True, order="C")

    @staticmethod
    def backward(ctx, grad):
        return grad


def clone(x, memory_format=None):
    return Clone.apply(x)


def contiguous(x, memory_format=None):
    if x._data.flags.c_contiguous:
        return x
    return Clone.apply(x)
