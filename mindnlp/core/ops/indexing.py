# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Indexing: tensor[key], tensor[key] = value, gather/scatter, index_select, masks, nonzero."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd import function as _function
from ..autograd.function import Function
from ..backends import cpu_jit
from ._helpers import normalize_dim, xp_of
from .conversion import cast
from .shape import Slice

_BFLOAT16 = _dtype.bfloat16.np_dtype


def _convert_key(key, xp):
    """Turn a torch-style index into one NumPy understands (tensors → arrays)."""
    if isinstance(key, tuple):
        return tuple(_convert_key(k, xp) for k in key)
    if isinstance(key, Tensor):
        if key.dtype.is_floating_point:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return key._data
    if isinstance(key, list):
        return xp.asarray([k.item() if isinstance(k, Tensor) else k for k in key]) if not any(
            isinstance(k, (list, slice, type(None), type(Ellipsis))) for k in key) else tuple(
            _convert_key(k, xp) for k in key)
    return key


_BASIC = (int, np.integer, slice, type(None), type(Ellipsis))


def _is_basic(key):
    """Whether key is basic indexing (ints, slices, None, Ellipsis; bools are not ints here)."""
    if type(key) is tuple:
        for k in key:
            if not isinstance(k, _BASIC) or isinstance(k, bool):
                return False
        return True
    return isinstance(key, _BASIC) and not isinstance(key, bool)


def _check_bounds(x, key):
    """Raise torch's IndexError for an out-of-range integer index."""
    parts = key if type(key) is tuple else (key,)
    shape = x._data.shape
    dim = 0
    for k in parts:
        if k is None:
            continue
        if k is Ellipsis:
            dim = len(shape) - sum(1 for p in parts if p is not None and p is not Ellipsis) + dim
            continue
        if not isinstance(k, slice):          # an int (basic keys hold nothing else)
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
        dim += 1


class Index(Function):
    """Advanced indexing (integer/bool arrays): a copy; backward scatters with accumulation."""

    @staticmethod
    def forward(ctx, x, key):
        ctx.shape, ctx.key = x.shape, key
        return x._data[key]

    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros

        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return IndexPut.apply(base, ctx.key, grad, True), None


def getitem(x, key):
    if isinstance(key, Tensor) and key.dtype is _dtype.bool_ and tuple(key.shape) != tuple(x.shape[:key.ndim]):
        raise IndexError(
            f"The shape of the mask {list(key.shape)} at index 0 does not match the shape of the indexed tensor "
            f"{list(x.shape)} at index 0"
        )
    if _is_basic(key):
        _check_bounds(x, key)
        return Slice.apply(x, key)
    np_key = _convert_key(key, xp_of(x))
    try:
        return Index.apply(x, np_key)
    except IndexError as err:
        raise IndexError(str(err).replace("axis", "dimension")) from None


class IndexPut(Function):
    """out = x with out[key] = values (or += with accumulate)."""

    @staticmethod
    def forward(ctx, x, key, values, accumulate):
        xp = xp_of(x)
        out = x._data.copy()
        vals = values._data if isinstance(values, Tensor) else values
        if accumulate:
            if _is_basic(key):
                out[key] += vals
            elif xp is np and isinstance(key, np.ndarray) and key.dtype.kind in "iu" and key.ndim == 1 \
                    and getattr(vals, "shape", None) == key.shape + out.shape[1:]:
                add_rows_at(out, key, vals)             # x[rows] += v: an embedding-like gradient
            else:
                add_at(xp, out, key, vals)
        else:
            out[key] = vals
        ctx.key, ctx.accumulate = key, accumulate
        ctx.value_shape = values.shape if isinstance(values, Tensor) else None
        return out

    @staticmethod
    def backward(ctx, grad):
        gx = gv = None
        if ctx.needs_input_grad[0]:
            gx = grad if ctx.accumulate else IndexPut.apply(grad, ctx.key, 0.0, False)
        if ctx.needs_input_grad[2]:
            gv = Index.apply(grad, ctx.key)
            if tuple(gv.shape) != tuple(ctx.value_shape):
                from .shape import reshape

                # The engine sums broadcast dims; reshape when the value had fewer dims.
                if gv.numel() == int(np.prod(ctx.value_shape)):
                    gv = reshape(gv, ctx.value_shape)
        return gx, None, gv, None


def index_put_basic(base, key, values):
    """base with base[key] = values (used by the backward of slicing)."""
    return IndexPut.apply(base, key, values, False)


def index_put(input, indices, values, accumulate=False):
    key = _convert_key(tuple(indices), xp_of(input))
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        values = cast(values, input.dtype)
    return IndexPut.apply(input, key, values, accumulate)


def setitem(x, key, value):
    """x[key] = value, in place; recorded for autograd on x (and value) like index_put_."""
    from .inplace import apply_inplace

    if isinstance(value, Tensor):
        if value.dtype != x.dtype:
            value = cast(value, x.dtype)
        if value._device != x._device:
            value = value.to(x.device)
        if value.ndim and value.shape[0] == 1:
            # torch drops the value's leading size-1 dims, so `x[i] = t.unsqueeze(0)` fits a slot.
            lead = next((i for i, s in enumerate(value.shape) if s != 1), value.ndim)
            value = value.reshape(tuple(value.shape[lead:]))
    elif isinstance(value, (list, tuple, np.ndarray)):
        from .creation import tensor

        value = tensor(value, dtype=x.dtype, device=x.device)
    np_key = key if _is_basic(key) else _convert_key(key, xp_of(x))
    if _is_basic(key):
        _check_bounds(x, key)
    if not (x.requires_grad or (isinstance(value, Tensor) and value.requires_grad)):
        raw = value._data if isinstance(value, Tensor) else value
        x._data[np_key] = raw
        x._version[0] += 1
        if _function._tracer is not None:
            from .inplace import assign

            _function._tracer.write(assign, x, (raw, np_key))
        return
    apply_inplace(x, lambda t, v: IndexPut.apply(t, np_key, v, False), value)


class Gather(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim = x.shape, dim
        ctx.index = index
        return xp_of(x).take_along_axis(x._data, index._data, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros

        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return ScatterAdd.apply(base, ctx.dim, ctx.index, grad), None, None


def _check_index(input, dim, index, name):
    if index.dtype is not _dtype.int64 and index.dtype is not _dtype.int32:
        raise RuntimeError(f"{name}(): Expected dtype int64 for index, got {index.dtype}")
    if index.ndim != input.ndim and not (index.ndim <= 1 and input.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")


def gather(input, dim, index, *, sparse_grad=False):
    d = normalize_dim(dim, input.ndim)
    _check_index(input, d, index, "gather")
    n = input.shape[d] if input.ndim else 1
    if index.numel() and not index.is_meta and (int(index._data.max()) >= n or int(index._data.min()) < -n):
        raise RuntimeError(f"gather(): index out of bounds for dimension {d} with size {n}")
    if any(index.shape[i] > input.shape[i] for i in range(input.ndim) if i != d):
        # take_along_axis would broadcast; torch takes the leading part of each other dim.
        key = tuple(slice(0, index.shape[i]) if i != d else slice(None) for i in range(input.ndim))
        input = getitem(input, key)
    elif any(index.shape[i] < input.shape[i] for i in range(input.ndim) if i != d):
        key = tuple(slice(0, index.shape[i]) if i != d else slice(None) for i in range(input.ndim))
        input = getitem(input, key)
    return Gather.apply(input, d, index)


def take_along_dim(input, indices, dim=None):
    from .shape import flatten

    if dim is None:
        return Gather.apply(flatten(input), 0, flatten(indices))
    d = normalize_dim(dim, input.ndim)
    shape = np.broadcast_shapes(
        tuple(s for i, s in enumerate(input.shape) if i != d), tuple(s for i, s in enumerate(indices.shape) if i != d))
    in_shape = list(shape)
    in_shape.insert(d, input.shape[d])
    idx_shape = list(shape)
    idx_shape.insert(d, indices.shape[d])
    return Gather.apply(input.expand(tuple(in_shape)), d, indices.expand(tuple(idx_shape)))


def _scatter_positions(xp, index, dim):
    """Full coordinate arrays for each element of index along every axis."""
    # xp.indices(..., sparse=True) written out: CuPy's indices has no `sparse`
    grids = [xp.arange(n).reshape((1,) * axis + (n,) + (1,) * (index.ndim - axis - 1))
             for axis, n in enumerate(index.shape)]
    grids[dim] = index
    return tuple(grids)


class Scatter(Function):
    """out = x; out[index[i][j]][j] = src[i][j] (dim 0 example); the last write wins."""

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce):
        xp = xp_of(x)
        out = x._data.copy()
        pos = _scatter_positions(xp, index._data, dim)
        vals = src._data[tuple(slice(0, s) for s in index.shape)] if isinstance(src, Tensor) else src
        if reduce is None:
            out[pos] = vals
        elif reduce in ("add", "sum"):
            add_at(xp, out, pos, vals)
        elif reduce in ("multiply", "prod"):
            xp.multiply.at(out, pos, vals)
        else:
            raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
        ctx.dim, ctx.index, ctx.reduce = dim, index, reduce
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.reduce not in (None, "add", "sum"):
            raise RuntimeError(f"scatter with reduce={ctx.reduce!r} is not differentiable")
        gx = gsrc = None
        if ctx.needs_input_grad[0]:
            gx = grad if ctx.reduce else Scatter.apply(grad, ctx.dim, ctx.index, 0.0, None)
        if ctx.needs_input_grad[3]:
            gsrc = Gather.apply(grad, ctx.dim, ctx.index)
        return gx, None, None, gsrc, None


class ScatterAdd(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src):
        xp = xp_of(x)
        out = x._data.copy()
        pos = _scatter_positions(xp, index._data, dim)
        add_at(xp, out, pos, src._data[tuple(slice(0, s) for s in index.shape)])
        ctx.dim, ctx.index = dim, index
        return out

    @staticmethod
    def backward(ctx, grad):
        gsrc = Gather.apply(grad, ctx.dim, ctx.index) if ctx.needs_input_grad[3] else None
        return grad, None, None, gsrc


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    d = normalize_dim(dim, input.ndim)
    _check_index(input, d, index, "scatter")
    if src is None:
        src = value
    if isinstance(src, Tensor) and src.dtype != input.dtype:
        src = cast(src, input.dtype)
    return Scatter.apply(input, d, index, src, reduce)


def scatter_add(input, dim, index, src):
    d = normalize_dim(dim, input.ndim)
    _check_index(input, d, index, "scatter_add")
    if src.dtype != input.dtype:
        src = cast(src, input.dtype)
    return ScatterAdd.apply(input, d, index, src)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce == "sum" and include_self:
        return scatter_add(input, dim, index, src)
    d = normalize_dim(dim, input.ndim)
    xp = xp_of(input)
    out = input._data.copy()
    pos = _scatter_positions(xp, index._data, d)
    vals = src._data[tuple(slice(0, s) for s in index.shape)]
    ufunc = {"sum": xp.add, "prod": xp.multiply, "amax": xp.maximum, "amin": xp.minimum, "mean": xp.add}[reduce]
    if not include_self:
        touched = xp.zeros(out.shape, dtype=bool)
        touched[pos] = True
        identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -np.inf, "amin": np.inf}[reduce]
        out[touched] = identity
    ufunc.at(out, pos, vals)
    if reduce == "mean":
        counts = xp.zeros(out.shape, dtype=np.int64)
        xp.add.at(counts, pos, 1)
        if include_self:
            counts += 1
        out = (out / xp.maximum(counts, 1)).astype(out.dtype)
    return _wrap(out)


class IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.shape, ctx.dim, ctx.index = x.shape, dim, index
        return xp_of(x).take(x._data, index._data, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros

        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return IndexAdd.apply(base, ctx.dim, ctx.index, grad), None, None


def index_select(input, dim, index):
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.numel() and not index.is_meta:  # meta indices have no values to check
        n = input.shape[d] if input.ndim else 1
        hi, lo = int(index._data.max()), int(index._data.min())
        if hi >= n or lo < -n:
            raise IndexError(f"index out of range in self (index {hi if hi >= n else lo}, size {n})")
    return IndexSelect.apply(input, d, index.reshape(-1))


def add_at(xp, out, key, values):
    """xp.add.at(out, key, values). CuPy's add.at has no bfloat16: there the sums are taken in
    float32 and rounded once, as torch's index_add accumulates half types."""
    if xp is np:
        np.add.at(out, key, values)
        return
    values = xp.asarray(values)
    if out.dtype != _BFLOAT16:
        xp.add.at(out, key, values)
        return
    wide = out.astype(np.float32)
    xp.add.at(wide, key, values.astype(np.float32))
    out[...] = wide.astype(out.dtype)


def add_rows_at(out, index, values):
    """out[index[i]] += values[i] along the first axis, as np.add.at, which is an order of
    magnitude slower for rows (an embedding's gradient takes this path every training step).
    The compiled kernel takes float32 and float64; half precision goes through np.add.at."""
    compiled = cpu_jit.load()
    n = out.shape[0]
    if (compiled is None or index.ndim != 1 or out.ndim == 0 or not out.flags.c_contiguous
            or out.dtype not in (np.float32, np.float64) or values.dtype != out.dtype or values.shape != (len(index),) + out.shape[1:]
            or (index.size and (index.min() < -n or index.max() >= n))):
        np.add.at(out, (index,), values)           # also raises torch-like errors for bad indices
        return
    rows = np.where(index < 0, index + n, index).astype(np.int64, copy=False)
    compiled.add_rows(out.reshape(n, -1), rows, np.ascontiguousarray(values).reshape(len(index), -1))


class IndexAdd(Function):
    @staticmethod
    def forward(ctx, x, dim, index, src, alpha=1):
        xp = xp_of(x)
        out = x._data.copy()
        values = src._data * alpha if alpha != 1 else src._data
        if dim == 0 and xp is np:
            add_rows_at(out, index._data, values)
        else:
            add_at(xp, out, (slice(None),) * dim + (index._data,), values)
        ctx.dim, ctx.index, ctx.alpha = dim, index, alpha
        return out

    @staticmethod
    def backward(ctx, grad):
        gsrc = None
        if ctx.needs_input_grad[3]:
            gsrc = IndexSelect.apply(grad, ctx.dim, ctx.index)
            if ctx.alpha != 1:
                gsrc = gsrc * ctx.alpha
        return grad, None, None, gsrc, None


def index_add(input, dim, index, source, *, alpha=1):
    d = normalize_dim(dim, input.ndim)
    if source.dtype != input.dtype:
        source = cast(source, input.dtype)
    return IndexAdd.apply(input, d, index, source, alpha)


def index_copy(input, dim, index, source):
    d = normalize_dim(dim, input.ndim)
    key = (slice(None),) * d + (index._data,)
    return IndexPut.apply(input, key, cast(source, input.dtype), False)


def index_fill(input, dim, index, value):
    d = normalize_dim(dim, input.ndim)
    key = (slice(None),) * d + (index._data,)
    return IndexPut.apply(input, key, value.item() if isinstance(value, Tensor) else value, False)


class MaskedFill(Function):
    @staticmethod
    def forward(ctx, x, mask, value):
        xp = xp_of(x)
        ctx.mask = mask._data
        v = value._data if isinstance(value, Tensor) else value
        return xp.where(mask._data, xp.asarray(v, dtype=x._data.dtype), x._data)

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import where
        from .reduction import sum as reduce_sum

        mask = _wrap(ctx.mask)
        gx = where(mask, 0.0, grad) if ctx.needs_input_grad[0] else None
        gv = reduce_sum(where(mask, grad, 0.0)) if ctx.needs_input_grad[2] else None
        return gx, None, gv


def masked_fill(input, mask, value):
    if mask.dtype is not _dtype.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {_dtype.cpp_type_name(mask.dtype)}")
    try:
        np.broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    except ValueError:
        raise RuntimeError(
            f"The size of the mask {list(mask.shape)} must be broadcastable to the tensor {list(input.shape)}"
        ) from None
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
            )
        if value.dtype != input.dtype:
            value = cast(value, input.dtype)
    elif isinstance(value, float) and not input.is_floating_point():
        raise RuntimeError(f"value cannot be converted to type {input.dtype} without overflow")
    return MaskedFill.apply(input, mask, value)


def masked_select(input, mask):
    from .shape import expand

    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    x = expand(input, shape)
    m = expand(mask, shape)
    return Index.apply(x, m._data)


def masked_scatter(input, mask, source):
    from .shape import expand, reshape

    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    m = expand(mask, shape)._data
    count = int(m.sum())
    src = reshape(source, (-1,))
    from .shape import narrow

    return IndexPut.apply(expand(input, shape), m, narrow(src, 0, 0, count), False)


def nonzero(input, *, as_tuple=False):
    xp = xp_of(input)
    coords = xp.nonzero(input._data)
    if as_tuple:
        if input.ndim == 0:
            return (_wrap(xp.zeros(int(bool(input._data)), dtype=np.int64)),)
        return tuple(_wrap(c.astype(np.int64)) for c in coords)
    if input.ndim == 0:
        return _wrap(xp.zeros((int(bool(input._data)), 0), dtype=np.int64))
    return _wrap(xp.stack(coords, axis=1).astype(np.int64) if coords else xp.zeros((0, 0), dtype=np.int64))


def argwhere(input):
    return nonzero(input)


def count_nonzero(input, dim=None):
    from ._helpers import normalize_dims

    dims = normalize_dims(dim, input.ndim)
    return _wrap(xp_of(input).count_nonzero(input._data, axis=dims).astype(np.int64))
