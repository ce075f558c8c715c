# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Elementwise arithmetic, comparison, logic and math, with broadcasting and torch dtypes."""
import functools
import math

import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ..autograd.function import Function
from ..backends import backend_for_array
from ._helpers import (array_op, broadcast_error, compute_float, is_float_array, narrow, promote_operands, special_of,
                       widen, xp_of)
from ._out import write_out
from .conversion import cast


def _data(v):
    return v._data if isinstance(v, Tensor) else v


def _first_tensor(a, b):
    return a if isinstance(a, Tensor) else b


def _binary_result(fn, a, b):
    """Compute fn on raw operands; the half dtypes are computed in float32."""
    ref = _first_tensor(a, b)
    ad, bd = _data(a), _data(b)
    try:
        if ref._data.dtype in (np.float16, _dtype.bfloat16.np_dtype):
            target = ref._data.dtype
            if isinstance(a, Tensor) and isinstance(b, Tensor):
                kernel = backend_for_array(ad).fused("binary_half", ad)
                out = None if kernel is None else kernel(fn.__name__, ad, bd)
                if out is not None:
                    return out
            ad = widen(ad) if isinstance(a, Tensor) else ad
            bd = widen(bd) if isinstance(b, Tensor) else bd
            return narrow(fn(ad, bd), target)
        return fn(ad, bd)
    except ValueError:
        raise broadcast_error(ad, bd) from None


# --- arithmetic -------------------------------------------------------------------------


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return _binary_result(xp_of(_first_tensor(a, b)).add, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return _binary_result(xp_of(_first_tensor(a, b)).subtract, a, b)

    @staticmethod
    def backward(ctx, grad):
        return grad, neg(grad) if ctx.needs_input_grad[1] else None


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        # Each factor is needed only for the other's gradient: saving no more than that keeps
        # in-place updates of a factor legal when torch allows them.
        needs_a, needs_b = ctx.needs_input_grad
        ctx.save_for_backward(a if needs_b and isinstance(a, Tensor) else None,
                              b if needs_a and isinstance(b, Tensor) else None)
        ctx.scalars = (a if not isinstance(a, Tensor) else None, b if not isinstance(b, Tensor) else None)
        return _binary_result(xp_of(_first_tensor(a, b)).multiply, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.scalars
        ga = mul(grad, b if b is not None else sb) if ctx.needs_input_grad[0] else None
        gb = mul(grad, a if a is not None else sa) if ctx.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if ctx.needs_input_grad[1] and isinstance(a, Tensor) else None,
                              b if isinstance(b, Tensor) else None)
        ctx.scalars = (a if not isinstance(a, Tensor) else None, b if not isinstance(b, Tensor) else None)
        return _binary_result(xp_of(_first_tensor(a, b)).true_divide, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.scalars
        b_val = b if b is not None else sb
        ga = div(grad, b_val) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            a_val = a if a is not None else sa
            gb = neg(div(mul(grad, a_val), mul(b_val, b_val)))
        return ga, gb


class Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None)
        ctx.scalars = (a if not isinstance(a, Tensor) else None, b if not isinstance(b, Tensor) else None)
        return _binary_result(xp_of(_first_tensor(a, b)).power, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.scalars
        a_val = a if a is not None else sa
        b_val = b if b is not None else sb
        ga = gb = None
        if ctx.needs_input_grad[0]:
            if b is None and sb == 0:
                ga = mul(grad, 0.0)
            else:
                b_minus_1 = sub(b_val, 1) if isinstance(b_val, Tensor) else b_val - 1
                ga = mul(mul(grad, b_val), pow(a_val, b_minus_1))
        if ctx.needs_input_grad[1]:
            # d/db a**b = a**b * log(a); defined as 0 where a == 0 and b >= 0, as torch does.
            logs = log(a_val) if isinstance(a_val, Tensor) else math.log(a_val) if a_val > 0 else float("-inf")
            term = mul(pow(a_val, b_val), logs)
            if isinstance(a_val, Tensor):
                term = where(logical_and(eq(a_val, 0), ge(b_val, 0)), 0.0, term)
            gb = mul(grad, term)
        return ga, gb


def _arith(cls, a, b):
    a, b = promote_operands(a, b)
    return cls.apply(a, b)


def add(input, other, *, alpha=1, out=None):
    if out is not None:
        return write_out("add", out, add, input, other, alpha=alpha)
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _arith(Add, input, other)


def sub(input, other, *, alpha=1, out=None):
    if out is not None:
        return write_out("sub", out, sub, input, other, alpha=alpha)
    if alpha != 1:
        other = mul(other, alpha) if isinstance(other, Tensor) else other * alpha
    return _arith(Sub, input, other)


subtract = sub


def rsub(input, other, alpha=1):
    return sub(other, input, alpha=alpha)


def mul(input, other, *, out=None):
    if out is not None:
        return write_out("mul", out, mul, input, other)
    return _arith(Mul, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """True division (ints give the default float), or 'trunc'/'floor' rounding."""
    if out is not None:
        return write_out("div", out, div, input, other, rounding_mode=rounding_mode)
    if rounding_mode is None:
        a, b = input, other
        dtype = _dtype.result_type(a, b)
        if not dtype.is_floating_point:
            default = _dtype.get_default_dtype()
            a = cast(a, default) if isinstance(a, Tensor) else float(a)
            b = cast(b, default) if isinstance(b, Tensor) else float(b)
        return _arith(Div, a, b)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        a, b = promote_operands(input, other)
        ref = _first_tensor(a, b)
        xp = xp_of(ref)
        if ref.is_floating_point():
            return _wrap(_binary_result(lambda x, y: xp.trunc(x / y), a, b))
        return _wrap(xp.trunc(xp.true_divide(_data(a), _data(b))).astype(ref._data.dtype))
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}")


divide = div
true_divide = div


def floor_divide(input, other):
    """Rounds toward -inf (torch ≥ 1.13 semantics); not differentiable."""
    a, b = promote_operands(input, other)
    ref = _first_tensor(a, b)
    xp = xp_of(ref)
    if not ref.is_floating_point() and isinstance(b, int) and b == 0 or (
            isinstance(b, Tensor) and not b.is_floating_point() and not b.is_meta and bool((b._data == 0).any())):
        raise RuntimeError("ZeroDivisionError")
    # An array op, so that graph capture records it (MoE routing divides sorted positions).
    return array_op(functools.partial(_floor_divide_arrays, xp=xp), a, b)


def _floor_divide_arrays(x, y, xp):
    """x // y on arrays or Python numbers; the half dtypes are computed in float32."""
    half = next((v.dtype for v in (x, y) if getattr(v, "dtype", None) in (np.float16, _dtype.bfloat16.np_dtype)), None)
    try:
        if half is not None:
            widened = [widen(v) if getattr(v, "dtype", None) == half else v for v in (x, y)]
            return xp.floor_divide(*widened).astype(half)
        return xp.floor_divide(x, y)
    except ValueError:
        raise broadcast_error(x, y) from None


class Remainder(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None)
        ctx.scalars = (a if not isinstance(a, Tensor) else None, b if not isinstance(b, Tensor) else None)
        return _binary_result(xp_of(_first_tensor(a, b)).remainder, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.scalars
        gb = None
        if ctx.needs_input_grad[1]:
            gb = mul(neg(grad), floor_divide(a if a is not None else sa, b))
        return grad if ctx.needs_input_grad[0] else None, gb


def remainder(input, other):
    return _arith(Remainder, input, other)


def fmod(input, other):
    a, b = promote_operands(input, other)
    return _wrap(_binary_result(xp_of(_first_tensor(a, b)).fmod, a, b))


class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return xp_of(x).negative(x._data)

    @staticmethod
    def backward(ctx, grad):
        return neg(grad)


def neg(input):
    if input.dtype is _dtype.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are "
                           "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return Neg.apply(input)


negative = neg


def pow(input, exponent):
    if not isinstance(input, Tensor):
        return _arith(Pow, input, exponent)
    if isinstance(exponent, Tensor) or not input.dtype.is_floating_point:
        return _arith(Pow, input, exponent)
    if exponent == 2:
        return Square.apply(input)
    return Pow.apply(input, float(exponent))


def float_power(input, exponent):
    return pow(cast(input, _dtype.float64) if isinstance(input, Tensor) else input,
               cast(exponent, _dtype.float64) if isinstance(exponent, Tensor) else exponent)


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        xp = xp_of(a)
        ctx.a_wins = a._data > b._data
        ctx.tie = a._data == b._data
        return xp.maximum(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        return _select_grad(grad, ctx.a_wins, ctx.tie, True), _select_grad(grad, ctx.a_wins, ctx.tie, False)


class Minimum(Function):
    @staticmethod
    def forward(ctx, a, b):
        xp = xp_of(a)
        ctx.a_wins = a._data < b._data
        ctx.tie = a._data == b._data
        return xp.minimum(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        return _select_grad(grad, ctx.a_wins, ctx.tie, True), _select_grad(grad, ctx.a_wins, ctx.tie, False)


def _select_grad(grad, a_wins, tie, for_a):
    """Gradient routing of max/min: the winner takes it, ties split it evenly (as torch)."""
    xp = xp_of(grad)
    wins = a_wins if for_a else ~(a_wins | tie)
    weight = xp.where(tie, 0.5, wins.astype(np.float64)).astype(grad._data.dtype)
    return mul(grad, _wrap(weight))


def _tensor_pair(a, b):
    a, b = promote_operands(a, b)
    ref = _first_tensor(a, b)
    from .creation import tensor

    if not isinstance(a, Tensor):
        a = tensor(a, dtype=ref.dtype, device=ref.device)
    if not isinstance(b, Tensor):
        b = tensor(b, dtype=ref.dtype, device=ref.device)
    return a, b


def maximum(input, other):
    return Maximum.apply(*_tensor_pair(input, other))


def minimum(input, other):
    return Minimum.apply(*_tensor_pair(input, other))


class _NanIgnoring(Function):
    """fmax/fmin: NaN loses to a number; the result is NaN only where both are NaN.

    The gradient follows torch's rule: all of it goes to input where input wins or ties or
    other is NaN, and all of it to other elsewhere (no even split of ties, unlike maximum).
    """

    largest = True

    @classmethod
    def forward(cls, ctx, a, b):
        xp = xp_of(a)
        ad, bd = a._data, b._data
        if ad.dtype in (np.float16, _dtype.bfloat16.np_dtype):
            ad, bd = widen(ad), widen(bd)
        ctx.input_takes = ((ad >= bd) if cls.largest else (ad <= bd)) | xp.isnan(bd)
        return _binary_result(xp.fmax if cls.largest else xp.fmin, a, b)

    @staticmethod
    def backward(ctx, grad):
        takes = _wrap(ctx.input_takes)
        ga = where(takes, grad, 0.0) if ctx.needs_input_grad[0] else None
        gb = where(takes, 0.0, grad) if ctx.needs_input_grad[1] else None
        return ga, gb


class Fmax(_NanIgnoring):
    largest = True


class Fmin(_NanIgnoring):
    largest = False


def _nan_ignoring(cls, name, input, other):
    for position, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}")
    return cls.apply(*_tensor_pair(input, other))


def fmax(input, other, *, out=None):
    """Elementwise maximum that ignores NaN: NaN only where both inputs are NaN."""
    if out is not None:
        return write_out("fmax", out, fmax, input, other)
    return _nan_ignoring(Fmax, "fmax", input, other)


def fmin(input, other, *, out=None):
    """Elementwise minimum that ignores NaN: NaN only where both inputs are NaN."""
    if out is not None:
        return write_out("fmin", out, fmin, input, other)
    return _nan_ignoring(Fmin, "fmin", input, other)


# --- unary math -------------------------------------------------------------------------


def _unary(name, compute, derivative, keep_int=False, uses_output=False):
    """Build a unary op: compute(xp, array) forward; derivative(grad, x, y) backward.

    Backward gets the input x or, when `uses_output`, the output y (the other is None): only
    that one is saved, so in-place updates of the other stay legal as in torch.
    """

    def forward(ctx, x):
        xp = xp_of(x)
        y = _wrap(compute_float(lambda arr: compute(xp, arr, x), x._data))
        ctx.save_for_backward(None, y) if uses_output else ctx.save_for_backward(x, None)
        return y

    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        return derivative(grad, x, y)

    cls = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)})

    def op(input, *, out=None):
        if out is not None:
            return write_out(op.__name__, out, op, input)
        if not keep_int and not input.is_floating_point():
            input = cast(input, _dtype.get_default_dtype())
        return cls.apply(input)

    op.__name__ = name.lower()
    op.__qualname__ = op.__name__
    op.function = cls
    return op


exp = _unary("Exp", lambda xp, a, x: xp.exp(a), lambda g, x, y: mul(g, y), uses_output=True)
exp2 = _unary("Exp2", lambda xp, a, x: xp.exp2(a), lambda g, x, y: mul(g, mul(y, math.log(2.0))), uses_output=True)
expm1 = _unary("Expm1", lambda xp, a, x: xp.expm1(a), lambda g, x, y: mul(g, add(y, 1)), uses_output=True)
log = _unary("Log", lambda xp, a, x: xp.log(a), lambda g, x, y: div(g, x))
log2 = _unary("Log2", lambda xp, a, x: xp.log2(a), lambda g, x, y: div(g, mul(x, math.log(2.0))))
log10 = _unary("Log10", lambda xp, a, x: xp.log10(a), lambda g, x, y: div(g, mul(x, math.log(10.0))))
log1p = _unary("Log1p", lambda xp, a, x: xp.log1p(a), lambda g, x, y: div(g, add(x, 1)))
sqrt = _unary("Sqrt", lambda xp, a, x: xp.sqrt(a), lambda g, x, y: div(g, mul(y, 2)), uses_output=True)
rsqrt = _unary("Rsqrt", lambda xp, a, x: 1 / xp.sqrt(a), lambda g, x, y: mul(g, mul(pow(y, 3), -0.5)), uses_output=True)
sin = _unary("Sin", lambda xp, a, x: xp.sin(a), lambda g, x, y: mul(g, cos(x)))
cos = _unary("Cos", lambda xp, a, x: xp.cos(a), lambda g, x, y: mul(g, neg(sin(x))))
tan = _unary("Tan", lambda xp, a, x: xp.tan(a), lambda g, x, y: mul(g, add(mul(y, y), 1)), uses_output=True)
asin = _unary("Asin", lambda xp, a, x: xp.arcsin(a), lambda g, x, y: div(g, sqrt(rsub(mul(x, x), 1))))
acos = _unary("Acos", lambda xp, a, x: xp.arccos(a), lambda g, x, y: neg(div(g, sqrt(rsub(mul(x, x), 1)))))
atan = _unary("Atan", lambda xp, a, x: xp.arctan(a), lambda g, x, y: div(g, add(mul(x, x), 1)))
sinh = _unary("Sinh", lambda xp, a, x: xp.sinh(a), lambda g, x, y: mul(g, cosh(x)))
cosh = _unary("Cosh", lambda xp, a, x: xp.cosh(a), lambda g, x, y: mul(g, sinh(x)))
tanh = _unary("Tanh", lambda xp, a, x: xp.tanh(a), lambda g, x, y: mul(g, rsub(mul(y, y), 1)), uses_output=True)
asinh = _unary("Asinh", lambda xp, a, x: xp.arcsinh(a), lambda g, x, y: div(g, sqrt(add(mul(x, x), 1))))
atanh = _unary("Atanh", lambda xp, a, x: xp.arctanh(a), lambda g, x, y: div(g, rsub(mul(x, x), 1)))
sigmoid = _unary("Sigmoid", lambda xp, a, x: _stable_sigmoid(xp, a),
                 lambda g, x, y: mul(g, mul(y, rsub(y, 1))), uses_output=True)
erf = _unary("Erf", lambda xp, a, x: special_of(x).erf(a),
             lambda g, x, y: mul(g, mul(exp(neg(mul(x, x))), 2.0 / math.sqrt(math.pi))))
erfc = _unary("Erfc", lambda xp, a, x: special_of(x).erfc(a),
              lambda g, x, y: mul(g, mul(exp(neg(mul(x, x))), -2.0 / math.sqrt(math.pi))))
erfinv = _unary("Erfinv", lambda xp, a, x: special_of(x).erfinv(a),
                lambda g, x, y: mul(g, mul(exp(mul(y, y)), math.sqrt(math.pi) / 2.0)), uses_output=True)
reciprocal = _unary("Reciprocal", lambda xp, a, x: 1 / a, lambda g, x, y: neg(mul(g, mul(y, y))), uses_output=True)
abs = _unary("Abs", lambda xp, a, x: xp.abs(a), lambda g, x, y: mul(g, sign(x)), keep_int=True)
square = _unary("Square", lambda xp, a, x: a * a, lambda g, x, y: mul(g, mul(x, 2)), keep_int=True)
Square = square.function
lgamma = _unary("Lgamma", lambda xp, a, x: special_of(x).gammaln(a),
                lambda g, x, y: mul(g, digamma(x)))
digamma = _unary("Digamma", lambda xp, a, x: special_of(x).digamma(a),
                 lambda g, x, y: mul(g, _wrap(special_of(x).polygamma(1, x._data).astype(x._data.dtype))))
absolute = abs
arcsin, arccos, arctan, arcsinh, arctanh = asin, acos, atan, asinh, atanh


def _stable_sigmoid(xp, a):
    # exp of a large negative number overflows to inf harmlessly; no warnings, no NaN.
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + xp.exp(-a))


def logit(input, eps=None):
    x = input if eps is None else clamp(input, eps, 1 - eps)
    return log(div(x, rsub(x, 1)))


def _nondiff_unary(fn, input, keep_dtype=True):
    xp = xp_of(input)
    out = compute_float(lambda a: fn(xp, a), input._data) if is_float_array(input._data) else fn(xp, input._data)
    return _wrap(out)


def sign(input):
    return _nondiff_unary(lambda xp, a: xp.sign(a), input)


def sgn(input):
    return sign(input)


def floor(input):
    return _rounding(input, "floor")


def ceil(input):
    return _rounding(input, "ceil")


def trunc(input):
    return _rounding(input, "trunc")


fix = trunc


def round(input, *, decimals=0):
    return _rounding(input, "round", decimals)


class _ZeroGrad(Function):
    """Piecewise-constant ops (floor, ceil, trunc, round): gradient zero, as torch defines it.

    The op is named by its array function's name (and round's decimals), not passed as a
    Python function, so that a captured graph and an ONNX export can hold it."""

    @staticmethod
    def forward(ctx, x, name, decimals=0):
        fn = getattr(xp_of(x), name)
        return compute_float(lambda a: fn(a, decimals) if name == "round" else fn(a), x._data)

    @staticmethod
    def backward(ctx, grad):
        return mul(grad, 0.0), None, None


def _rounding(input, name, decimals=0):
    if not input.is_floating_point():
        return input.clone() if hasattr(input, "clone") else input
    return _ZeroGrad.apply(input, name, decimals)


def frac(input):
    return sub(input, trunc(input))


class Clamp(Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        xp = xp_of(x)
        lo_d, hi_d = _data(lo), _data(hi)
        out = x._data
        keep = xp.ones(x._data.shape, dtype=bool)
        if lo_d is not None:
            keep = keep & (x._data >= lo_d)
            out = xp.maximum(out, lo_d).astype(x._data.dtype, copy=False)
        if hi_d is not None:
            keep = keep & (x._data <= hi_d)
            out = xp.minimum(out, hi_d).astype(x._data.dtype, copy=False)
        if hi_d is not None and lo_d is not None:
            out = xp.where(xp.asarray(lo_d) > xp.asarray(hi_d), hi_d, out).astype(x._data.dtype, copy=False)
        ctx.keep = keep
        return out if out is not x._data else out.copy()

    @staticmethod
    def backward(ctx, grad):
        return mul(grad, _wrap(ctx.keep.astype(grad._data.dtype))), None, None


def clamp(input, min=None, max=None, *, out=None):
    if out is not None:
        return write_out("clamp", out, clamp, input, min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    dtype = _dtype.result_type(input, *(v for v in (min, max) if v is not None))
    if dtype.np_dtype != input._data.dtype:
        input = cast(input, dtype)
    lo = cast(min, dtype) if isinstance(min, Tensor) else min
    hi = cast(max, dtype) if isinstance(max, Tensor) else max
    return Clamp.apply(input, lo, hi)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    xp = xp_of(input)
    fn = (lambda a: xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf))
    return _wrap(compute_float(fn, input._data) if is_float_array(input._data) else input._data.copy())


# --- selection ---------------------------------------------------------------------------


class Where(Function):
    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.cond = cond._data
        out = xp_of(cond).where(cond._data, _data(a), _data(b))
        target = _first_tensor(a, b)._data.dtype
        return out if out.dtype == target else out.astype(target)

    @staticmethod
    def backward(ctx, grad):
        mask = _wrap(ctx.cond)
        ga = where(mask, grad, 0.0) if ctx.needs_input_grad[1] else None
        gb = where(mask, 0.0, grad) if ctx.needs_input_grad[2] else None
        return None, ga, gb


def where(condition, input=None, other=None):
    """Select from input where condition holds, else other; where(cond) is nonzero(as_tuple)."""
    if input is None and other is None:
        from .indexing import nonzero

        return nonzero(condition, as_tuple=True)
    if condition.dtype is not _dtype.bool_:
        condition = cast(condition, _dtype.bool_)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        from .creation import tensor

        input = tensor(input, dtype=_dtype.result_type(input, other), device=condition.device)
    a, b = promote_operands(input, other)
    return Where.apply(condition, a, b)


class Lerp(Function):
    @staticmethod
    def forward(ctx, start, end, weight):
        ctx.save_for_backward(start, end, weight if isinstance(weight, Tensor) else None)
        ctx.weight = weight
        w = _data(weight)
        return start._data + w * (end._data - start._data)

    @staticmethod
    def backward(ctx, grad):
        start, end, w_t = ctx.saved_tensors
        w = w_t if w_t is not None else ctx.weight
        gw = mul(grad, sub(end, start)) if ctx.needs_input_grad[2] else None
        return mul(grad, rsub(w, 1) if w_t is not None else 1 - w), mul(grad, w), gw


def lerp(input, end, weight):
    return Lerp.apply(input, end, weight)


def addcmul(input, tensor1, tensor2, *, value=1):
    return add(input, mul(mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    return add(input, mul(div(tensor1, tensor2), value))


def hypot(input, other):
    return sqrt(add(mul(input, input), mul(other, other)))


def atan2(input, other):
    a, b = _tensor_pair(input, other)
    if not a.is_floating_point():
        a, b = cast(a, _dtype.get_default_dtype()), cast(b, _dtype.get_default_dtype())
    return Atan2.apply(a, b)


class Atan2(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary_result(xp_of(a).arctan2, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        denom = add(mul(a, a), mul(b, b))
        return mul(grad, div(b, denom)), mul(grad, div(neg(a), denom))


arctan2 = atan2


# --- comparison and logic (never differentiable) -----------------------------------------


def _compare(fn_name, name):
    def op(input, other, *, out=None):
        if out is not None:
            return write_out(name, out, op, input, other)
        a, b = promote_operands(input, other, wrap_ints=False)
        ref = _first_tensor(a, b)
        try:
            return array_op(getattr(xp_of(ref), fn_name), a, b)
        except ValueError:
            raise broadcast_error(_data(a), _data(b)) from None

    op.__name__ = name
    return op


eq = _compare("equal", "eq")
ne = _compare("not_equal", "ne")
lt = _compare("less", "lt")
le = _compare("less_equal", "le")
gt = _compare("greater", "gt")
ge = _compare("greater_equal", "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(fn_name):
    def op(input, other, *, out=None):
        if out is not None:
            return write_out(fn_name, out, op, input, other)
        ref = _first_tensor(input, other)
        return array_op(getattr(xp_of(ref), fn_name), input, other)

    op.__name__ = fn_name
    return op


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


def logical_not(input, *, out=None):
    if out is not None:
        return write_out("logical_not", out, logical_not, input)
    return array_op(xp_of(input).logical_not, input)


def _bitwise(fn_name):
    def op(input, other):
        a, b = promote_operands(input, other)
        ref = _first_tensor(a, b)
        if ref.is_floating_point():
            raise NotImplementedError(f'"{fn_name}_cpu" not implemented for \'{_dtype.scalar_type_name(ref.dtype)}\'')
        return array_op(getattr(xp_of(ref), fn_name), a, b)

    op.__name__ = fn_name
    return op


bitwise_and = _bitwise("bitwise_and")
bitwise_or = _bitwise("bitwise_or")
bitwise_xor = _bitwise("bitwise_xor")
bitwise_left_shift = _bitwise("left_shift")
bitwise_right_shift = _bitwise("right_shift")


def bitwise_not(input):
    if input.is_floating_point():
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    return array_op(xp_of(input).invert, input)


def isnan(input):
    return _wrap(xp_of(input).isnan(input._data.astype(np.float32) if input._data.dtype.name == "bfloat16"
                                    else input._data))


def isinf(input):
    data = input._data.astype(np.float32) if input._data.dtype.name == "bfloat16" else input._data
    return _wrap(xp_of(input).isinf(data))


def isfinite(input):
    data = input._data.astype(np.float32) if input._data.dtype.name == "bfloat16" else input._data
    return _wrap(xp_of(input).isfinite(data))


def isposinf(input):
    return logical_and(isinf(input), gt(input, 0))


def isneginf(input):
    return logical_and(isinf(input), lt(input, 0))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _tensor_pair(input, other)
    return _wrap(xp_of(a).isclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """True when both tensors have the same shape and elements."""
    return tuple(input.shape) == tuple(other.shape) and bool((input._data == other._data).all())
