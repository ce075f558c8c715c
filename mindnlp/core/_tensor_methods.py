# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Bind the ops as Tensor methods and operators, and their in-place `_` variants."""
from . import _dtype, ops
from ._numpy_names import accept_numpy_names
from ._tensor import Tensor
from .ops import indexing
from .ops.inplace import apply_inplace


def _method(fn):
    fn = accept_numpy_names(fn)

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _inplace(fn, name):
    def method(self, *args, **kwargs):
        return apply_inplace(self, fn, *args, **kwargs)

    method.__name__ = name
    return method


_METHODS = [
    "abs", "absolute", "acos", "add", "addcdiv", "addcmul", "addmm", "all", "allclose", "amax", "amin", "any",
    "argmax", "argmin", "argwhere", "asin", "atan", "atan2", "baddbmm", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "bmm", "ceil", "chunk", "clamp", "clamp_max", "clamp_min", "clip", "contiguous",
    "cos", "cosh", "count_nonzero", "diag", "diagonal", "diag_embed", "div", "divide", "dot", "eq", "equal",
    "erf", "erfc", "erfinv", "exp", "exp2", "expand_as", "expm1", "flatten", "fliplr", "flipud", "float_power", "floor",
    "floor_divide", "fmod", "frac", "gather", "ge", "greater", "greater_equal", "gt", "hypot", "index_add",
    "index_copy", "index_fill", "index_put", "index_select", "inner", "isclose", "isfinite", "isinf", "isnan",
    "isneginf", "isposinf", "le", "lerp", "less", "less_equal", "lgamma", "digamma", "log", "log10", "log1p", "log2",
    "logical_and", "logical_not", "logical_or", "logical_xor", "logit", "lt", "masked_fill", "masked_scatter",
    "masked_select", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "movedim", "moveaxis", "mul",
    "multiply", "mv", "nan_to_num", "narrow", "ne", "neg", "negative", "nonzero", "not_equal", "outer", "pow",
    "reciprocal", "remainder", "repeat_interleave", "reshape_as", "roll", "round", "rsqrt", "scatter",
    "scatter_add", "scatter_reduce", "select", "sgn", "sigmoid", "sign", "sin", "sinh", "split", "sqrt", "square",
    "squeeze", "sub", "subtract", "sum", "swapaxes", "swapdims", "t", "take_along_dim", "tan", "tanh",
    "tensor_split", "tile", "transpose", "tril", "triu", "true_divide", "trunc", "unbind", "unflatten",
    "unsqueeze", "view_as", "adjoint", "fix", "fmax", "fmin", "arctan2", "tan", "asinh", "atanh",
    "arcsin", "arccos", "arctan", "arcsinh", "arctanh", "vdot", "ger",
    "var", "std", "logsumexp", "prod", "cumsum", "cumprod", "cummax", "cummin", "norm", "aminmax", "median",
    "nanmedian", "nansum", "nanmean", "mode", "quantile", "nanquantile", "sort", "argsort", "msort", "topk",
    "kthvalue", "unique", "unique_consecutive", "bincount", "histc", "diff", "kron", "trace", "is_nonzero",
]

for _name in _METHODS:
    setattr(Tensor, _name, _method(getattr(ops, _name)))

# Methods whose shape arguments may come as varargs: x.view(2, 3) or x.view((2, 3)).
Tensor.view = lambda self, *shape: ops.view(self, *shape)
Tensor.reshape = lambda self, *shape: ops.reshape(self, *shape)
Tensor.permute = lambda self, *dims: ops.permute(self, *dims)
Tensor.expand = lambda self, *sizes: ops.expand(self, *sizes)
Tensor.repeat = lambda self, *sizes: ops.repeat(self, *sizes)
Tensor.flip = lambda self, *dims: ops.flip(self, dims[0] if len(dims) == 1 else dims)
Tensor.clone = lambda self, memory_format=None: ops.clone(self)
Tensor.broadcast_to = lambda self, shape: ops.expand(self, tuple(shape))
Tensor.where = lambda self, condition, other: ops.where(condition, self, other)
Tensor.unfold = lambda self, dimension, size, step: ops.shape._unfold(self, dimension, size, step)


def _functional():
    """nn.functional, imported on first use: it is built on this module's Tensor methods."""
    from .nn import functional

    return functional


Tensor.softmax = accept_numpy_names(lambda self, dim, dtype=None: _functional().softmax(self, dim, dtype=dtype))
Tensor.log_softmax = accept_numpy_names(
    lambda self, dim, dtype=None: _functional().log_softmax(self, dim, dtype=dtype))
Tensor.relu = lambda self: _functional().relu(self)


@property
def _T(self):
    return ops.permute(self, tuple(reversed(range(self.ndim))))


@property
def _mT(self):
    return ops.transpose(self, -2, -1)


Tensor.T = _T
Tensor.mT = _mT
Tensor.H = _T


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        if len(size) == 1 and isinstance(size[0], (list, tuple)):
            size = tuple(size[0])
        return fn(size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    return method


Tensor.new_zeros = _new_factory(ops.zeros)
Tensor.new_ones = _new_factory(ops.ones)
Tensor.new_empty = _new_factory(ops.empty)
Tensor.new_full = lambda self, size, fill_value, dtype=None, device=None, requires_grad=False: ops.full(
    size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)
Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: ops.new_tensor_like(
    self, data, dtype, device, requires_grad)

# --- operators ---
Tensor.__add__ = lambda a, b: ops.add(a, b)
Tensor.__radd__ = lambda a, b: ops.add(b, a)
Tensor.__sub__ = lambda a, b: ops.sub(a, b)
Tensor.__rsub__ = lambda a, b: ops.sub(b, a)
Tensor.__mul__ = lambda a, b: ops.mul(a, b)
Tensor.__rmul__ = lambda a, b: ops.mul(b, a)
Tensor.__truediv__ = lambda a, b: ops.div(a, b)
Tensor.__rtruediv__ = lambda a, b: ops.div(b, a)
Tensor.__floordiv__ = lambda a, b: ops.floor_divide(a, b)
Tensor.__rfloordiv__ = lambda a, b: ops.floor_divide(b, a)
Tensor.__mod__ = lambda a, b: ops.remainder(a, b)
Tensor.__rmod__ = lambda a, b: ops.remainder(b, a)
Tensor.__pow__ = lambda a, b: ops.pow(a, b)
Tensor.__rpow__ = lambda a, b: ops.pow(b, a)
Tensor.__matmul__ = lambda a, b: ops.matmul(a, b)
Tensor.__rmatmul__ = lambda a, b: ops.matmul(b, a)
Tensor.__neg__ = lambda a: ops.neg(a)
Tensor.__pos__ = lambda a: a
Tensor.__abs__ = lambda a: ops.abs(a)
Tensor.__invert__ = lambda a: ops.bitwise_not(a) if a.dtype is not _dtype.bool_ else ops.logical_not(a)
Tensor.__and__ = lambda a, b: ops.bitwise_and(a, b)
Tensor.__rand__ = lambda a, b: ops.bitwise_and(b, a)
Tensor.__or__ = lambda a, b: ops.bitwise_or(a, b)
Tensor.__ror__ = lambda a, b: ops.bitwise_or(b, a)
Tensor.__xor__ = lambda a, b: ops.bitwise_xor(a, b)
Tensor.__rxor__ = lambda a, b: ops.bitwise_xor(b, a)
Tensor.__lshift__ = lambda a, b: ops.bitwise_left_shift(a, b)
Tensor.__rshift__ = lambda a, b: ops.bitwise_right_shift(a, b)
Tensor.__eq__ = lambda a, b: ops.eq(a, b) if _comparable(b) else NotImplemented
Tensor.__ne__ = lambda a, b: ops.ne(a, b) if _comparable(b) else NotImplemented
Tensor.__lt__ = lambda a, b: ops.lt(a, b)
Tensor.__le__ = lambda a, b: ops.le(a, b)
Tensor.__gt__ = lambda a, b: ops.gt(a, b)
Tensor.__ge__ = lambda a, b: ops.ge(a, b)
Tensor.__getitem__ = lambda self, key: indexing.getitem(self, key)
Tensor.__setitem__ = lambda self, key, value: indexing.setitem(self, key, value)
Tensor.__hash__ = lambda self: id(self)


def _comparable(other):
    import numbers

    import numpy as np

    return isinstance(other, (Tensor, numbers.Number, np.generic))


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(ops.unbind(self, 0))


Tensor.__iter__ = _iter

# --- in-place variants: a_.op_(...) computes op and writes back into a ---
_INPLACE = [
    "abs", "add", "addcdiv", "addcmul", "clamp", "clamp_max", "clamp_min", "clip", "cos", "div", "erf", "exp",
    "floor", "ceil", "fmod", "lerp", "log", "masked_fill", "masked_scatter", "mul", "neg", "pow", "reciprocal",
    "remainder", "round", "rsqrt", "sigmoid", "sin", "sqrt", "square", "sub", "tanh", "trunc", "index_add",
    "index_copy", "index_fill", "index_put", "scatter", "scatter_add", "scatter_reduce", "tril", "triu",
    "logical_and", "logical_or", "logical_not", "nan_to_num", "baddbmm", "addmm", "log1p", "expm1", "frac",
    "sign", "floor_divide", "bitwise_and", "bitwise_or", "t", "transpose", "squeeze", "unsqueeze", "swapaxes",
    "cumsum", "cumprod",
]
for _name in _INPLACE:
    setattr(Tensor, _name + "_", _inplace(getattr(ops, _name), _name + "_"))


def _inplace_operator(fn):
    def op(self, other):
        return apply_inplace(self, fn, other)

    return op


Tensor.__iadd__ = _inplace_operator(ops.add)
Tensor.__isub__ = _inplace_operator(ops.sub)
Tensor.__imul__ = _inplace_operator(ops.mul)
Tensor.__itruediv__ = _inplace_operator(ops.div)
Tensor.__ifloordiv__ = _inplace_operator(ops.floor_divide)
Tensor.__imod__ = _inplace_operator(ops.remainder)
Tensor.__ipow__ = _inplace_operator(ops.pow)
Tensor.__iand__ = _inplace_operator(ops.bitwise_and)
Tensor.__ior__ = _inplace_operator(ops.bitwise_or)
Tensor.__ixor__ = _inplace_operator(ops.bitwise_xor)


def _copy_(self, src, non_blocking=False):
    """Copy src's values into self (broadcast, cast, moved across devices); recorded."""
    if not isinstance(src, Tensor):
        src = ops.tensor(src, device=self.device)
    return apply_inplace(self, lambda t, s: ops.expand(s.to(device=t.device, dtype=t.dtype), tuple(t.shape)), src)


def _fill_(self, value):
    return apply_inplace(self, lambda t, v: ops.full_like(t, v.item() if isinstance(v, Tensor) else v), value)


def _zero_(self):
    return _fill_(self, 0)


Tensor.copy_ = _copy_
Tensor.fill_ = _fill_
Tensor.zero_ = _zero_


def _random_methods():
    from . import random

    Tensor.uniform_ = lambda self, a=0.0, b=1.0, generator=None: random.uniform_(self, a, b, generator)
    Tensor.normal_ = lambda self, mean=0.0, std=1.0, generator=None: random.normal_(self, mean, std, generator)
    Tensor.bernoulli_ = lambda self, p=0.5, generator=None: random.bernoulli_(self, p, generator)
    Tensor.exponential_ = lambda self, lambd=1.0, generator=None: random.exponential_(self, lambd, generator)
    Tensor.random_ = lambda self, low=0, high=None, generator=None: random.random_(self, low, high, generator)
    Tensor.bernoulli = lambda self, p=None, generator=None: random.bernoulli(self, p, generator=generator)
    Tensor.multinomial = lambda self, num_samples, replacement=False, generator=None: random.multinomial(
        self, num_samples, replacement, generator=generator)


_random_methods()
