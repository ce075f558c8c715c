# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Sorting, selection, searching and counting: sort/argsort/topk/kthvalue, unique,
searchsorted/bucketize, isin, bincount, histc.

Orderings follow torch: NaN sorts as the largest value, `stable=True` keeps equal elements in
input order (also when descending); without it the faster unstable sort orders ties arbitrarily. Selected values are gathered from the input with the
differentiable `Gather`, so the gradient flows back to the chosen positions.
"""
import functools

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ._helpers import array_op, check_same_device, normalize_dim, widen, xp_of
from ._out import write_out
from .indexing import Gather
from .reduction import _type_name, _ValuesIndices


def _order(xp, data, dim, descending, stable):
    """argsort along dim; descending puts NaN first and, when stable, keeps ties in input order."""
    kind = "stable" if stable else None
    if not descending:
        return xp.argsort(data, axis=dim, kind=kind)
    # Sorting the reversed input ascending and reading the result backwards gives a stable
    # descending order: among equal elements the later one in the reversed input comes first.
    idx = xp.argsort(xp.flip(data, axis=dim), axis=dim, kind=kind)
    return (data.shape[dim] - 1) - xp.flip(idx, axis=dim)


def _gathered(input, dim, indices):
    return _ValuesIndices(Gather.apply(input, dim, indices), indices)


def _scalar_result(input):
    """Sorting-like ops on a 0-dim tensor return it with index 0."""
    from .conversion import clone

    return _ValuesIndices(clone(input), _wrap(xp_of(input).zeros((), dtype=np.int64)))


def _sort_indices(data, xp, dim, descending, stable):
    """The sorting permutation of `data` along dim, as int64."""
    return _order(xp, widen(data), dim, descending, stable).astype(np.int64, copy=False)


def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """(values, indices) sorted along dim."""
    if out is not None:
        return write_out("sort", out, sort, input, dim, descending, stable=stable)
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return _scalar_result(input)
    # The indices come from an array op and the values from the differentiable Gather, so
    # that graph capture records both (and export writes them as one TopK).
    kernel = functools.partial(_sort_indices, xp=xp_of(input), dim=d, descending=descending, stable=stable)
    return _gathered(input, d, array_op(kernel, input))


def argsort(input, dim=-1, descending=False, *, stable=False):
    return sort(input, dim, descending, stable=stable).indices


def msort(input):
    """Sort along the first dim."""
    return sort(input, 0).values


_FEW_TEST_ELEMENTS = 16  # isin's test set up to this size: compared directly
_FULL_SORT_MAX = 1024  # below this row length a full sort is cheaper than partition + sort


def _topk_indices(data, xp, dim, k, largest):
    """The positions of the k largest (smallest) elements along dim, in sorted order, as int64."""
    n = data.shape[dim]
    data = widen(data)
    if k == n or k == 0 or n <= _FULL_SORT_MAX:
        idx = _order(xp, data, dim, largest, False)
    else:
        # Partition first so that only the k chosen elements are sorted (vocab-sized rows).
        part = xp.argpartition(data, n - k if largest else k - 1, axis=dim)
        keep = [slice(None)] * data.ndim
        keep[dim] = slice(n - k, n) if largest else slice(0, k)
        chosen = part[tuple(keep)]
        order = _order(xp, xp.take_along_axis(data, chosen, axis=dim), dim, largest, False)
        idx = xp.take_along_axis(chosen, order, axis=dim)
    keep = [slice(None)] * data.ndim
    keep[dim] = slice(0, k)
    return idx[tuple(keep)].astype(np.int64, copy=False)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The k largest (or smallest) elements along dim, in sorted order, with their indices."""
    if out is not None:
        return write_out("topk", out, topk, input, k, dim, largest, sorted)
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return _scalar_result(input)
    kernel = functools.partial(_topk_indices, xp=xp_of(input), dim=d, k=k, largest=largest)
    return _gathered(input, d, array_op(kernel, input))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element (1-based) along dim and its index."""
    from .shape import squeeze

    d = normalize_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim == 0:
        return _scalar_result(input)
    xp = xp_of(input)
    part = xp.argpartition(widen(input._data), k - 1, axis=d)
    keep = [slice(None)] * input.ndim
    keep[d] = slice(k - 1, k)
    values, indices = _gathered(input, d, _wrap(part[tuple(keep)].astype(np.int64)))
    if keepdim:
        return _ValuesIndices(values, indices)
    return _ValuesIndices(squeeze(values, d), squeeze(indices, d))


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    if not return_inverse and not return_counts:
        return values
    out = [values]
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (always in ascending order), or distinct slices along dim.

    NaNs are all distinct, as in torch. Not differentiable.
    """
    xp = xp_of(input)
    data = input._data
    extra = {"equal_nan": False} if xp is np else {}
    if dim is None:
        values, inverse, counts = xp.unique(data.reshape(-1), return_inverse=True, return_counts=True, **extra)
        inverse = inverse.reshape(data.shape)
    else:
        d = normalize_dim(dim, input.ndim)
        values, inverse, counts = xp.unique(data, axis=d, return_inverse=True, return_counts=True, **extra)
        inverse = inverse.reshape(-1)
    return _unique_result(_wrap(values), _wrap(inverse.astype(np.int64)), _wrap(counts.astype(np.int64)),
                          return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (or slices along dim) to one."""
    xp = xp_of(input)
    data = input._data
    if dim is None:
        rows = data.reshape(-1, 1)
    else:
        d = normalize_dim(dim, input.ndim)
        rows = xp.moveaxis(data, d, 0).reshape(data.shape[d], -1)
    n = rows.shape[0]
    starts = xp.ones(n, dtype=bool)
    if n > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    inverse = xp.cumsum(starts) - 1
    first = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([first, xp.asarray([n])]))
    if dim is None:
        values = data.reshape(-1)[starts]
        inverse = inverse.reshape(data.shape)
    else:
        values = xp.moveaxis(xp.moveaxis(data, d, 0)[starts], 0, d)
    return _unique_result(_wrap(values), _wrap(inverse.astype(np.int64)), _wrap(counts.astype(np.int64)),
                          return_inverse, return_counts)


def _as_values_tensor(values, like):
    from .creation import tensor

    if isinstance(values, Tensor):
        return values
    return tensor(values, device=like.device)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Insertion points of input into the innermost dim of sorted_sequence (left: first
    position with sequence >= value; right: first with sequence > value)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    values = _as_values_tensor(input, sorted_sequence)
    check_same_device(sorted_sequence, values)
    xp = xp_of(sorted_sequence)
    seq = sorted_sequence._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        idx = xp.searchsorted(seq, values._data, side=how)
    else:
        if values.ndim != seq.ndim or values.shape[:-1] != tuple(seq.shape[:-1]):
            raise RuntimeError(
                "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
                "boundaries tensor and input value tensor must match, but we got boundaries tensor "
                f"{list(seq.shape)} and input value tensor {list(values.shape)}"
            )
        rows = seq.reshape(-1, seq.shape[-1])
        vals = values._data.reshape(rows.shape[0], -1)
        idx = xp.stack([xp.searchsorted(rows[i], vals[i], side=how) for i in range(rows.shape[0])])
        idx = idx.reshape(values.shape)
    return _wrap(xp.asarray(idx).astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """Bucket index of each value: right=False gives boundaries[i-1] < x <= boundaries[i]."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Elementwise membership of elements in test_elements (either may be a scalar)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() expects at least one of elements and test_elements to be a tensor")
    like = elements if isinstance(elements, Tensor) else test_elements
    elements = _as_values_tensor(elements, like)
    test_elements = _as_values_tensor(test_elements, like)
    check_same_device(elements, test_elements)
    xp = xp_of(like)
    if test_elements.numel() <= _FEW_TEST_ELEMENTS:
        # one broadcast comparison: NumPy's isin costs ~10 us of set-up, paid by every decoding
        # step's EOS check
        found = (elements._data[..., None] == test_elements._data.reshape(-1)).any(axis=-1)
        return _wrap(~found if invert else found)
    return _wrap(xp.isin(elements._data, test_elements._data, assume_unique=assume_unique, invert=invert))


def bincount(input, weights=None, minlength=0):
    """Count occurrences of each non-negative integer (summing weights instead when given)."""
    xp = xp_of(input)
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type_name(input.dtype)}'")
    if input.ndim != 1 or input.dtype is _dtype.bool_ or (
            input.numel() and int(input._data.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return _wrap(xp.bincount(input._data, minlength=minlength).astype(np.int64))
    if weights.shape != input.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out_dtype = weights._data.dtype if weights.dtype.is_floating_point else np.float64
    counts = xp.bincount(input._data, weights=weights._data.astype(np.float64), minlength=minlength)
    return _wrap(counts.astype(out_dtype))


def histc(input, bins=100, min=0, max=0):
    """Histogram of `bins` equal-width bins over [min, max] (the data's range when min == max);
    values outside are ignored, a value equal to max falls in the last bin."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    xp = xp_of(input)
    data = input._data.astype(np.float64)
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    inside = data[(data >= lo) & (data <= hi)]
    pos = ((inside - lo) * bins / (hi - lo)).astype(np.int64)
    counts = xp.bincount(xp.minimum(pos, bins - 1), minlength=bins)
    return _wrap(counts.astype(input._data.dtype))
