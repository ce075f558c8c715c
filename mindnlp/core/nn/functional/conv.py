# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Convolutions as im2col + one batched matmul (BLAS), transposed convolutions as matmul + col2im.

1-d convolutions run as 2-d ones over a height of 1. Gradients of every order come from
Im2Col/Col2Im (mutual adjoints) and matmul.
"""
from ... import ops
from .vision import Col2Im, Im2Col, pair, sliding_count
from ...amp.autocast_mode import autocast_op

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]


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


def _padding_pairs(padding, kernel, dilation, stride):
    """(top, bottom, left, right) from an int/pair or torch's 'same' / 'valid'."""
    if isinstance(padding, str):
        if padding == "valid":
            return 0, 0, 0, 0
        if padding != "same":
            raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]  # the odd extra goes after, as torch does
        return tuple(pads)
    ph, pw = pair(padding, "padding")
    if ph < 0 or pw < 0:
        raise RuntimeError("negative padding is not supported")
    return ph, ph, pw, pw


@autocast_op("conv2d", 3)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-d cross-correlation of (N, C, H, W) (or unbatched (C, H, W)) with (O, C/groups, kh, kw)."""
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != 4 or weight.ndim != 4:
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: {list(input.shape)}")
    _check_conv(input, weight, bias, groups, "conv2d")
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
    kernel = (weight.shape[2], weight.shape[3])
    pads = _padding_pairs(padding, kernel, dilation, stride)
    n, c, h, w = input.shape
    oh = sliding_count(h, kernel[0], dilation[0], pads[0], pads[1], stride[0])
    ow = sliding_count(w, kernel[1], dilation[1], pads[2], pads[3], stride[1])
    if oh < 1 or ow < 1:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h + pads[0] + pads[1]} x {w + pads[2] + pads[3]}). "
            f"Kernel size: ({dilation[0] * (kernel[0] - 1) + 1} x {dilation[1] * (kernel[1] - 1) + 1}). "
            "Kernel size can't be greater than actual input size")
    cols = Im2Col.apply(input, kernel, dilation, pads, stride, 0.0)  # (N, C*kh*kw, L)
    out_channels = weight.shape[0]
    if groups == 1:
        out = ops.matmul(weight.reshape(out_channels, -1), cols)
    else:
        cols = cols.reshape(n, groups, -1, oh * ow)
        out = ops.matmul(weight.reshape(groups, out_channels // groups, -1), cols)
    out = out.reshape(n, out_channels, oh, ow)
    if bias is not None:
        out = ops.add(out, bias.reshape(1, out_channels, 1, 1))
    return out.squeeze(0) if unbatched else out


def _as_2d_args(value, fill):
    """A 1-d conv argument as the 2-d one over a height of 1."""
    if isinstance(value, str):
        return value
    v = value[0] if isinstance(value, (tuple, list)) else value
    return fill, int(v)


@autocast_op("conv1d", 3)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-d cross-correlation of (N, C, L) (or unbatched (C, L)) with (O, C/groups, k)."""
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    if input.ndim != 3 or weight.ndim != 3:
        raise RuntimeError(
            f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: {list(input.shape)}")
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, _as_2d_args(stride, 1), _as_2d_args(padding, 0),
                 _as_2d_args(dilation, 1), groups).squeeze(2)
    return out.squeeze(0) if unbatched else out


@autocast_op("conv_transpose2d", 3)
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv2d: (N, Cin, H, W) with weight (Cin, Cout/groups, kh, kw) → (N, Cout, H', W')."""
    unbatched = input.ndim == 3
    if unbatched:
        input = input.unsqueeze(0)
    _check_conv(input, weight, bias, groups, "conv_transpose2d", transposed=True)
    stride, dilation = pair(stride, "stride"), pair(dilation, "dilation")
    (ph, pw), (oph, opw) = pair(padding, "padding"), pair(output_padding, "output_padding")
    if oph >= max(stride[0], dilation[0]) or opw >= max(stride[1], dilation[1]):
        raise RuntimeError("output padding must be smaller than either stride or dilation")
    n, c_in, h, w = input.shape
    kh, kw = weight.shape[2], weight.shape[3]
    c_out = weight.shape[1] * groups
    out_h = (h - 1) * stride[0] - 2 * ph + dilation[0] * (kh - 1) + oph + 1
    out_w = (w - 1) * stride[1] - 2 * pw + dilation[1] * (kw - 1) + opw + 1
    # columns = W^T x per group, then each column is summed into its output window.
    w_t = weight.reshape(groups, c_in // groups, -1).transpose(-1, -2)  # (G, Cout/G*kh*kw, Cin/G)
    cols = ops.matmul(w_t, input.reshape(n, groups, c_in // groups, h * w)).reshape(n, c_out * kh * kw, h * w)
    # output_padding extends the far edge: pad after by (p - output_padding) so the windows still count h x w.
    out = Col2Im.apply(cols, (out_h, out_w), (kh, kw), dilation, (ph, ph - oph, pw, pw - opw), stride)
    if bias is not None:
        out = ops.add(out, bias.reshape(1, c_out, 1, 1))
    return out.squeeze(0) if unbatched else out


@autocast_op("conv_transpose1d", 3)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The adjoint of conv1d: (N, Cin, L) with weight (Cin, Cout/groups, k) → (N, Cout, L')."""
    unbatched = input.ndim == 2
    if unbatched:
        input = input.unsqueeze(0)
    out = conv_transpose2d(input.unsqueeze(2), weight.unsqueeze(2), bias, _as_2d_args(stride, 1),
                           _as_2d_args(padding, 0), _as_2d_args(output_padding, 0), groups,
                           _as_2d_args(dilation, 1)).squeeze(2)
    return out.squeeze(0) if unbatched else out
