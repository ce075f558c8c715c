# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Functional transforms in the MindSpore/functorch style: grad and value_and_grad.

`grad(fn)` returns a function computing d fn / d args. The transforms compose: each
application differentiates with `create_graph=True`, so `grad(grad(f))` differentiates the
first derivative's graph. At the outermost level (inputs that did not require grad) the
results are detached, so they come back as plain tensors.
"""
from . import autograd
from ._tensor import Tensor


def _argnums_tuple(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _prepare(args, argnums):
    """Make the differentiated args require grad without cutting them from an outer graph."""
    args = list(args)
    fresh = []
    for i in argnums:
        a = args[i]
        if not isinstance(a, Tensor):
            raise TypeError(f"argument {i} to differentiate must be a Tensor, got {type(a).__name__}")
        if not a.requires_grad:
            a = a.detach().requires_grad_(True)
            fresh.append(True)
        else:
            fresh.append(False)
        args[i] = a
    return args, fresh


def _detach_tree(obj):
    """Detach the tensors in aux outputs (nested tuples, lists, dicts), as the value is."""
    if isinstance(obj, Tensor):
        return obj.detach()
    if isinstance(obj, (tuple, list)):
        return type(obj)(_detach_tree(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _detach_tree(v) for k, v in obj.items()}
    return obj


def value_and_grad(fn, argnums=0, has_aux=False):
    """Return a function giving (value, grads) — ((value, aux), grads) with has_aux."""
    nums = _argnums_tuple(argnums)

    def wrapped(*args, **kwargs):
        with autograd.enable_grad():
            call_args, fresh = _prepare(args, nums)
            out = fn(*call_args, **kwargs)
            value, aux = (out[0], out[1]) if has_aux else (out, None)
            if not isinstance(value, Tensor) or value.numel() != 1:
                raise RuntimeError("value_and_grad: the function must return a scalar tensor")
            inputs = [call_args[i] for i in nums]
            grads = autograd.grad(value, inputs, create_graph=True, allow_unused=True, materialize_grads=True)
        grads = tuple(g.detach() if f else g for g, f in zip(grads, fresh))
        if all(fresh):
            value = value.detach()
            aux = _detach_tree(aux)
        result_grads = grads[0] if isinstance(argnums, int) else grads
        return ((value, aux) if has_aux else value), result_grads

    return wrapped


def grad(fn, argnums=0, has_aux=False):
    """Return a function computing the gradient of fn's scalar output (and aux if has_aux)."""
    vg = value_and_grad(fn, argnums, has_aux)

    def wrapped(*args, **kwargs):
        value, grads = vg(*args, **kwargs)
        if has_aux:
            return grads, value[1]
        return grads

    return wrapped


grad_and_value = value_and_grad
