# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Flatten parameters into one vector and write such a vector back."""
from ... import ops
from ..._tensor import Tensor
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_same_device(param, device):
    if device is not None and param.device != device:
        raise TypeError(
            f"Found two parameters on different devices, this is currently not supported. Got {device} and "
            f"{param.device}"
        )
    return param.device


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, in iteration order (differentiable)."""
    device = None
    flat = []
    for param in parameters:
        device = _check_same_device(param, device)
        flat.append(param.reshape(-1))
    return ops.cat(flat)


def vector_to_parameters(vec, parameters):
    """Replace each parameter's data by its slice of vec (the inverse of parameters_to_vector)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device = None
    offset = 0
    for param in parameters:
        device = _check_same_device(param, device)
        n = param.numel()
        param.data = ops.clone(vec[offset:offset + n].detach()).reshape(tuple(param.shape)).to(param.dtype)
        offset += n
