# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Max, average and adaptive average pooling over windows of (N, C, H, W) or (N, C, L) inputs.

Windows come from Im2Col (padded with -inf for max, 0 for average), so the reductions are
plain core max / sum with their own gradients. Adaptive average pooling is two matmuls with
averaging matrices, one per spatial dim.
"""
import numpy as np

from ... import ops
from ...ops._helpers import wrap, wrap_constant, xp_of
from .vision import Im2Col, pair

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d",
]


def _pooled_size(size, kernel, stride, pad, dilation, ceil_mode):
    """torch's pooling output size; in ceil mode the last window must start inside the input."""
    effective = dilation * (kernel - 1) + 1
    span = size + 2 * pad - effective
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _pool_geometry(input, kernel_size, stride, padding, dilation, ceil_mode, name):
    kernel = pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else pair(stride)
    padding, dilation = pair(padding, "padding"), pair(dilation, "dilation")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    h, w = input.shape[-2:]
    out = (_pooled_size(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode),
           _pooled_size(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode))
    if out[0] < 1 or out[1] < 1:
        raise RuntimeError(f"{name}: Given input size: ({input.shape[-3]}x{h}x{w}). Calculated output size: "
                           f"({input.shape[-3]}x{out[0]}x{out[1]}). Output size is too small")
    # Ceil mode may need extra padding after the input for the last (partial) window.
    pads = []
    for size, o, k, s, p, d in zip((h, w), out, kernel, stride, padding, dilation):
        extra = max((o - 1) * s + d * (k - 1) + 1 - (size + 2 * p), 0)
        pads += [p, p + extra]
    return kernel, stride, padding, dilation, out, tuple(pads)


def _as_4d(input, name, spatial):
    """Pool (N, C, H, W) / (C, H, W), or with spatial=1 (N, C, L) / (C, L) as (N, C, 1, L)."""
    batched_ndim = spatial + 2
    if input.ndim not in (batched_ndim - 1, batched_ndim):
        raise RuntimeError(f"{name}: Expected {batched_ndim - 1}D or {batched_ndim}D input, "
                           f"but got input of size: {list(input.shape)}")
    unbatched = input.ndim == batched_ndim - 1
    x = input.unsqueeze(0) if unbatched else input
    if spatial == 1:
        x = x.unsqueeze(2)
    return x, unbatched


def _restore(out, unbatched, spatial):
    if spatial == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def _height_one(kernel_size, stride, padding, dilation):
    """1-d pooling arguments as 2-d ones over a height of 1."""
    stride = None if stride is None or (isinstance(stride, (tuple, list)) and not stride) else (1, pair(stride)[0])
    return (1, pair(kernel_size)[0]), stride, (0, pair(padding)[0]), (1, pair(dilation)[0])


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, spatial, name):
    x, unbatched = _as_4d(input, name, spatial)
    if spatial == 1:
        kernel_size, stride, padding, dilation = _height_one(kernel_size, stride, padding, dilation)
    kernel, stride, padding, dilation, (oh, ow), pads = _pool_geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode, name)
    n, c, h, w = x.shape
    cols = Im2Col.apply(x, kernel, dilation, pads, stride, float("-inf"))
    windows = cols.reshape(n, c, kernel[0] * kernel[1], oh, ow)
    values, arg = ops.max(windows, dim=2)
    out = _restore(values, unbatched, spatial)
    if not return_indices:
        return out
    # The window offset of each maximum → its flat position in the (H, W) input plane.
    xp = xp_of(x)
    k = arg._data
    rows = xp.arange(oh).reshape(oh, 1) * stride[0] - padding[0] + (k // kernel[1]) * dilation[0]
    cols_ = xp.arange(ow).reshape(1, ow) * stride[1] - padding[1] + (k % kernel[1]) * dilation[1]
    indices = wrap((rows * w + cols_).astype(np.int64))
    return out, _restore(indices, unbatched, spatial)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maximum over (dilated) windows; -inf padding, so padding never wins."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def _avg_divisor(size, out, kernel, stride, pad, count_include_pad):
    """Per output position along one dim: window length inside the padded (or bare) input."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, spatial, name):
    x, unbatched = _as_4d(input, name, spatial)
    if spatial == 1:
        kernel_size, stride, padding, _ = _height_one(kernel_size, stride, padding, 1)
    for p, k in zip(pair(padding), pair(kernel_size)):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p} and kernel_size={k}")
    kernel, stride, padding, dilation, (oh, ow), pads = _pool_geometry(
        x, kernel_size, stride, padding, 1, ceil_mode, name)
    n, c, h, w = x.shape
    cols = Im2Col.apply(x, kernel, dilation, pads, stride, 0.0)
    sums = ops.sum(cols.reshape(n, c, kernel[0] * kernel[1], oh, ow), dim=2)
    if divisor_override:
        return _restore(ops.div(sums, float(divisor_override)), unbatched, spatial)
    div_h = _avg_divisor(h, oh, kernel[0], stride[0], padding[0], count_include_pad)
    div_w = _avg_divisor(w, ow, kernel[1], stride[1], padding[1], count_include_pad)
    divisor = np.outer(div_h, div_w)
    if (divisor == divisor.flat[0]).all():
        # Every window is whole: a Python number, which an export with dynamic sizes keeps.
        return _restore(ops.div(sums, float(divisor.flat[0])), unbatched, spatial)
    # Computed from the sizes only: a captured graph (and an export) keeps it as a constant.
    divisor = wrap_constant(xp_of(x).asarray(divisor.astype(np.float64 if x.dtype.itemsize == 8 else np.float32)))
    return _restore(ops.div(sums, divisor.to(x.dtype)), unbatched, spatial)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows; count_include_pad decides whether zero padding counts in the mean."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def _adaptive_matrix(in_size, out_size, dtype):
    """(out, in) averaging matrix: output i covers [floor(i*in/out), ceil((i+1)*in/out))."""
    m = np.zeros((out_size, in_size), dtype=np.float64)
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -(-((i + 1) * in_size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m.astype(dtype)


def _adaptive_sizes(output_size, in_sizes):
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * len(in_sizes)
    return tuple(int(s) if s is not None else int(i) for s, i in zip(sizes, in_sizes))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (oh, ow): out = A_h @ x @ A_w^T."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}")
    h, w = input.shape[-2:]
    oh, ow = _adaptive_sizes(output_size, (h, w))
    xp = xp_of(input)
    np_dtype = np.float64 if input.dtype.itemsize == 8 else np.float32
    a_h = wrap_constant(xp.asarray(_adaptive_matrix(h, oh, np_dtype))).to(input.dtype)
    a_w = wrap_constant(xp.asarray(_adaptive_matrix(w, ow, np_dtype).T)).to(input.dtype)
    return ops.matmul(ops.matmul(a_h, input), a_w)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) to a fixed length: out = x @ A^T."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_avg_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}")
    (length,) = _adaptive_sizes(output_size, (input.shape[-1],))
    np_dtype = np.float64 if input.dtype.itemsize == 8 else np.float32
    a = wrap_constant(xp_of(input).asarray(_adaptive_matrix(input.shape[-1], length, np_dtype).T)).to(input.dtype)
    return ops.matmul(input, a)
