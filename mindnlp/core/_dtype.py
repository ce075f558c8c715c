# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Tensor dtypes and PyTorch's type-promotion rules.

NumPy's promotion differs from torch's (int64 + float32 gives float64 in NumPy, float32 in
torch; a Python float does not widen a float32 tensor in torch), so every op computes its
result dtype here and casts explicitly instead of trusting the array library.
"""
import builtins
import threading

import ml_dtypes
import numpy as np

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type: its name, NumPy storage dtype and promotion category."""

    __slots__ = ("name", "np_dtype", "is_floating_point", "is_signed", "itemsize", "category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np_dtype = np.dtype(np_dtype)
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_signed = category != _BOOL and name != "uint8"
        self.itemsize = self.np_dtype.itemsize

    def __repr__(self):
        return f"core.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    @property
    def is_complex(self):
        return False

    def to_complex(self):
        raise TypeError(f"{self} has no complex counterpart in mindnlp.core")


def _dtype_by_name(name):
    return _BY_NAME[name]


bool_ = dtype("bool", np.bool_, _BOOL)
uint8 = dtype("uint8", np.uint8, _INT)
int8 = dtype("int8", np.int8, _INT)
int16 = dtype("int16", np.int16, _INT)
int32 = dtype("int32", np.int32, _INT)
int64 = dtype("int64", np.int64, _INT)
float16 = dtype("float16", np.float16, _FLOAT)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT)
float32 = dtype("float32", np.float32, _FLOAT)
float64 = dtype("float64", np.float64, _FLOAT)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np_dtype: d for d in ALL_DTYPES}
# Storage-only dtypes on CPU: compute is done in float32 and rounded back, as torch does.
HALF_DTYPES = (float16, bfloat16)

# Rank of each type inside its category, for promotion between two ints or two floats.
_INT_RANK = {uint8: 0, int8: 0, int16: 1, int32: 2, int64: 3}
_FLOAT_RANK = {float16: 0, bfloat16: 0, float32: 1, float64: 2}


def from_numpy_dtype(np_dtype):
    """Map a NumPy (or CuPy) array dtype to the core dtype; unsupported ones are an error."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        try:
            return _BY_NP[np.dtype(np_dtype)]
        except (KeyError, TypeError):
            raise TypeError(f"arrays of dtype {np_dtype} are not supported by mindnlp.core") from None


def as_dtype(value):
    """Accept a core dtype, a NumPy dtype, a Python type, or a name such as 'float32'."""
    if isinstance(value, dtype):
        return value
    if value is builtins.float:
        return get_default_dtype()
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool_
    if isinstance(value, str):
        name = value.removeprefix("torch.").removeprefix("core.")
        found = _BY_NAME.get(name) or _ALIASES.get(name)
        if found is None:
            raise TypeError(f"unknown dtype name {value!r}")
        return found
    return from_numpy_dtype(value)


def promote_types(a, b):
    """torch.promote_types: the smallest dtype both a and b convert to without losing kind."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if _FLOAT_RANK[a] >= _FLOAT_RANK[b] else b
    if a.category == _INT:
        if {a, b} == {uint8, int8}:
            return int16
        if a is uint8:
            return b
        if b is uint8:
            return a
        return a if _INT_RANK[a] >= _INT_RANK[b] else b
    return a


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return bool_
    if isinstance(value, builtins.int):
        return int64
    return get_default_dtype()


def _combine(higher, lower):
    """torch's combine_categories: a lower-priority operand widens the result only when the
    higher one is bool or the lower one is floating."""
    if higher is None:
        return lower
    if lower is None or higher.category == _FLOAT:
        return higher
    if higher is bool_ or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """torch.result_type over tensors and Python scalars.

    Tensors with dimensions decide the dtype; zero-dim tensors and then Python scalars only
    matter when they belong to a higher category (bool < integer < floating). So
    `float16_tensor * 2.0` stays float16 and `int_tensor * 2.5` becomes the default float.
    """
    dim = zero = wrapped = None
    for op in operands:
        if hasattr(op, "_data"):
            d = from_numpy_dtype(op._data.dtype)
            if op._data.ndim:
                dim = d if dim is None else promote_types(dim, d)
            else:
                zero = d if zero is None else promote_types(zero, d)
        elif op is not None:
            d = _scalar_dtype(op)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


class _DefaultDtype(threading.local):
    value = float32


_default = _DefaultDtype()


def get_default_dtype():
    return _default.value


def set_default_dtype(d):
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"the default dtype must be a floating point type, not {d}")
    _default.value = d


class finfo:
    """Machine limits of a floating dtype, as torch.finfo."""

    def __init__(self, type=None):
        type = get_default_dtype() if type is None else as_dtype(type)
        if not type.is_floating_point:
            raise TypeError(f"finfo needs a floating point dtype, got {type}")
        info = ml_dtypes.finfo(type.np_dtype) if type is bfloat16 else np.finfo(type.np_dtype)
        self.dtype = type
        self.bits = type.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = self.tiny
        self.resolution = float(info.resolution)


class iinfo:
    """Machine limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type):
        type = as_dtype(type)
        if type.category != _INT and type is not bool_:
            raise TypeError(f"iinfo needs an integer dtype, got {type}")
        info = np.iinfo(type.np_dtype) if type is not bool_ else np.iinfo(np.uint8)
        self.dtype = type
        self.bits = type.itemsize * 8
        self.max = int(info.max)
        self.min = int(info.min)


# How torch's error messages name dtypes: its ScalarType names ("Long") and, in some kernels,
# the C++ element types ("long int").
_SCALAR_TYPE_NAMES = {
    bool_: "Bool", uint8: "Byte", int8: "Char", int16: "Short", int32: "Int", int64: "Long", float16: "Half",
    bfloat16: "BFloat16", float32: "Float", float64: "Double",
}
_CPP_TYPE_NAMES = {
    bool_: "bool", uint8: "unsigned char", int8: "signed char", int16: "short int", int32: "int",
    int64: "long int", float16: "c10::Half", bfloat16: "c10::BFloat16", float32: "float", float64: "double",
}


def scalar_type_name(d):
    return _SCALAR_TYPE_NAMES[d]


def cpp_type_name(d):
    return _CPP_TYPE_NAMES[d]


_ALIASES = {
    "bool": bool_,
    "float": float32,
    "double": float64,
    "half": float16,
    "long": int64,
    "int": int32,
    "short": int16,
    "byte": uint8,
    "char": int8,
}
