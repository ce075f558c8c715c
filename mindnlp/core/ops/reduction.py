# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Reductions over dimensions: sum, mean, max/min (with indices), amax/amin, arg*, all/any."""
import functools

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd.function import Function
from ._helpers import HALF_NP, array_op, normalize_dim, normalize_dims, widen, xp_of
from ._out import write_out
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
    if out is not None:
        return write_out("sum", out, sum, input, dim, keepdim, dtype=dtype)
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
    if out is not None:
        return write_out("mean", out, mean, input, dim, keepdim, dtype=dtype)
    if dtype is not None:
        input = cast(input, dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            f"dtype. Got: {_dtype.scalar_type_name(input.dtype)}"
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
    if out is not None:
        return write_out("max", out, max, input, dim, keepdim, other=other)
    return _max_min(input, dim, keepdim, other, True)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    if out is not None:
        return write_out("min", out, min, input, dim, keepdim, other=other)
    return _max_min(input, dim, keepdim, other, False)


def _arg(input, dim, keepdim, largest):
    d = None if dim is None else normalize_dim(dim, input.ndim)
    return array_op(functools.partial(_arg_array, xp=xp_of(input), dim=d, keepdim=keepdim, largest=largest), input)


def _arg_array(data, xp, dim, keepdim, largest):
    fn = xp.argmax if largest else xp.argmin
    if dim is None:
        out = fn(data.reshape(-1))
        if keepdim:
            out = xp.asarray(out).reshape((1,) * data.ndim)
        return xp.asarray(out, dtype=np.int64)
    return fn(data, axis=dim, keepdims=keepdim).astype(np.int64)


def argmax(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    return _arg(input, dim, keepdim, False)


def all(input, dim=None, keepdim=False):
    dims = normalize_dims(dim, input.ndim)
    return array_op(functools.partial(xp_of(input).all, axis=dims, keepdims=keepdim), input)


def any(input, dim=None, keepdim=False):
    dims = normalize_dims(dim, input.ndim)
    return array_op(functools.partial(xp_of(input).any, axis=dims, keepdims=keepdim), input)


# --- statistics, cumulative ops, norms, order statistics ---------------------------------
# (Names such as `sum`, `max`, `min`, `all`, `any` in this module are the core ops, not builtins.)


def _reduced_dims(dim, ndim):
    """normalize_dims, with 0-dim inputs reducing over nothing (as torch allows dim=0/-1 there)."""
    if ndim == 0:
        if dim is not None:
            for d in (dim if isinstance(dim, (list, tuple)) else (dim,)):
                normalize_dim(int(d), 0)
        return ()
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        dim = None
    return normalize_dims(dim, ndim)


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _require_float(input, message):
    if not input.dtype.is_floating_point:
        raise RuntimeError(message)


def _var_correction(dim, unbiased, correction):
    """Resolve torch's overloads: var(x, unbiased), var(x, dim, unbiased), var(x, dim, correction=)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("var/std: cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return dim, correction


def _var_backward(x, grad, dims, keepdim, correction):
    """d var / dx = 2 (x - mean) / (N - correction), written with core ops (differentiable)."""
    from .elementwise import mul, sub

    denom = _count(x.shape, dims) - correction
    scale = 2.0 / denom if denom > 0 else float("nan")  # torch: 2/0 * 0 (the centered values) = NaN
    g = expand_reduced(grad, x.shape, dims, keepdim)
    return mul(g, mul(sub(x, mean(x, dims, keepdim=True)), scale))


class Var(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        xp = xp_of(x)
        data = widen(x._data)
        centered = data - data.mean(axis=dims, keepdims=True)
        denom = _count(x.shape, dims) - correction
        with np.errstate(divide="ignore", invalid="ignore"):
            out = xp.sum(centered * centered, axis=dims, keepdims=keepdim) / (denom if denom > 0 else 0)
        ctx.save_for_backward(x)
        ctx.dims, ctx.correction, ctx.keepdim = dims, correction, keepdim
        return xp.asarray(out).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _var_backward(x, grad, ctx.dims, ctx.keepdim, ctx.correction), None, None, None


class Std(Function):
    @staticmethod
    def forward(ctx, x, dims, correction, keepdim):
        xp = xp_of(x)
        variance = Var.forward(ctx, x, dims, correction, keepdim)
        out = _wrap(xp.sqrt(widen(variance)).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div, eq, mul, where

        x, out = ctx.saved_tensors
        # d std = d var / (2 std); torch defines it as 0 where std is 0 (constant slices).
        zero = eq(out, 0)
        grad_var = where(zero, 0.0, div(grad, mul(where(zero, 1.0, out), 2)))
        return _var_backward(x, grad_var, ctx.dims, ctx.keepdim, ctx.correction), None, None, None


def _var_std(cls, input, dim, unbiased, keepdim, correction, axis):
    if axis is not None:
        dim = axis
    _require_float(input, "std and var only support floating point and complex dtypes")
    dim, correction = _var_correction(dim, unbiased, correction)
    return cls.apply(input, _reduced_dims(dim, input.ndim), correction, keepdim)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Variance with Bessel's correction by default (correction=1, i.e. unbiased)."""
    return _var_std(Var, input, dim, unbiased, keepdim, correction, axis)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    return _var_std(Std, input, dim, unbiased, keepdim, correction, axis)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(var, mean) over the same dims."""
    dim, correction = _var_correction(dim, unbiased, correction)
    dims = _reduced_dims(dim, input.ndim)
    return var(input, dims, keepdim=keepdim, correction=correction), mean(input, dims, keepdim=keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    dim, correction = _var_correction(dim, unbiased, correction)
    dims = _reduced_dims(dim, input.ndim)
    return std(input, dims, keepdim=keepdim, correction=correction), mean(input, dims, keepdim=keepdim)


class LogSumExp(Function):
    """log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the (finite) maximum."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        xp = xp_of(x)
        data = widen(x._data)
        if data.size == 0:
            out = xp.log(xp.sum(xp.exp(data), axis=dims, keepdims=keepdim))
        else:
            peak = xp.max(data, axis=dims, keepdims=True)
            peak = xp.where(xp.isfinite(peak), peak, 0)
            with np.errstate(divide="ignore"):
                out = xp.log(xp.sum(xp.exp(data - peak), axis=dims, keepdims=True)) + peak
            if not keepdim:
                out = xp.squeeze(out, axis=dims)
        result = _wrap(xp.asarray(out).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(x, result)
        ctx.dims, ctx.keepdim = dims, keepdim
        return result

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import exp, mul, sub

        x, out = ctx.saved_tensors
        g = expand_reduced(grad, x.shape, ctx.dims, ctx.keepdim)
        return mul(g, exp(sub(x, expand_reduced(out, x.shape, ctx.dims, ctx.keepdim)))), None, None


def logsumexp(input, dim, keepdim=False):
    """Numerically stable log-sum-exp; integer inputs are computed in the default float dtype."""
    if not input.dtype.is_floating_point:
        input = cast(input, _dtype.get_default_dtype())
    return LogSumExp.apply(input, _reduced_dims(dim, input.ndim), keepdim)


def _integer_to_int64(input, dtype):
    """Sum-like ops (prod, cumsum, cumprod) give int64 for bool/integer inputs, as torch does."""
    if dtype is not None:
        return cast(input, dtype)
    if not input.dtype.is_floating_point:
        return cast(input, _dtype.int64)
    return input


def _exclusive_products(x, dim):
    """For each position, the product of all other elements along dim (zero-safe, no division)."""
    from .creation import ones_like
    from .elementwise import mul
    from .shape import cat, flip, narrow

    n = x.shape[dim]
    one = ones_like(narrow(x, dim, 0, 1))
    before = cumprod(cat([one, narrow(x, dim, 0, n - 1)], dim), dim)
    after = flip(cumprod(flip(cat([narrow(x, dim, 1, n - 1), one], dim), dim), dim), dim)
    return mul(before, after)


class Prod(Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        xp = xp_of(x)
        out = _wrap(xp.asarray(xp.prod(widen(x._data), axis=dim, keepdims=keepdim))
                    .astype(x._data.dtype, copy=False))
        ctx.save_for_backward(x, out)
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.has_zero = not x.is_meta and bool((x._data == 0).any())
        return out

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div, mul

        x, out = ctx.saved_tensors
        dims = (ctx.dim,)
        g = expand_reduced(grad, x.shape, dims, ctx.keepdim)
        if not ctx.has_zero:
            return div(mul(g, expand_reduced(out, x.shape, dims, ctx.keepdim)), x), None, None
        return mul(g, _exclusive_products(x, ctx.dim)), None, None


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or along one dim; bool/integer inputs give int64."""
    from .shape import reshape

    input = _integer_to_int64(input, dtype)
    if dim is None:
        return reshape(Prod.apply(reshape(input, (-1,)), 0, False), ())
    if input.ndim == 0:
        normalize_dim(dim, 0)
        return reshape(Prod.apply(reshape(input, (1,)), 0, False), ())
    return Prod.apply(input, normalize_dim(dim, input.ndim), keepdim)


class Cumsum(Function):
    @staticmethod
    def forward(ctx, x, dim):
        ctx.dim = dim
        return xp_of(x).cumsum(widen(x._data), axis=dim).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        from .shape import flip

        return flip(Cumsum.apply(flip(grad, ctx.dim), ctx.dim), ctx.dim), None


def _along_dim(fn, input, dim):
    """Run a dim-wise op; a 0-dim input is treated as one element along dim 0 or -1."""
    from .shape import reshape

    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return reshape(fn(reshape(input, (1,)), 0), ())
    return fn(input, d)


def cumsum(input, dim, *, dtype=None):
    input = _integer_to_int64(input, dtype)
    return _along_dim(Cumsum.apply, input, dim)


class Cumprod(Function):
    @staticmethod
    def forward(ctx, x, dim):
        out = _wrap(xp_of(x).cumprod(widen(x._data), axis=dim).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.has_zero = not x.is_meta and bool((x._data == 0).any())
        return out

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div, mul
        from .shape import flip

        x, out = ctx.saved_tensors
        d = ctx.dim
        if not ctx.has_zero:
            # d out_k / d x_i = out_k / x_i for k >= i: a reversed cumulative sum.
            return div(flip(cumsum(flip(mul(grad, out), d), d), d), x), None
        return _cumprod_backward_with_zeros(x, out, grad, d), None


def _cumprod_backward_with_zeros(x, out, grad, d):
    """Exact gradient when x has zeros: grad_i = out_{i-1} * S_i, with the reverse
    recurrence S_i = g_i + x_{i+1} S_{i+1} (no division; one step per position along d)."""
    from .creation import ones_like
    from .elementwise import add, mul
    from .shape import select, stack

    n = x.shape[d]
    g = [select(grad, d, i) for i in range(n)]
    xs = [select(x, d, i) for i in range(n)]
    outs = [select(out, d, i) for i in range(n)]
    s = [None] * n
    s[n - 1] = g[n - 1]
    for i in range(n - 2, -1, -1):
        s[i] = add(g[i], mul(xs[i + 1], s[i + 1]))
    before = [ones_like(outs[0])] + outs[:-1]
    return stack([mul(b, si) for b, si in zip(before, s)], d)


def cumprod(input, dim, *, dtype=None):
    input = _integer_to_int64(input, dtype)
    return _along_dim(Cumprod.apply, input, dim)


def _running(xp, ufunc, data, axis):
    """ufunc.accumulate(data, axis): NumPy's own, else (CuPy has no accumulate for maximum and
    minimum) a doubling scan, log2(n) elementwise steps each combining every element with the
    one `step` before it."""
    if xp is np:
        return ufunc.accumulate(data, axis=axis)
    out, n, step = data.copy(), data.shape[axis], 1
    head = [slice(None)] * data.ndim
    while step < n:
        later, earlier = list(head), list(head)
        later[axis], earlier[axis] = slice(step, None), slice(0, n - step)
        out[tuple(later)] = ufunc(out[tuple(later)], out[tuple(earlier)])
        step *= 2
    return out


def _cumulative_extreme(input, dim, largest):
    """cummax/cummin: running extreme and the index where it was (last) reached; NaN wins."""
    from .indexing import Gather
    from .shape import reshape

    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        values, indices = _cumulative_extreme(reshape(input, (1,)), 0, largest)
        return _ValuesIndices(reshape(values, ()), reshape(indices, ()))
    xp = xp_of(input)
    data = widen(input._data)
    running = _running(xp, xp.maximum if largest else xp.minimum, data, d)
    reached = data == running
    if data.dtype.kind == "f":
        reached |= xp.isnan(data)
    shape = [1] * data.ndim
    shape[d] = data.shape[d]
    positions = xp.arange(data.shape[d]).reshape(shape)
    idx = _running(xp, xp.maximum, xp.where(reached, positions, -1), d).astype(np.int64)
    indices = _wrap(idx)
    return _ValuesIndices(Gather.apply(input, d, indices), indices)


def cummax(input, dim):
    return _cumulative_extreme(input, dim, True)


def cummin(input, dim):
    return _cumulative_extreme(input, dim, False)


class VectorNorm(Function):
    """The p-norm of the elements over dims (p = inf, -inf, 0, or any number)."""

    @staticmethod
    def forward(ctx, x, ord, dims, keepdim):
        xp = xp_of(x)
        data = widen(x._data)
        a = data if ord == 2 else xp.abs(data)  # |x|² = x·x: the 2-norm skips a pass
        if ord == float("inf"):
            out = xp.max(a, axis=dims, keepdims=keepdim)
        elif ord == float("-inf"):
            out = xp.min(a, axis=dims, keepdims=keepdim)
        elif ord == 0:
            out = xp.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
        elif ord == 1:
            out = xp.sum(a, axis=dims, keepdims=keepdim)
        elif ord == 2:
            out = xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
        else:
            with np.errstate(divide="ignore"):
                out = xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)
        result = _wrap(xp.asarray(out).astype(x._data.dtype, copy=False))
        ctx.save_for_backward(x, result)
        ctx.ord, ctx.dims, ctx.keepdim = ord, dims, keepdim
        return result

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import abs, div, eq, isnan, logical_or, mul, pow, sign, where

        x, out = ctx.saved_tensors
        p, dims, keepdim = ctx.ord, ctx.dims, ctx.keepdim
        if p == 0:
            return mul(expand_reduced(grad, x.shape, dims, keepdim), 0.0), None, None, None
        if p == 1:
            return mul(expand_reduced(grad, x.shape, dims, keepdim), sign(x)), None, None, None
        if p in (float("inf"), float("-inf")):
            # Like amax: the gradient is shared evenly among the elements that attain the norm.
            norm = expand_reduced(out, x.shape, dims, keepdim)
            mask = cast(logical_or(eq(abs(x), norm), isnan(x)), x.dtype)
            share = div(grad, sum(mask, dims, keepdim=keepdim))
            return mul(mul(sign(x), mask), expand_reduced(share, x.shape, dims, keepdim)), None, None, None
        # grad * sign(x) |x|^(p-1) / norm^(p-1), defined as 0 where the norm is 0. The scale is
        # computed on the reduced shape, so only one full-size product remains for p = 2.
        zero = eq(out, 0)
        scale = where(zero, 0.0, div(grad, pow(where(zero, 1.0, out), p - 1)))
        scale = expand_reduced(scale, x.shape, dims, keepdim)
        if p == 2:
            return mul(x, scale), None, None, None
        scaled = mul(sign(x), pow(abs(x), p - 1))
        if p < 1:
            scaled = where(eq(x, 0), 0.0, scaled)
        return mul(scaled, scale), None, None, None


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm: the ord-norm of the elements over dim (all of them when None)."""
    if dtype is not None:
        input = cast(input, dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_type_name(input.dtype)}"
        )
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    dims = _reduced_dims(dim, input.ndim)
    if input.numel() == 0 and ord < 0 and _count(input.shape, dims) == 0:
        raise RuntimeError(
            f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the operation does not "
            "have an identity"
        )
    return VectorNorm.apply(input, float(ord), dims, keepdim)


def _type_name(dtype):
    """torch's scalar type names used in its error messages (Long, Int, Bool, ...)."""
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float64": "Double", "float32": "Float", "float16": "Half", "bfloat16": "BFloat16"}.get(dtype.name, dtype.name)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: 'fro' and numbers are vector norms over dim (all elements when None);
    'nuc' is the nuclear norm of the matrices in dim (default: the last two)."""
    if out is not None:
        return write_out("norm", out, norm, input, p, dim, keepdim, dtype=dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        from .. import linalg

        return linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else dim, keepdim=keepdim, dtype=dtype)
    if p == "fro" or p is None:
        if dim is not None and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm(): unsupported norm type {p!r}")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


class _MinMax(tuple):
    """The (min, max) pair of aminmax, also readable by attribute."""

    def __new__(cls, lo, hi):
        return super().__new__(cls, (lo, hi))

    @property
    def min(self):
        return self[0]

    @property
    def max(self):
        return self[1]


def aminmax(input, *, dim=None, keepdim=False):
    dims = () if dim is None else dim
    return _MinMax(amin(input, dims, keepdim), amax(input, dims, keepdim))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """sum with NaNs counted as zero."""
    from .elementwise import isnan, where

    if input.dtype.is_floating_point:
        input = where(isnan(input), 0.0, input)
    return sum(input, dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """mean of the non-NaN elements (NaN where a slice has none)."""
    from .elementwise import div, isnan, logical_not

    if dtype is not None:
        input = cast(input, dtype)
    _require_float(input, "nanmean(): expected input to have floating point or complex dtype but got "
                   f"{_type_name(input.dtype)}")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return div(nansum(input, dim, keepdim), cast(count, input.dtype))


class _SharedAmongEqual(Function):
    """A value chosen from x (e.g. its median) whose gradient is shared evenly among all
    elements equal to it, as torch's full-reduction median/nanmedian do."""

    @staticmethod
    def forward(ctx, x, value):
        xp = xp_of(x)
        v = xp.asarray(value, dtype=x._data.dtype)
        hit = x._data == v
        if x._data.dtype.kind == "f" and bool(xp.isnan(v)):
            hit = xp.isnan(x._data)
        ctx.mask = hit
        return v.copy()

    @staticmethod
    def backward(ctx, grad):
        from .elementwise import div, mul

        mask = _wrap(ctx.mask.astype(grad._data.dtype))
        return div(mul(grad, mask), float(ctx.mask.sum())), None


def _median_positions(xp, order_data, d, ignore_nan):
    """Index (into the sorted order) of the lower median of each slice; NaN slices pick their
    first NaN (median) or ignore NaNs (nanmedian; an all-NaN slice gives NaN)."""
    n = order_data.shape[d]
    if order_data.dtype.kind != "f":
        return xp.full(tuple(s for i, s in enumerate(order_data.shape) if i != d), (n - 1) // 2)
    valid = xp.sum(~xp.isnan(order_data), axis=d)
    if ignore_nan:
        return xp.where(valid > 0, (valid - 1) // 2, 0)
    return xp.where(valid < n, valid, (n - 1) // 2)


def _median(input, dim, keepdim, ignore_nan, name):
    from .indexing import Gather
    from .shape import reshape, squeeze

    xp = xp_of(input)
    if dim is None:
        if input.numel() == 0:
            return _wrap(xp.asarray(np.nan, dtype=input._data.dtype))
        flat = widen(input._data).reshape(-1)
        ordered = xp.sort(flat)
        pos = int(_median_positions(xp, flat[:, None], 0, ignore_nan)[0])
        return _SharedAmongEqual.apply(input, ordered[pos])
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        values, indices = _median(reshape(input, (1,)), 0, False, ignore_nan, name)
        return _ValuesIndices(values, indices)
    if input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    data = widen(input._data)
    order = xp.argsort(data, axis=d, kind="stable")
    pos = xp.expand_dims(_median_positions(xp, data, d, ignore_nan), d)
    idx = xp.take_along_axis(order, pos, axis=d).astype(np.int64)
    indices = _wrap(idx)
    values = Gather.apply(input, d, indices)
    if not keepdim:
        values, indices = squeeze(values, d), _wrap(xp.squeeze(idx, axis=d))
    return _ValuesIndices(values, indices)


def median(input, dim=None, keepdim=False):
    """The lower median: median(x) → value; median(x, dim) → (values, indices). NaN propagates."""
    return _median(input, dim, keepdim, False, "median")


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaNs."""
    return _median(input, dim, keepdim, True, "nanmedian")


def mode(input, dim=-1, keepdim=False):
    """The most frequent value of each slice (the smallest among ties) and the index of its
    last occurrence, as torch returns."""
    from .indexing import Gather
    from .shape import reshape, squeeze

    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        values, indices = mode(reshape(input, (1,)), 0)
        return _ValuesIndices(values, indices)
    xp = xp_of(input)
    rows = xp.moveaxis(widen(input._data), d, -1)
    flat = rows.reshape(-1, rows.shape[-1])
    n = flat.shape[1]
    last = xp.empty(flat.shape[0], dtype=np.int64)
    for r in range(flat.shape[0]):
        uniq, counts = xp.unique(flat[r], return_counts=True)
        winner = uniq[int(xp.argmax(counts))]
        last[r] = n - 1 - int(xp.argmax(flat[r][::-1] == winner))
    idx = xp.moveaxis(last.reshape(rows.shape[:-1] + (1,)), -1, d)
    indices = _wrap(idx)
    values = Gather.apply(input, d, indices)
    if not keepdim:
        values, indices = squeeze(values, d), _wrap(xp.squeeze(idx, axis=d))
    return _ValuesIndices(values, indices)


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    """Sort each slice, then read (and interpolate) at rank q * (count - 1); differentiable
    through the sort's gather. q may be a float or a 0/1-dim tensor (its dim comes first)."""
    from .elementwise import add, mul, sub, where
    from .indexing import Gather
    from .shape import expand, movedim, reshape, squeeze, unsqueeze
    from .sorting import sort

    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _QUANTILE_METHODS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
            f"but got {interpolation}"
        )
    xp = xp_of(input)
    scalar_q = not isinstance(q, Tensor)
    q_data = xp.asarray([q] if scalar_q else q._data, dtype=input._data.dtype)
    if q_data.ndim > 1:
        raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
    scalar_q = scalar_q or q_data.ndim == 0
    q_data = q_data.reshape(-1)
    if bool(((q_data < 0) | (q_data > 1)).any()):
        if not isinstance(q, Tensor):
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    if dim is None:
        x, d = reshape(input, (-1,)), 0
    else:
        x, d = input, normalize_dim(dim, input.ndim)
    x = reshape(x, (1,)) if x.ndim == 0 else x
    if x.shape[d] == 0:
        raise IndexError(f"{name}() input tensor must be non-empty")
    rows = movedim(sort(x, d).values, d, -1)  # (..., n), NaNs last
    n = rows.shape[-1]
    nan_rows = xp.isnan(rows._data)
    count = (n - nan_rows.sum(axis=-1)) if ignore_nan else xp.full(rows.shape[:-1], n)
    # (Q, ...) ranks, computed in the input's dtype as torch does (it decides 'nearest' at .5).
    rank = q_data.reshape((-1,) + (1,) * (rows.ndim - 1)) * xp.maximum(count - 1, 0).astype(q_data.dtype)
    if interpolation == "lower":
        rank = xp.floor(rank)
    elif interpolation == "higher":
        rank = xp.ceil(rank)
    elif interpolation == "nearest":
        rank = xp.round(rank)
    lo = xp.floor(rank).astype(np.int64)
    hi = xp.ceil(rank).astype(np.int64)
    stacked = expand(unsqueeze(rows, 0), (len(q_data),) + tuple(rows.shape))
    lo_val = squeeze(Gather.apply(stacked, rows.ndim, _wrap(lo[..., None])), -1)
    hi_val = squeeze(Gather.apply(stacked, rows.ndim, _wrap(hi[..., None])), -1)
    weight = 0.5 if interpolation == "midpoint" else _wrap((rank - lo).astype(input._data.dtype))
    out = add(lo_val, mul(sub(hi_val, lo_val), weight))
    if not ignore_nan:
        out = where(_wrap(xp.broadcast_to(nan_rows.any(axis=-1), out.shape)), float("nan"), out)
    if keepdim:
        kept = [1] * input.ndim if dim is None else list(input.shape)
        if dim is not None and input.ndim:
            kept[d] = 1
        out = reshape(out, (len(q_data),) + tuple(kept))
    if scalar_q:
        out = squeeze(out, 0)
    return out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def is_nonzero(input):
    """The truth value of a single-element tensor (torch refuses zero or several elements)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())
