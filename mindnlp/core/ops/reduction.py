"""Reductions over dimensions: sum, mean, max/min (with indices), amax/amin, arg*, all/any."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd.function import Function
from ._helpers import HALF_NP, normalize_dim, normalize_dims, xp_of
from .conversion import cast


def _accumulate_dtype(array):
    """Half types accumulate in float32 (torch does); the result is rounded back."""
    return np.float32 if array.dtype in HALF_NP else None


def expand_reduced(grad, shape, dims, keepdim):
    """Broadcast a reduced gradient back to the input shape."""
    from .shape import expand, reshape

    if not keepdim and dims:
        kept = list(grad.shape)
        for d in dims:
            kept.insert(d, 1)
        grad = reshape(grad, tuple(kept))
    return expand(grad, tuple(shape))


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim, dtype):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        acc = _accumulate_dtype(x._data)
        out = xp_of(x).sum(x._data, axis=dims, keepdims=keepdim, dtype=acc or dtype)
        return out.astype(dtype or x._data.dtype, copy=False) if acc else out

    @staticmethod
    def backward(ctx, grad):
        return expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None, None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum over dims; bool and integer inputs sum to int64 as in torch."""
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    dims = normalize_dims(dim, input.ndim)
    if dtype is not None:
        input = cast(input, dtype)
    elif not input.dtype.is_floating_point:
        input = cast(input, _dtype.int64)
    return Sum.apply(input, dims, keepdim, None)


class Mean(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        ctx.shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        ctx.count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
        acc = _accumulate_dtype(x._data)
        out = xp_of(x).mean(x._data, axis=dims, keepdims=keepdim, dtype=acc)
        return out.astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div

        return div(expand_reduced(grad, ctx.shape, ctx.dims, ctx.keepdim), ctx.count), None, None


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if dtype is not None:
        input = cast(input, dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            f"dtype. Got: {input.dtype}"
        )
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    return Mean.apply(input, normalize_dims(dim, input.ndim), keepdim)


class _Extreme(Function):
    """amax/amin: the gradient is shared evenly among the tied extreme elements."""

    @staticmethod
    def forward(ctx, x, dims, keepdim, largest):
        xp = xp_of(x)
        reduce = xp.max if largest else xp.min
        out = reduce(x._data, axis=dims, keepdims=True)
        ctx.save_for_backward(x)
        ctx.mask = x._data == out
        ctx.dims, ctx.keepdim = dims, keepdim
        return out if keepdim else xp.squeeze(out, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div, mul

        (x,) = ctx.saved_tensors
        mask = ctx.mask.astype(grad._data.dtype)
        count = mask.sum(axis=ctx.dims, keepdims=True)
        g = expand_reduced(grad, x.shape, ctx.dims, ctx.keepdim)
        return div(mul(g, _wrap(mask)), _wrap(count)), None, None, None


def _check_nonempty(input, dims, name):
    if input._data.size == 0 and any(input.shape[d] == 0 for d in dims):
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")


def amax(input, dim=(), keepdim=False):
    dims = normalize_dims(dim if dim != () else None, input.ndim)
    _check_nonempty(input, dims, "amax")
    return _Extreme.apply(input, dims, keepdim, True)


def amin(input, dim=(), keepdim=False):
    dims = normalize_dims(dim if dim != () else None, input.ndim)
    _check_nonempty(input, dims, "amin")
    return _Extreme.apply(input, dims, keepdim, False)


class _ExtremeWithIndex(Function):
    """max/min along one dim: values and int64 indices; the gradient goes to the index."""

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        xp = xp_of(x)
        idx = (xp.argmax if largest else xp.argmin)(x._data, axis=dim)
        idx_k = xp.expand_dims(idx, dim)
        values = xp.take_along_axis(x._data, idx_k, axis=dim)
        ctx.shape, ctx.dim, ctx.keepdim, ctx.idx = x.shape, dim, keepdim, idx_k
        if not keepdim:
            values = xp.squeeze(values, axis=dim)
            idx_k = idx
        indices = _wrap(idx_k.astype(np.int64))
        ctx.mark_non_differentiable(indices)
        return _wrap(values), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        from .indexing import scatter
        from .creation import zeros
        from .shape import unsqueeze

        g = grad if ctx.keepdim else unsqueeze(grad, ctx.dim)
        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return scatter(base, ctx.dim, _wrap(ctx.idx.astype(np.int64)), g), None, None, None


class _ValuesIndices(tuple):
    """The (values, indices) pair of max/min/sort/topk, also readable by attribute."""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _max_min(input, dim, keepdim, other, largest):
    from .elementwise import maximum, minimum

    if isinstance(dim, Tensor):
        return (maximum if largest else minimum)(input, dim)
    if other is not None:
        return (maximum if largest else minimum)(input, other)
    if dim is None:
        return (amax if largest else amin)(input)
    d = normalize_dim(dim, input.ndim)
    if input.shape and input.shape[d] == 0:
        raise IndexError(f"{'max' if largest else 'min'}(): Expected reduction dim {d} to have non-zero size.")
    values, indices = _ExtremeWithIndex.apply(input, d, keepdim, largest)
    return _ValuesIndices(values, indices)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """max(x) → value; max(x, dim) → (values, indices); max(x, y) → elementwise maximum."""
    return _max_min(input, dim, keepdim, other, True)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    return _max_min(input, dim, keepdim, other, False)


def _arg(input, dim, keepdim, largest):
    xp = xp_of(input)
    fn = xp.argmax if largest else xp.argmin
    if dim is None:
        out = fn(input._data.reshape(-1))
        if keepdim:
            out = xp.asarray(out).reshape((1,) * input.ndim)
        return _wrap(xp.asarray(out, dtype=np.int64))
    d = normalize_dim(dim, input.ndim)
    return _wrap(fn(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def argmax(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, False)


def all(input, dim=None, keepdim=False):
    dims = normalize_dims(dim, input.ndim)
    return _wrap(xp_of(input).all(input._data, axis=dims, keepdims=keepdim))


def any(input, dim=None, keepdim=False):
    dims = normalize_dims(dim, input.ndim)
    return _wrap(xp_of(input).any(input._data, axis=dims, keepdims=keepdim))
