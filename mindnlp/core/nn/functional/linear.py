# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""linear and bilinear.

`linear` is one node: the input's leading dims are folded into one so that forward and
both weight products are single BLAS calls, whatever the batch shape.
"""
import math

import numpy as np

from ... import ops
from ...amp.autocast_mode import autocast_inputs
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import fused_kernel, xp_of
from ...ops.linalg import _matmul_arrays

__all__ = [
    "bilinear", "linear",
]


class _Linear(Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        out_features, in_features = weight.shape
        rows = math.prod(x.shape[:-1])      # not -1: an empty row (in_features 0) leaves it undetermined
        out = _matmul_arrays(xp_of(x), x._data.reshape(rows, in_features), weight._data.T,
                             None if bias is None else bias._data)
        return out.reshape(tuple(x.shape[:-1]) + (out_features,))

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        out_features, in_features = weight.shape
        rows = math.prod(x.shape[:-1])
        grad2d = grad.reshape(rows, out_features)
        gb = ops.sum(grad2d, dim=0) if ctx.needs_input_grad[2] else None
        if ctx.needs_input_grad[0] and ctx.needs_input_grad[1] and not grad_mode.is_grad_enabled() and \
                grad._data.dtype == x._data.dtype == weight._data.dtype == np.float32 and \
                fused_kernel("linear_grads", grad2d) is not None:
            gx, gw = _LinearGrads.apply(grad2d, x.reshape(rows, in_features), weight)
            return gx.reshape(tuple(x.shape)), gw, gb
        gx = ops.matmul(grad2d, weight).reshape(tuple(x.shape)) if ctx.needs_input_grad[0] else None
        gw = ops.matmul(grad2d.t(), x.reshape(rows, in_features)) if ctx.needs_input_grad[1] else None
        return gx, gw, gb


class _LinearGrads(Function):
    """A linear layer's input and weight gradients (grad @ W, grad^T @ x) as one op, so that
    the backend computes the two products at once (cpu_kernels.linear_grads) and a compiled
    backward captures them. Applied only where no graph of the gradients is recorded, so it
    has no backward of its own."""

    @staticmethod
    def forward(ctx, grad, x, weight):
        return fused_kernel("linear_grads", grad)(grad._data, x._data, weight._data)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("linear's fused gradients have no gradient of their own (create_graph composes them)")


def _dtype_name(t):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}.get(
        t.dtype.name, t.dtype.name)


def linear(input, weight, bias=None):
    """y = x W^T + b over the last dim of x; weight is (out_features, in_features)."""
    input, weight, bias = autocast_inputs("linear", input, weight, bias)
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"mat1 and mat2 must have the same dtype, but got {_dtype_name(input)} and {_dtype_name(weight)}")
    if weight.ndim == 1:
        out = ops.matmul(input, weight)
        return out if bias is None else ops.add(out, bias)
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        rows = input.numel() // input.shape[-1] if input.ndim and input.shape[-1] else 1
        cols = input.shape[-1] if input.ndim else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                           f"{weight.shape[1]}x{weight.shape[0]})")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"expected bias to have dtype {input.dtype}, but got {bias.dtype}")
    return _Linear.apply(input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight of shape {list(weight.shape)} does not match inputs of sizes "
                           f"{input1.shape[-1]} and {input2.shape[-1]}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = ops.einsum("bi,oij,bj->bo", x1, weight, x2).reshape(lead + (weight.shape[0],))
    return out if bias is None else ops.add(out, bias)
