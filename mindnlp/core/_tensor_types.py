# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch's legacy tensor types: `core.FloatTensor`, `core.LongTensor`, ... for the CPU dtypes.

As in torch, each is a type whose isinstance check asks for a cpu tensor of its dtype
(`isinstance(mask, core.BoolTensor)`), and calling it builds such a tensor: from data
(`core.LongTensor([1, 2])`) or sizes (`core.FloatTensor(2, 3)`, uninitialised in torch).
"""
from . import _dtype
from ._tensor import Tensor


class tensortype(type):
    """The metaclass of the legacy tensor types (torch.tensortype)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __repr__(cls):
        return f"<class 'core.{cls.__name__}'>"


def _legacy_type(name, dtype):
    def __new__(cls, *args):
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(dtype=dtype, device="cpu")
        return Tensor(*args, dtype=dtype, device="cpu")

    return tensortype(name, (), {"dtype": dtype, "is_cuda": False, "__new__": __new__, "__module__": "mindnlp.core"})


FloatTensor = _legacy_type("FloatTensor", _dtype.float32)
DoubleTensor = _legacy_type("DoubleTensor", _dtype.float64)
HalfTensor = _legacy_type("HalfTensor", _dtype.float16)
BFloat16Tensor = _legacy_type("BFloat16Tensor", _dtype.bfloat16)
LongTensor = _legacy_type("LongTensor", _dtype.int64)
IntTensor = _legacy_type("IntTensor", _dtype.int32)
ShortTensor = _legacy_type("ShortTensor", _dtype.int16)
CharTensor = _legacy_type("CharTensor", _dtype.int8)
ByteTensor = _legacy_type("ByteTensor", _dtype.uint8)
BoolTensor = _legacy_type("BoolTensor", _dtype.bool_)
