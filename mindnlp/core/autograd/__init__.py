# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Reverse-mode automatic differentiation: Function, backward, grad, gradcheck, grad modes."""
from .engine import run_backward
from .function import Function, Node, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .gradcheck import gradcheck, gradgradcheck


def _as_tuple(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of `tensors` into the `.grad` of the leaves (or of `inputs`)."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors) or (None,) * len(tensors)
    run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=_as_tuple(inputs), accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """Return d(outputs)/d(inputs) without touching any `.grad`.

    With `create_graph=True` the returned gradients are themselves differentiable, which is
    how higher derivatives are taken.
    """
    from .. import ops

    outputs = _as_tuple(outputs)
    single = not isinstance(inputs, (tuple, list))
    inputs = _as_tuple(inputs)
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(f"input {i} of grad() does not require grad")
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} entries for {len(outputs)} outputs")
    result = run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=inputs, accumulate=False)
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, g in enumerate(result):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                result[i] = ops.zeros_like(inputs[i])
    return tuple(result) if not single else (result[0],)


__all__ = [
    "Function",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]
