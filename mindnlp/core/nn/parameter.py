# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Parameter` and `Buffer`: tensors that a Module registers when they are assigned to it.

A Parameter is a Tensor subclass sharing the array (and version counter) of the tensor it
wraps, so `Parameter(t)` costs no copy. Module code tells parameters from other tensors by
`isinstance(value, Parameter)`.
"""
from .. import ops
from .._tensor import Tensor, _init_from


class Parameter(Tensor):
    """A leaf tensor that is a module's learnable state; requires grad unless told otherwise."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ops.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter data must be a Tensor, got {type(data).__name__}")
        param = Tensor.__new__(cls)
        _init_from(param, data)
        param.requires_grad = False
        if requires_grad:
            param.requires_grad_(True)
        return param

    def __init__(self, data=None, requires_grad=True):
        """All work is done in __new__ (the Tensor constructor must not run again)."""

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(ops.clone(self.detach()), self.requires_grad)
        if self.grad is not None:
            result.grad = ops.clone(self.grad.detach())
        result.__dict__.update(self.__dict__)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    """`isinstance(t, Buffer)` is true for tensors made by `Buffer(...)` (they stay plain tensors)."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(metaclass=_BufferMeta):
    """Mark a tensor to be registered as a buffer when assigned to a Module attribute.

    Returns a plain (detached) tensor carrying the flag and its persistence, as torch does.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ops.empty(0)
        tensor = data.detach()
        if data.requires_grad:
            tensor.requires_grad_(True)
        tensor._is_buffer = True
        tensor.persistent = persistent
        return tensor
