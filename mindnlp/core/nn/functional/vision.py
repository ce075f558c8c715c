# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Spatial ops: pad, interpolate, unfold/fold (im2col/col2im), pixel_shuffle.

Im2Col and Col2Im are the two adjoint linear maps that convolution and pooling are built on:
each is the other's backward, so everything built from them (plus matmul) has gradients of
any order. They work over any number of spatial dims (1-d callers use a height of 1, so their
graphs stay 2-d) and copy one strided slice per kernel offset, never a Python loop over pixels.
"""
import functools
import itertools
import math

import numpy as np

from ... import ops
from ...autograd.function import Function
from ...ops._helpers import wrap, xp_of

__all__ = ["channel_shuffle", "fold", "interpolate", "pad", "pixel_shuffle", "pixel_unshuffle", "unfold", "upsample"]


def ntuple(value, n, name="argument"):
    """An int or a 1/n-sequence as an n-tuple of ints."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return (int(value[0]),) * n
        if len(value) != n:
            raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {value}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def pair(value, name="argument"):
    """An int or a 1/2-sequence as a pair of ints."""
    return ntuple(value, 2, name)


def sliding_count(size, kernel, dilation, pad_before, pad_after, stride):
    """How many windows fit along one dim of a padded input."""
    return (size + pad_before + pad_after - dilation * (kernel - 1) - 1) // stride + 1


_ALL = slice(None)


@functools.lru_cache(maxsize=512)
def _window_plan(sizes, kernel, dilation, padding, stride):
    """The geometry of sliding windows over (N, C, *sizes), computed once per shape.

    Returns the window count per dim, the padded buffer's shape, the index of the input
    inside that buffer, and for every kernel offset (row-major) the pair (its index in the
    columns, its strided slice of the padded buffer). A negative after-padding (transposed
    convolution's output_padding) only means fewer windows: the buffer always holds the
    whole input. Cached because a model calls the same few geometries on every step, and the
    Python work of building the indices rivals the copies for small inputs.
    """
    counts = tuple(sliding_count(size, k, d, padding[2 * i], padding[2 * i + 1], s)
                   for i, (size, k, d, s) in enumerate(zip(sizes, kernel, dilation, stride)))
    padded = tuple(size + padding[2 * i] + max(padding[2 * i + 1], 0) for i, size in enumerate(sizes))
    inside = (_ALL, _ALL) + tuple(slice(padding[2 * i], padding[2 * i] + size) for i, size in enumerate(sizes))
    slices = [[slice(i * d, i * d + s * (o - 1) + 1, s) for i in range(k)]
              for k, d, s, o in zip(kernel, dilation, stride, counts)]
    offsets = tuple(((_ALL, _ALL) + offset, (_ALL, _ALL) + window)
                    for offset, window in zip(itertools.product(*(range(k) for k in kernel)),
                                              itertools.product(*slices)))
    return counts, padded, inside, offsets


class Im2Col(Function):
    """(N, C, *spatial) → (N, C*prod(kernel), prod(windows)): every window of the padded input as a column.

    kernel, dilation and stride have one entry per spatial dim, padding two (before, after);
    `fill` is the value of the padded border (0 for convolution, -inf for max pooling). Windows
    are ordered row-major, channels outermost, as torch's unfold lays them out.
    """

    @staticmethod
    def forward(ctx, x, kernel, dilation, padding, stride, fill):
        xp = xp_of(x)
        a = x._data
        n, c, *sizes = a.shape
        sizes = tuple(sizes)
        counts, padded_shape, inside, offsets = _window_plan(sizes, tuple(kernel), tuple(dilation), tuple(padding),
                                                             tuple(stride))
        if any(padding):
            padded = xp.full((n, c) + padded_shape, fill, dtype=a.dtype)
            padded[inside] = a
        else:
            padded = a
        cols = xp.empty((n, c) + tuple(kernel) + counts, dtype=a.dtype)
        for offset, window in offsets:
            cols[offset] = padded[window]
        ctx.args = (sizes, kernel, dilation, padding, stride)
        return cols.reshape(n, c * math.prod(kernel), math.prod(counts))

    @staticmethod
    def backward(ctx, grad):
        return Col2Im.apply(grad, *ctx.args), None, None, None, None, None


class Col2Im(Function):
    """(N, C*prod(kernel), prod(windows)) → (N, C, *output_size): sum every column back into its window (fold)."""

    @staticmethod
    def forward(ctx, cols, output_size, kernel, dilation, padding, stride):
        xp = xp_of(cols)
        a = cols._data
        counts, padded_shape, inside, offsets = _window_plan(tuple(output_size), tuple(kernel), tuple(dilation),
                                                             tuple(padding), tuple(stride))
        n = a.shape[0]
        c = a.shape[1] // math.prod(kernel)
        blocks = a.reshape((n, c) + tuple(kernel) + counts)
        padded = xp.zeros((n, c) + padded_shape, dtype=a.dtype)
        for offset, window in offsets:
            padded[window] += blocks[offset]
        ctx.args = (kernel, dilation, padding, stride)
        return padded[inside].copy()

    @staticmethod
    def backward(ctx, grad):
        kernel, dilation, padding, stride = ctx.args
        return Im2Col.apply(grad, kernel, dilation, padding, stride, 0.0), None, None, None, None, None


def _unbatched(input, batched_ndim, name):
    if input.ndim == batched_ndim - 1:
        return input.unsqueeze(0), True
    if input.ndim != batched_ndim:
        raise RuntimeError(
            f"{name}: Expected {batched_ndim - 1}D (unbatched) or {batched_ndim}D (batched) input, "
            f"but got input of size: {list(input.shape)}")
    return input, False


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks: (N, C, H, W) → (N, C * kh * kw, L) (torch.nn.functional.unfold)."""
    if input.ndim not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    x, unbatched = _unbatched(input, 4, "unfold")
    ph, pw = pair(padding, "padding")
    out = Im2Col.apply(x, pair(kernel_size), pair(dilation), (ph, ph, pw, pw), pair(stride), 0.0)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum sliding blocks back: (N, C * kh * kw, L) → (N, C, H, W) (torch.nn.functional.fold)."""
    x, unbatched = _unbatched(input, 3, "fold")
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (pair(output_size), pair(kernel_size), pair(dilation),
                                                      pair(padding), pair(stride))
    if x.shape[1] % (kh * kw):
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={x.shape[1]} and kernel_size=({kh}, {kw})")
    blocks_h, blocks_w = sliding_count(h, kh, dh, ph, ph, sh), sliding_count(w, kw, dw, pw, pw, sw)
    if x.shape[2] != blocks_h * blocks_w:
        raise RuntimeError(
            f"Given output_size=({h}, {w}), kernel_size=({kh}, {kw}), dilation=({dh}, {dw}), padding=({ph}, {pw}), "
            f"stride=({sh}, {sw}), expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {blocks_h} * {blocks_w} = {blocks_h * blocks_w}, but got input.size(2)={x.shape[2]}.")
    out = Col2Im.apply(x, (h, w), (kh, kw), (dh, dw), (ph, ph, pw, pw), (sh, sw))
    return out.squeeze(0) if unbatched else out


# --- pad ----------------------------------------------------------------------------------


class ConstantPad(Function):
    """Pad with a constant; pads are (before, after) per dim, non-negative (crops come first)."""

    @staticmethod
    def forward(ctx, x, pads, value):
        xp = xp_of(x)
        a = x._data
        shape = tuple(s + b + e for s, (b, e) in zip(a.shape, pads))
        out = xp.full(shape, value, dtype=a.dtype)
        ctx.key = tuple(slice(b, b + s) for s, (b, _) in zip(a.shape, pads))
        out[ctx.key] = a
        return out

    @staticmethod
    def backward(ctx, grad):
        return ops.getitem(grad, ctx.key), None, None


def _edge_indices(xp, size, before, after, mode):
    """Source index along one dim for reflect / replicate / circular padding."""
    idx = np.arange(-before, size + after)
    if mode == "reflect":
        period = 2 * (size - 1)
        idx = np.abs(idx) if period == 0 else np.abs(idx) % period
        idx = np.where(idx >= size, period - idx, idx)
    elif mode == "replicate":
        idx = np.clip(idx, 0, size - 1)
    else:
        idx = idx % size
    return wrap(xp.asarray(idx.astype(np.int64)))


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: `pad` lists (before, after) pairs starting from the last dim.

    constant pads may be negative (crop); reflect mirrors without repeating the edge,
    replicate repeats the edge, circular wraps around.
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    pairs = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        pairs[input.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    if mode == "constant":
        if any(b < 0 or e < 0 for b, e in pairs):
            crop = tuple(slice(max(-b, 0), s - max(-e, 0)) for s, (b, e) in zip(input.shape, pairs))
            input = ops.getitem(input, crop)
            pairs = [(max(b, 0), max(e, 0)) for b, e in pairs]
        return ConstantPad.apply(input, tuple(pairs), 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value not in (None, 0, 0.0):
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    xp = xp_of(input)
    out = input
    for dim, (before, after) in enumerate(pairs):
        if before == 0 and after == 0:
            continue
        size = input.shape[dim]
        if before < 0 or after < 0:
            raise RuntimeError(f"negative padding is not supported for mode {mode}")
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                f"padding ({before}, {after}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (before > size or after > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out = ops.index_select(out, dim, _edge_indices(xp, size, before, after, mode))
    return out


# --- interpolate --------------------------------------------------------------------------


def _source_scale(in_size, out_size, scale_factor, align_corners):
    """The output → input coordinate ratio torch uses (area_pixel_compute_scale)."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None:
        return 1.0 / scale_factor
    return in_size / out_size


def _linear_matrix(in_size, out_size, scale_factor, align_corners, dtype):
    """(out, in) matrix of linear-interpolation weights along one dim."""
    scale = _source_scale(in_size, out_size, scale_factor, align_corners)
    dst = np.arange(out_size, dtype=np.float64)
    src = dst * scale if align_corners else np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = (src - lo).astype(np.float32).astype(np.float64)
    m = np.zeros((out_size, in_size), dtype=np.float64)
    np.add.at(m, (np.arange(out_size), lo), 1.0 - frac)
    np.add.at(m, (np.arange(out_size), hi), frac)
    return m.astype(dtype)


def _nearest_indices(in_size, out_size, scale_factor, exact):
    # float32 arithmetic, as torch's kernels compute the source index.
    scale = np.float32(_source_scale(in_size, out_size, scale_factor, False))
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * scale) if exact else np.floor(dst * scale)
    return np.minimum(src.astype(np.int64), in_size - 1)


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (all dims after the first two) as torch does.

    nearest / nearest-exact pick source pixels; linear / bilinear / trilinear are separable,
    applied one dim at a time as a matmul with an (out, in) weight matrix; area is adaptive
    average pooling.
    """
    n_spatial = input.ndim - 2
    if n_spatial < 1:
        raise ValueError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D)")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if mode in _LINEAR_MODES and _LINEAR_MODES[mode] != n_spatial:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {_LINEAR_MODES[mode] + 2}D input")
    if (size is None) == (scale_factor is None):
        raise ValueError("either size or scale_factor should be defined" if size is None
                         else "only one of size or scale_factor should be defined")
    in_sizes = tuple(input.shape[2:])
    if size is not None:
        out_sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * n_spatial
        if len(out_sizes) != n_spatial:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(in_sizes)} and output size of {list(out_sizes)}. Please "
                             "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                             "...,oK) format.")
        scales = (None,) * n_spatial
    else:
        scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * n_spatial
        out_sizes = tuple(int(math.floor(s * f)) for s, f in zip(in_sizes, scales))
        if recompute_scale_factor:
            scales = (None,) * n_spatial
    out_sizes = tuple(int(s) for s in out_sizes)
    if mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d

        if n_spatial == 1:
            return adaptive_avg_pool1d(input, out_sizes)
        if n_spatial == 2:
            return adaptive_avg_pool2d(input, out_sizes)
        raise NotImplementedError("interpolate: area mode supports 3D and 4D inputs")
    xp = xp_of(input)
    out = input
    for k in range(n_spatial):
        axis = 2 + k
        if mode in ("nearest", "nearest-exact"):
            idx = _nearest_indices(in_sizes[k], out_sizes[k], scales[k], mode == "nearest-exact")
            out = ops.index_select(out, axis, wrap(xp.asarray(idx)))
        elif mode in _LINEAR_MODES:
            m = _linear_matrix(in_sizes[k], out_sizes[k], scales[k], bool(align_corners),
                               np.float64 if input.dtype.itemsize == 8 else np.float32)
            weights = wrap(xp.asarray(m.T)).to(input.dtype)
            moved = ops.movedim(out, axis, -1)
            out = ops.movedim(ops.matmul(moved, weights), -1, axis)
        else:
            raise NotImplementedError(f"interpolate: mode {mode!r} is not supported")
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


def pixel_shuffle(input, upscale_factor):
    """(*, C * r^2, H, W) → (*, C, H * r, W * r)."""
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H * r, W * r) → (*, C * r^2, H, W), the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"{h} x {w} and downscale_factor={r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def channel_shuffle(input, groups):
    """(N, g * k, *) → (N, k * g, *): channel i of group j moves to position i * g + j."""
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c, *rest = input.shape
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    return input.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)
