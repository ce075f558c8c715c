# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Convolutions as im2col + one batched matmul (BLAS), transposed convolutions as matmul + col2im.

conv2d and conv3d (and their transposes) are one N-d implementation; 1-d convolutions run as
2-d ones over a height of 1. Gradients of every order come from Im2Col/Col2Im (mutual
adjoints) and matmul.
"""
import math

from ... import ops
from .vision import Col2Im, Im2Col, ntuple, sliding_count
from ...amp.autocast_mode import autocast_op

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


def _check_conv(input, weight, bias, groups, name, transposed=False):
    if input.dtype != weight.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and weight type ({weight.dtype}) should be the same")
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({input.dtype}) and bias type ({bias.dtype}) should be the same")
    if groups < 1:
        raise RuntimeError("non-positive groups is not supported")
    in_channels = input.shape[1]
    expected = weight.shape[0] if transposed else weight.shape[1] * groups
    if in_channels != expected:
        raise RuntimeError(
            f"Given {'transposed=1, ' if transposed else ''}groups={groups}, weight of size {list(weight.shape)}, "
            f"expected input{list(input.shape)} to have {expected} channels, but got {in_channels} channels instead")
    out_channels = weight.shape[1] * groups if transposed else weight.shape[0]
    if not transposed and out_channels % groups:
        raise RuntimeError("Given groups, expected weight to be divisible by groups")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {out_channels} "
            f"elements, but got bias of size {list(bias.shape)} instead")


def _batched(input, weight, n, name):
    """(N, C, *spatial) input and whether it came unbatched, for an n-d convolution."""
    if input.ndim not in (n + 1, n + 2) or weight.ndim != n + 2:
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input "
                           f"of size: {list(input.shape)}")
    unbatched = input.ndim == n + 1
    return (input.unsqueeze(0) if unbatched else input), unbatched


def _padding_pairs(padding, kernel, dilation, stride):
    """(before, after) per spatial dim, flattened, from an int/tuple or torch's 'same' / 'valid'."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * (2 * n)
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]  # the odd extra goes after, as torch does
        return tuple(pads)
    pads = ntuple(padding, n, "padding")
    if any(p < 0 for p in pads):
        raise RuntimeError("negative padding is not supported")
    return tuple(p for p in pads for _ in (0, 1))


def _conv(input, weight, bias, stride, padding, dilation, groups, n, name):
    """n-d cross-correlation of (N, C, *spatial) (or unbatched) with (O, C/groups, *kernel)."""
    input, unbatched = _batched(input, weight, n, name)
    _check_conv(input, weight, bias, groups, name)
    stride, dilation = ntuple(stride, n, "stride"), ntuple(dilation, n, "dilation")
    kernel = tuple(weight.shape[2:])
    pads = _padding_pairs(padding, kernel, dilation, stride)
    batch, sizes = input.shape[0], tuple(input.shape[2:])
    counts = tuple(sliding_count(sizes[i], kernel[i], dilation[i], pads[2 * i], pads[2 * i + 1], stride[i])
                   for i in range(n))
    if min(counts) < 1:
        padded = " x ".join(str(sizes[i] + pads[2 * i] + pads[2 * i + 1]) for i in range(n))
        effective = " x ".join(str(d * (k - 1) + 1) for k, d in zip(kernel, dilation))
        raise RuntimeError(f"Calculated padded input size per channel: ({padded}). Kernel size: ({effective}). "
                           "Kernel size can't be greater than actual input size")
    cols = Im2Col.apply(input, kernel, dilation, pads, stride, 0.0)  # (N, C*prod(kernel), L)
    out_channels = weight.shape[0]
    if groups == 1:
        out = ops.matmul(weight.reshape(out_channels, -1), cols)
    else:
        cols = cols.reshape(batch, groups, -1, math.prod(counts))
        out = ops.matmul(weight.reshape(groups, out_channels // groups, -1), cols)
    out = out.reshape(batch, out_channels, *counts)
    if bias is not None:
        out = ops.add(out, bias.reshape((1, out_channels) + (1,) * n))
    return out.squeeze(0) if unbatched else out


@autocast_op("conv2d", 3)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of (N, C, H, W) (or unbatched (C, H, W)) with (O, C/groups, kh, kw)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


@autocast_op("conv3d", 3)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-d cross-correlation of (N, C, D, H, W) (or unbatched (C, D, H, W)) with (O, C/groups, kd, kh, kw)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _as_2d_args(value, fill):
    """A 1-d conv argument as the 2-d one over a height of 1."""
    if isinstance(value, str):
        return value
    v = value[0] if isinstance(value, (tuple, list)) else value
    return fill, int(v)


@autocast_op("conv1d", 3)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation of (N, C, L) (or unbatched (C, L)) with (O, C/groups, k)."""
    input, unbatched = _batched(input, weight, 1, "conv1d")
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, _as_2d_args(stride, 1), _as_2d_args(padding, 0),
                 _as_2d_args(dilation, 1), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, n, name):
    """The adjoint of the n-d convolution: (N, Cin, *spatial) with weight (Cin, Cout/groups, *kernel)."""
    input, unbatched = _batched(input, weight, n, name)
    _check_conv(input, weight, bias, groups, name, transposed=True)
    stride, dilation = ntuple(stride, n, "stride"), ntuple(dilation, n, "dilation")
    pads, out_pads = ntuple(padding, n, "padding"), ntuple(output_padding, n, "output_padding")
    if any(op >= max(s, d) for op, s, d in zip(out_pads, stride, dilation)):
        raise RuntimeError("output padding must be smaller than either stride or dilation")
    batch, c_in, sizes = input.shape[0], input.shape[1], tuple(input.shape[2:])
    kernel = tuple(weight.shape[2:])
    c_out = weight.shape[1] * groups
    out_sizes = tuple((s - 1) * st - 2 * p + d * (k - 1) + op + 1
                      for s, st, p, d, k, op in zip(sizes, stride, pads, dilation, kernel, out_pads))
    # columns = W^T x per group, then each column is summed into its output window.
    w_t = weight.reshape(groups, c_in // groups, -1).transpose(-1, -2)  # (G, Cout/G*prod(kernel), Cin/G)
    length = math.prod(sizes)
    cols = ops.matmul(w_t, input.reshape(batch, groups, c_in // groups, length))
    cols = cols.reshape(batch, c_out * math.prod(kernel), length)
    # output_padding extends the far edge: pad after by (p - output_padding) so the windows still count the input.
    window_pads = tuple(v for p, op in zip(pads, out_pads) for v in (p, p - op))
    out = Col2Im.apply(cols, out_sizes, kernel, dilation, window_pads, stride)
    if bias is not None:
        out = ops.add(out, bias.reshape((1, c_out) + (1,) * n))
    return out.squeeze(0) if unbatched else out


@autocast_op("conv_transpose2d", 3)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d: (N, Cin, H, W) with weight (Cin, Cout/groups, kh, kw) → (N, Cout, H', W')."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                           "conv_transpose2d")


@autocast_op("conv_transpose3d", 3)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv3d: (N, Cin, D, H, W) with weight (Cin, Cout/groups, kd, kh, kw) → (N, Cout, D', H', W')."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                           "conv_transpose3d")


@autocast_op("conv_transpose1d", 3)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv1d: (N, Cin, L) with weight (Cin, Cout/groups, k) → (N, Cout, L')."""
    input, unbatched = _batched(input, weight, 1, "conv_transpose1d")
    out = conv_transpose2d(input.unsqueeze(2), weight.unsqueeze(2), bias, _as_2d_args(stride, 1),
                           _as_2d_args(padding, 0), _as_2d_args(output_padding, 0), groups,
                           _as_2d_args(dilation, 1)).squeeze(2)
    return out.squeeze(0) if unbatched else out
