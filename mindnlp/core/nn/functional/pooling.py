# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Max, average and adaptive pooling over windows of (N, C, *spatial) inputs, 1 to 3 spatial dims.

One N-d implementation serves every entry point; 1-d pooling runs as 2-d over a height of 1.
Windows come from Im2Col (padded with -inf for max, 0 for average), so the reductions are
plain core max / sum with their own gradients. Adaptive average pooling is one matmul per
spatial dim with an averaging matrix; adaptive max pooling gathers each (variable-size)
window, padded to the longest by repeating its last element, and takes the max.
"""
import math

import numpy as np

from ... import ops
from ...ops._helpers import wrap, wrap_constant, xp_of
from .vision import Im2Col, ntuple, pair

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d",
    "max_pool2d", "max_pool3d",
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
    """(kernel, stride, padding, dilation, output sizes, Im2Col padding) over input's spatial dims."""
    n = input.ndim - 2
    kernel = ntuple(kernel_size, n, "kernel_size")
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0)
    stride = kernel if no_stride else ntuple(stride, n, "stride")
    padding, dilation = ntuple(padding, n, "padding"), ntuple(dilation, n, "dilation")
    for p, k, d in zip(padding, kernel, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation={d}")
    sizes = tuple(input.shape[2:])
    out = tuple(_pooled_size(*args, ceil_mode) for args in zip(sizes, kernel, stride, padding, dilation))
    if min(out) < 1:
        channels = input.shape[1]
        raise RuntimeError(f"{name}: Given input size: ({'x'.join(str(s) for s in (channels,) + sizes)}). "
                           f"Calculated output size: ({'x'.join(str(s) for s in (channels,) + out)}). "
                           "Output size is too small")
    # Ceil mode may need extra padding after the input for the last (partial) window.
    pads = []
    for size, o, k, s, p, d in zip(sizes, out, kernel, stride, padding, dilation):
        extra = max((o - 1) * s + d * (k - 1) + 1 - (size + 2 * p), 0)
        pads += [p, p + extra]
    return kernel, stride, padding, dilation, out, tuple(pads)


def _as_batched(input, name, spatial):
    """(N, C, *spatial) from a batched or unbatched input; with spatial=1, (N, C, L) as (N, C, 1, L)."""
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


def _flat_positions(xp, picked, window, positions):
    """Flat indices into the spatial volume of each output's chosen window element.

    picked holds, per output, the row-major offset of the chosen element within a window of
    shape `window`; positions[d](o, k) is the input coordinate along dim d of window offset k
    for output o along that dim (numpy arrays), with the input's spatial sizes last.
    """
    n = len(window)
    flat = 0
    for d in range(n):
        offset = (picked // math.prod(window[d + 1:])) % window[d]
        table = xp.asarray(positions[d][0])
        outs = xp.arange(table.shape[0]).reshape((-1,) + (1,) * (n - 1 - d))
        flat = flat * positions[d][1] + table[outs, offset]
    return wrap(flat.astype(np.int64))


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, spatial, name):
    x, unbatched = _as_batched(input, name, spatial)
    if spatial == 1:
        kernel_size, stride, padding, dilation = _height_one(kernel_size, stride, padding, dilation)
    kernel, stride, padding, dilation, out, pads = _pool_geometry(
        x, kernel_size, stride, padding, dilation, ceil_mode, name)
    n, c = x.shape[0], x.shape[1]
    cols = Im2Col.apply(x, kernel, dilation, pads, stride, float("-inf"))
    windows = cols.reshape(n, c, math.prod(kernel), *out)
    values, arg = ops.max(windows, dim=2)
    result = _restore(values, unbatched, spatial)
    if not return_indices:
        return result
    # The window offset of each maximum → its flat position in the input's spatial volume.
    positions = [(np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d, size)
                 for o, s, p, k, d, size in zip(out, stride, padding, kernel, dilation, x.shape[2:])]
    indices = _flat_positions(xp_of(x), arg._data, kernel, positions)
    return result, _restore(indices, unbatched, spatial)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Maximum over (dilated) windows; -inf padding, so padding never wins."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3, "max_pool3d")


def _avg_divisor(size, out, kernel, stride, pad, count_include_pad):
    """Per output position along one dim: window length inside the padded (or bare) input."""
    start = np.arange(out) * stride - pad
    end = np.minimum(start + kernel, size + pad)
    if count_include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, spatial, name):
    x, unbatched = _as_batched(input, name, spatial)
    if spatial == 1:
        kernel_size, stride, padding, _ = _height_one(kernel_size, stride, padding, 1)
    dims = x.ndim - 2
    for p, k in zip(ntuple(padding, dims, "padding"), ntuple(kernel_size, dims, "kernel_size")):
        if p > k // 2:
            raise RuntimeError(f"pad should be at most half of kernel size, but got pad={p} and kernel_size={k}")
    kernel, stride, padding, dilation, out, pads = _pool_geometry(
        x, kernel_size, stride, padding, 1, ceil_mode, name)
    n, c = x.shape[0], x.shape[1]
    cols = Im2Col.apply(x, kernel, dilation, pads, stride, 0.0)
    sums = ops.sum(cols.reshape(n, c, math.prod(kernel), *out), dim=2)
    if divisor_override:
        return _restore(ops.div(sums, float(divisor_override)), unbatched, spatial)
    divisor = np.ones(())
    for args in zip(x.shape[2:], out, kernel, stride, padding):
        divisor = np.multiply.outer(divisor, _avg_divisor(*args, count_include_pad))
    if (divisor == divisor.flat[0]).all():
        # Every window is whole: a Python number, which an export with dynamic sizes keeps.
        return _restore(ops.div(sums, float(divisor.flat[0])), unbatched, spatial)
    # Computed from the sizes only: a captured graph (and an export) keeps it as a constant.
    divisor = wrap_constant(xp_of(x).asarray(divisor.astype(np.float64 if x.dtype.itemsize == 8 else np.float32)))
    return _restore(ops.div(sums, divisor.to(x.dtype)), unbatched, spatial)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over windows; count_include_pad decides whether zero padding counts in the mean."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2,
                     "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3,
                     "avg_pool3d")


# --- adaptive pooling ---------------------------------------------------------------------


def _adaptive_bounds(in_size, out_size):
    """(starts, ends) of the adaptive windows: window i covers [floor(i*in/out), ceil((i+1)*in/out))."""
    i = np.arange(out_size)
    return (i * in_size) // out_size, -(-((i + 1) * in_size) // out_size)


def _adaptive_matrix(in_size, out_size, dtype):
    """(out, in) averaging matrix of the adaptive windows (those of _adaptive_bounds)."""
    m = np.zeros((out_size, in_size), dtype=np.float64)
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -(-((i + 1) * in_size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m.astype(dtype)


def _adaptive_input(input, output_size, n, name):
    """Validate an adaptive pool's input: its spatial sizes and the output sizes (None keeps a size)."""
    if input.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(input.shape)}")
    in_sizes = tuple(input.shape[-n:])
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * n
    if len(sizes) != n:
        raise RuntimeError(f"{name}(): output_size must have {n} elements, got {list(sizes)}")
    return in_sizes, tuple(int(s) if s is not None else int(i) for s, i in zip(sizes, in_sizes))


def _adaptive_avg_pool(input, output_size, n, name):
    """One matmul per spatial dim: the last as x @ A^T, each earlier one as A @ x with the
    dims after it flattened (no reshape when only the last dim follows)."""
    in_sizes, out_sizes = _adaptive_input(input, output_size, n, name)
    xp = xp_of(input)
    np_dtype = np.float64 if input.dtype.itemsize == 8 else np.float32
    x = input
    for d in range(n):
        m = _adaptive_matrix(in_sizes[d], out_sizes[d], np_dtype)
        a = wrap_constant(xp.asarray(m.T if d == n - 1 else m)).to(input.dtype)
        axis = x.ndim - n + d
        if d == n - 1:
            x = ops.matmul(x, a)
        elif d == n - 2:
            x = ops.matmul(a, x)
        else:
            lead, trail = tuple(x.shape[:axis]), tuple(x.shape[axis + 1:])
            x = ops.matmul(a, x.reshape(*lead, in_sizes[d], math.prod(trail))).reshape(*lead, out_sizes[d], *trail)
    return x


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) to a fixed length: out = x @ A^T."""
    return _adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed (oh, ow): out = A_h @ x @ A_w^T."""
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_max_pool(input, output_size, return_indices, n, name):
    in_sizes, out_sizes = _adaptive_input(input, output_size, n, name)
    xp = xp_of(input)
    lead = tuple(input.shape[:input.ndim - n])
    x, positions, longest = input, [], []
    for d, (size, out) in enumerate(zip(in_sizes, out_sizes)):
        start, end = _adaptive_bounds(size, out)
        length = int((end - start).max())
        # Shorter windows repeat their last element, which never changes the (first) maximum.
        table = np.minimum(start[:, None] + np.arange(length)[None, :], end[:, None] - 1)
        positions.append((table, size))
        longest.append(length)
        x = ops.index_select(x, len(lead) + d, wrap(xp.asarray(table.reshape(-1))))
    x = x.reshape(*lead, *(v for o, length in zip(out_sizes, longest) for v in (o, length)))
    k = len(lead)
    x = x.permute(*range(k), *(k + 2 * d for d in range(n)), *(k + 2 * d + 1 for d in range(n)))
    values, arg = ops.max(x.reshape(*lead, *out_sizes, math.prod(longest)), dim=-1)
    if not return_indices:
        return values
    return values, _flat_positions(xp, arg._data, tuple(longest), positions)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Maximum over adaptive windows: output i covers [floor(i*in/out), ceil((i+1)*in/out)) per dim."""
    return _adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")
