# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Vector norms along a dim: cosine_similarity, pairwise_distance, normalize."""
import math

from ... import ops

__all__ = ["cosine_similarity", "normalize", "pairwise_distance"]


def vector_norm(x, p, dim, keepdim):
    """The p-norm of x along dim, composed of differentiable core ops."""
    if p == 2:
        return ops.sqrt(ops.sum(ops.mul(x, x), dim=dim, keepdim=keepdim))
    if p == 1:
        return ops.sum(ops.abs(x), dim=dim, keepdim=keepdim)
    if p == math.inf:
        return ops.amax(ops.abs(x), dim=dim, keepdim=keepdim)
    if p == -math.inf:
        return ops.amin(ops.abs(x), dim=dim, keepdim=keepdim)
    if p == 0:
        return ops.sum(ops.ne(x, 0), dim=dim, keepdim=keepdim).to(x.dtype)
    return ops.pow(ops.sum(ops.pow(ops.abs(x), p), dim=dim, keepdim=keepdim), 1.0 / p)


def _clamp_min_passing_grad(t, eps):
    """max(t, eps) in value, but the gradient flows to t unchanged (torch clamps the norms
    of cosine_similarity in place under no_grad, so its gradient ignores the clamp)."""
    floor = ops.sub(ops.clamp_min(t.detach(), eps), t.detach())
    return ops.add(t, floor)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1/max(|x1|, eps) * x2/max(|x2|, eps)) along dim, after broadcasting x1 and x2."""
    x1, x2 = ops.broadcast_tensors(x1, x2)
    n1 = _clamp_min_passing_grad(vector_norm(x1, 2, dim, True), eps)
    n2 = _clamp_min_passing_grad(vector_norm(x2, 2, dim, True), eps)
    return ops.sum(ops.mul(ops.div(x1, n1), ops.div(x2, n2)), dim=dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """The p-norm of x1 - x2 + eps along the last dim (eps keeps the norm differentiable at 0)."""
    return vector_norm(ops.add(ops.sub(x1, x2), eps), p, -1, keepdim)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p, eps) along dim."""
    denom = ops.clamp_min(vector_norm(input, p, dim, True), eps)
    return ops.div(input, denom, out=out)
