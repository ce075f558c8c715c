# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gradient clipping: by total norm (clip_grad_norm_) or by value (clip_grad_value_)."""
import math

import numpy as np

from ... import ops
from ..._tensor import Tensor, _wrap
from ...autograd import grad_mode
from ...ops._helpers import HALF_NP, widen, xp_of

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm_array(array, xp, norm_type):
    """The p-norm of all entries of an array as a 0-d float array (inf, -inf and 0 included)."""
    a = xp.abs(widen(array))
    if a.size == 0:
        return xp.zeros((), dtype=a.dtype)
    if norm_type == math.inf:
        return a.max()
    if norm_type == -math.inf:
        return a.min()
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=a.dtype)
    if norm_type == 1:
        return a.sum()
    if norm_type == 2:
        return xp.sqrt((a * a).sum())
    return (a ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of `tensors` (= the norm of all their entries together)."""
    tensors = [t for t in _as_list(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return ops.tensor(0.0)
    first = tensors[0]
    xp = xp_of(first)
    norms = [_vector_norm_array(t.to(first.device)._data, xp, norm_type) for t in tensors]
    total = _vector_norm_array(xp.stack([xp.asarray(n, dtype=np.float64) for n in norms]), xp, norm_type)
    out_dtype = np.float32 if first._data.dtype in HALF_NP else first._data.dtype
    total_norm = _wrap(xp.asarray(total, dtype=out_dtype))
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total_norm


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients in place by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = min(float(max_norm) / (float(total_norm) + 1e-6), 1.0)
    with grad_mode.no_grad():
        for g in grads:
            g.mul_(coef)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients so that their total norm is at most max_norm; returns the norm before clipping."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient entry into [-clip_value, clip_value], in place."""
    clip_value = float(clip_value)
    with grad_mode.no_grad():
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
