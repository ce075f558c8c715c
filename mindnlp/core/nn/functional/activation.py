# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Activation functions.

GELU (both forms) and SiLU are single fused nodes: forward runs on the backend arrays in
one pass and backward is written with core ops, so it is itself differentiable. GELU uses
the backend's fused kernels where it has them (the composed forms here are their
reference); so does SiLU. Their first-order backwards do too, unless the backward is being
recorded. The rest are short compositions of core ops, shaped so that no branch that
`where` discards can produce inf/NaN (its gradient would otherwise poison the kept branch).
"""
import math

from ... import _dtype, ops, random
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import HALF_NP, array_op, compute_float, fused_kernel, special_of, widen, xp_of
from ...ops.inplace import apply_inplace
from ...amp.autocast_mode import autocast_op

__all__ = [
    "celu", "elu", "gated_product", "gelu", "glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu",
    "logsigmoid", "mish", "prelu", "relu", "relu6", "relu_", "rrelu", "selu", "sigmoid", "silu", "softplus",
    "softshrink", "softsign", "tanh", "tanhshrink", "threshold",
]

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_TANH_COEF = 0.044715


def _fused(name, x, *others):
    """The result of the backend's fused kernel `name` on the arrays of x and others (of x's
    dtype), or None where none serves (float64, no kernel). A half x takes the kernel of its
    own, "<name>_half": 16-bit values in and out, rounded as the composed ops round."""
    kernel = fused_kernel(name + "_half" if x._data.dtype in HALF_NP else name, x)
    return None if kernel is None else kernel(x._data, *(o._data for o in others))


def _maybe_inplace(fn, input, inplace, *args):
    if inplace:
        return apply_inplace(input, fn, *args)
    return fn(input, *args)


class _GeluExact(Function):
    """x * Phi(x) with Phi the standard normal CDF."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        kernel = fused_kernel("gelu", x)
        if kernel is not None:
            return compute_float(kernel, x._data)
        erf = special_of(x).erf
        return compute_float(lambda a: 0.5 * a * (1.0 + erf(a / _SQRT_2)), x._data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        kernel = fused_kernel("gelu_backward", x)
        if kernel is not None and not grad_mode.is_grad_enabled():
            return array_op(lambda g, a: kernel(widen(g), widen(a)), grad, x)
        cdf = ops.mul(ops.add(ops.erf(ops.div(x, _SQRT_2)), 1.0), 0.5)
        pdf = ops.mul(ops.exp(ops.mul(ops.mul(x, x), -0.5)), _INV_SQRT_2PI)
        return ops.mul(grad, ops.add(cdf, ops.mul(x, pdf)))


class _GeluTanh(Function):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        fused = _fused("gelu_tanh", x)
        if fused is not None:
            return fused
        xp = xp_of(x)
        return compute_float(
            lambda a: 0.5 * a * (1.0 + xp.tanh(_SQRT_2_OVER_PI * (a + _GELU_TANH_COEF * a * a * a))), x._data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _gelu_tanh_input_grad(grad, x)


def _gelu_tanh_input_grad(grad, x):
    """grad * d gelu_tanh(x) / dx; recorded with core ops when grad mode is on."""
    kernel = fused_kernel("gelu_tanh_backward", x)
    if kernel is not None and not grad_mode.is_grad_enabled():
        return array_op(lambda g, a: kernel(widen(g), widen(a)), grad, x)
    x2 = ops.mul(x, x)
    inner = ops.mul(ops.mul(x, ops.add(ops.mul(x2, _GELU_TANH_COEF), 1.0)), _SQRT_2_OVER_PI)
    t = ops.tanh(inner)
    d_inner = ops.mul(ops.add(ops.mul(x2, 3 * _GELU_TANH_COEF), 1.0), _SQRT_2_OVER_PI)
    left = ops.mul(ops.add(t, 1.0), 0.5)
    right = ops.mul(ops.mul(ops.mul(x, 0.5), ops.rsub(ops.mul(t, t), 1.0)), d_inner)
    return ops.mul(grad, ops.add(left, right))


def gelu(input, approximate="none"):
    if approximate == "none":
        return _GeluExact.apply(input)
    if approximate == "tanh":
        return _GeluTanh.apply(input)
    raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")


class _Silu(Function):
    """x * sigmoid(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        fused = _fused("silu", x)
        if fused is not None:
            return fused
        xp = xp_of(x)

        def silu_array(a):
            sig = 1.0 / (1.0 + xp.exp(-xp.clip(a, -88.0, 88.0)))
            return a * sig

        return compute_float(silu_array, x._data)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _silu_input_grad(grad, x)


def _silu_input_grad(grad, x):
    """grad * d silu(x) / dx; recorded with core ops when grad mode is on."""
    kernel = fused_kernel("silu_backward", x)
    if kernel is not None and not grad_mode.is_grad_enabled():
        return array_op(lambda g, a: kernel(widen(g), widen(a)), grad, x)
    s = ops.sigmoid(x)
    return ops.mul(grad, ops.mul(s, ops.add(ops.mul(x, ops.rsub(s, 1.0)), 1.0)))


def silu(input, inplace=False):
    return _maybe_inplace(lambda t: _Silu.apply(t), input, inplace)


# activation name -> (the activation, grad * its derivative)
_GATE_ACTIVATIONS = {
    "silu": (silu, _silu_input_grad),
    "gelu_tanh": (lambda t: gelu(t, approximate="tanh"), _gelu_tanh_input_grad),
}


class _GatedProduct(Function):
    """act(gate) * up as one node: the fused kernel reads both inputs once and writes once,
    where the composed ops make four passes and two temporaries of the feed-forward width. Half
    inputs give the composed ops' bits: act's result is rounded before the product is."""

    @staticmethod
    def forward(ctx, gate, up, activation):
        ctx.save_for_backward(gate, up)
        ctx.activation = activation
        if gate.dtype == up.dtype and gate.shape == up.shape:
            fused = _fused("gated_" + activation, gate, up)
            if fused is not None:
                return fused
        return ops.mul(_GATE_ACTIVATIONS[activation][0](gate), up)._data

    @staticmethod
    def backward(ctx, grad):
        gate, up = ctx.saved_tensors
        act, input_grad = _GATE_ACTIVATIONS[ctx.activation]
        grad_gate = input_grad(ops.mul(grad, up), gate) if ctx.needs_input_grad[0] else None
        grad_up = ops.mul(grad, act(gate)) if ctx.needs_input_grad[1] else None
        return grad_gate, grad_up, None


def gated_product(gate, up, activation="silu"):
    """act(gate) * up, the gated feed-forward product of SwiGLU ("silu") and GeGLU
    ("gelu_tanh") layers, fused on the CPU backend."""
    if activation not in _GATE_ACTIVATIONS:
        raise ValueError(f"gated_product: activation must be one of {sorted(_GATE_ACTIVATIONS)}, got {activation!r}")
    if gate.shape != up.shape:
        raise RuntimeError(f"gated_product: gate {tuple(gate.shape)} and up {tuple(up.shape)} must have the same shape")
    return _GatedProduct.apply(gate, up, activation)


class _Relu(Function):
    @staticmethod
    def forward(ctx, x):
        out = xp_of(x).maximum(x._data, 0).astype(x._data.dtype, copy=False)
        ctx.save_for_backward(x)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ops.where(ops.gt(x, 0), grad, 0.0)


def relu(input, inplace=False):
    return _maybe_inplace(lambda t: _Relu.apply(t), input, inplace)


def relu_(input):
    return relu(input, inplace=True)


def threshold(input, threshold, value, inplace=False):
    """x where x > threshold, else value."""
    return _maybe_inplace(lambda t: ops.where(ops.gt(t, threshold), t, float(value)), input, inplace)


class _Hardtanh(Function):
    """clamp(x, lo, hi) whose gradient is zero at the bounds themselves, as torch defines it."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.bounds = (lo, hi)
        return xp_of(x).clip(x._data, lo, hi).astype(x._data.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        inside = ops.logical_and(ops.gt(x, lo), ops.lt(x, hi))
        return ops.where(inside, grad, 0.0), None, None


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(lambda t: _Hardtanh.apply(t, float(min_val), float(max_val)), input, inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _maybe_inplace(lambda t: ops.where(ops.gt(t, 0), t, ops.mul(t, negative_slope)), input, inplace)


@autocast_op("prelu", 2)
def prelu(input, weight):
    """x where x > 0, else weight * x: one learned slope, or one per channel (dim 1)."""
    count = weight.numel()
    if count != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != count:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{count} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    if count == 1:
        weight = weight.reshape(())
    elif input.ndim > 2:
        weight = weight.reshape((count,) + (1,) * (input.ndim - 2))
    return ops.where(ops.gt(input, 0), input, ops.mul(weight, input))


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each x <= 0 gets its own slope drawn from U(lower, upper);
    in eval the slope is the mean, (lower + upper) / 2."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)

    def fn(t):
        draws = random.rand(*t.shape, dtype=t.dtype, device=t.device)
        slopes = ops.add(ops.mul(draws, upper - lower), lower)
        return ops.mul(t, ops.where(ops.le(t, 0), slopes, 1.0))  # the slopes are constants: grad * slope

    return _maybe_inplace(fn, input, inplace)


def elu(input, alpha=1.0, inplace=False):
    def fn(t):
        return ops.where(ops.gt(t, 0), t, ops.mul(ops.expm1(ops.clamp_max(t, 0.0)), alpha))

    return _maybe_inplace(fn, input, inplace)


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")

    def fn(t):
        return ops.where(ops.gt(t, 0), t, ops.mul(ops.expm1(ops.div(ops.clamp_max(t, 0.0), alpha)), alpha))

    return _maybe_inplace(fn, input, inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _maybe_inplace(lambda t: ops.mul(elu(t, _SELU_ALPHA), _SELU_SCALE), input, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold (as torch)."""
    scaled = ops.mul(input, beta)
    smooth = ops.div(ops.log1p(ops.exp(ops.clamp_max(scaled, threshold))), beta)
    return ops.where(ops.gt(scaled, threshold), input, smooth)


def mish(input, inplace=False):
    return _maybe_inplace(lambda t: ops.mul(t, ops.tanh(softplus(t))), input, inplace)


def sigmoid(input):
    return ops.sigmoid(input)


def tanh(input):
    return ops.tanh(input)


def logsigmoid(input):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|."""
    return ops.sub(ops.minimum(input, 0.0), ops.log1p(ops.exp(ops.neg(ops.abs(input)))))


def hardsigmoid(input, inplace=False):
    return _maybe_inplace(lambda t: ops.div(hardtanh(ops.add(t, 3.0), 0.0, 6.0), 6.0), input, inplace)


def hardswish(input, inplace=False):
    return _maybe_inplace(lambda t: ops.mul(t, hardsigmoid(t)), input, inplace)


def softsign(input):
    return ops.div(input, ops.add(ops.abs(input), 1.0))


def tanhshrink(input):
    return ops.sub(input, ops.tanh(input))


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0."""
    return ops.where(ops.gt(ops.abs(input), lambd), input, 0.0)


def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    if lambd < 0:
        limit = _dtype.finfo(input.dtype).max if input.is_floating_point() else float("inf")
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype "
                           f"{_dtype.scalar_type_name(input.dtype)}, but found {lambd:g}")
    shrunk = ops.sub(input, ops.mul(ops.sign(input), lambd))
    return ops.where(ops.gt(ops.abs(input), lambd), shrunk, 0.0)


def glu(input, dim=-1):
    """First half of `dim` gated by the sigmoid of the second half."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.ndim} is size {size}")
    a, b = ops.chunk(input, 2, dim)
    return ops.mul(a, ops.sigmoid(b))
