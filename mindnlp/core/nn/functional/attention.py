# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""scaled_dot_product_attention as one fused graph node, and multi-head attention.

The fused forward computes scores, mask, softmax, dropout and the weighted sum on the
backend's arrays with the scores matrix reused in place, and saves the attention
probabilities for backward. A first-order backward uses those arrays directly; when the
backward itself is being recorded (create_graph=True) the probabilities are recomputed with
differentiable core ops so that second derivatives are exact. The backend's fused attention
kernel, where it has one, replaces the composed forward (which stays as its reference).
"""
import functools
import math
import warnings

import numpy as np

from ... import ops
from ..._dtype import bool_
from ...autograd import grad_mode
from ...autograd.function import Function
from ...backends.cpu_kernels import group_heads
from ...ops._helpers import array_op, fused_kernel, narrow, widen, wrap, wrap_constant, xp_of
from .dropout import keep_mask
from .softmax import softmax
from ...amp.autocast_mode import autocast_op

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _repeat_heads(xp, a, groups):
    """Repeat each key/value head `groups` times along the head dim (-3), as GQA does."""
    return a if groups == 1 else xp.repeat(a, groups, axis=-3)


def _sum_head_groups(t, groups):
    """The adjoint of _repeat_heads: sum the gradients of each group of repeated heads."""
    if groups == 1:
        return t
    shape = tuple(t.shape)
    grouped = ops.reshape(t, shape[:-3] + (shape[-3] // groups, groups) + shape[-2:])
    return ops.sum(grouped, dim=-3)


def _additive_mask(allowed, xp, dtype):
    """A boolean mask as an additive one: 0 where allowed, -inf elsewhere."""
    additive = xp.zeros(allowed.shape, dtype=dtype)
    additive[~allowed] = -np.inf
    return additive


def _causal_mask(xp, L, S):
    """True where query i may attend key j: j <= i, aligned at the top-left as torch does."""
    return xp.tril(xp.ones((L, S), dtype=bool))


def _composed_forward(xp, qa, ka, va, mask, keep, scale):
    """(out, probs) on the arrays: the reference the backend's fused attention kernel is tested against."""
    # Scaling q (L x E) is cheaper than scaling the scores (L x S).
    scores = xp.matmul(qa * qa.dtype.type(scale), xp.swapaxes(ka, -1, -2))
    if mask is not None:
        scores += mask
    # Softmax in place; rows that are masked everywhere give 0, not NaN (torch's math path).
    row_max = scores.max(axis=-1, keepdims=True)
    dead = ~xp.isfinite(row_max)
    row_max = xp.where(dead, 0.0, row_max)       # row-sized: cheaper than asking dead.any()
    scores -= row_max
    xp.exp(scores, out=scores)
    denom = scores.sum(axis=-1, keepdims=True)
    scores /= xp.where(denom == 0, 1.0, denom)
    weights = scores * keep if keep is not None else scores
    return xp.matmul(weights, va), scores


def _grouped_forward(xp, qa, ka, va, mask, keep, scale, groups):
    """Grouped-query attention without copying keys and values `groups` times: the query
    heads of a group are batched against their shared key/value head by broadcasting."""
    out, probs = _composed_forward(xp, group_heads(qa, groups), ka[..., None, :, :], va[..., None, :, :],
                                   group_heads(mask, groups), group_heads(keep, groups), scale)
    heads = qa.shape[-3]
    return (out.reshape(out.shape[:-4] + (heads,) + out.shape[-2:]),
            probs.reshape(probs.shape[:-4] + (heads,) + probs.shape[-2:]))


class ScaledDotProductAttention(Function):
    """out = dropout(softmax(q k^T * scale + mask)) v, with probabilities saved for backward.

    `mask` is None or a float tensor added to the scores (a boolean mask is turned into 0 /
    -inf by the caller); `keep` is None or the dropout keep-mask array already divided by
    (1 - p); `groups` is the GQA repetition factor of the key/value heads.
    """

    @staticmethod
    def forward(ctx, q, k, v, mask, keep, scale, groups):
        xp = xp_of(q)
        mask_a = widen(mask._data) if mask is not None else None
        need_probs = any(ctx.needs_input_grad)
        # Inference (no probabilities to save, no dropout) has a kernel of its own, which
        # decides by shape between decoding's loops and the work units of longer queries; it
        # takes half arrays as they are (a decoding step reads a half cache in place).
        small = None if keep is not None or need_probs else fused_kernel("small_attention", q)
        out = small(q._data, k._data, v._data, mask_a, scale, groups) if small is not None else None
        probs = None
        if out is None:
            qa, ka, va = widen(q._data), widen(k._data), widen(v._data)
            kv_lead = ka.shape[:-3] + (ka.shape[-3] * groups,) if groups > 1 else ka.shape[:-2]
            scores = math.prod(np.broadcast_shapes(qa.shape[:-2], kv_lead)) * qa.shape[-2] * ka.shape[-2]
            kernel = fused_kernel("attention", q, work=scores)
            if kernel is not None:
                out, probs = kernel(qa, ka, va, mask_a, keep, scale, groups, need_probs=need_probs)
            elif groups > 1:
                out, probs = _grouped_forward(xp, qa, ka, va, mask_a, keep, scale, groups)
            else:
                out, probs = _composed_forward(xp, qa, ka, va, mask_a, keep, scale)
        ctx.scale, ctx.groups = scale, groups
        # Saved as tensors so that the engine frees them once backward has run.
        ctx.save_for_backward(q, k, v, mask, wrap(probs) if probs is not None else None, wrap(out),
                              wrap(keep) if keep is not None else None)
        return narrow(out, q._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        q, k, v, mask, probs, out, keep = ctx.saved_tensors
        keep = keep._data if keep is not None else None
        if grad_mode.is_grad_enabled():
            return _composed_backward(ctx, grad, q, k, v, mask, keep)
        xp = xp_of(q)
        bmm = fused_kernel("batched_matmul", q) or xp.matmul
        scale, groups, needs = ctx.scale, ctx.groups, ctx.needs_input_grad
        fused = None if needs[3] else fused_kernel("attention_backward", q, work=probs.numel())

        def compute(g, q, k, v, probs, out, keep):
            """The four gradients on arrays (one raw op, so graph capture records it whole)."""
            grads = None if fused is None else fused(g, q, k, v, probs, out, keep, scale, groups)
            if grads is not None:
                return grads + (None,)
            g = widen(g)
            ka = _repeat_heads(xp, widen(k), groups)
            va = _repeat_heads(xp, widen(v), groups)
            grad_q = grad_k = grad_v = grad_mask = None
            if needs[2]:
                weights = probs * keep if keep is not None else probs
                grad_v = bmm(xp.swapaxes(weights, -1, -2), g)
            # d scores = probs * (d probs - sum(d probs * probs)), computed into one array. The row
            # sums equal sum(grad * out) over the value dim, which needs no (L x S) temporary.
            d_scores = bmm(g, xp.swapaxes(va, -1, -2))
            if keep is not None:
                d_scores *= keep
            d_scores -= (g * out).sum(axis=-1, keepdims=True)
            d_scores *= probs
            if needs[3]:
                grad_mask = d_scores.copy()
            d_scores *= scale
            if needs[0]:
                grad_q = bmm(d_scores, ka)
            if needs[1]:
                grad_k = bmm(xp.swapaxes(d_scores, -1, -2), widen(q))
            return grad_q, grad_k, grad_v, grad_mask

        grad_q, grad_k, grad_v, grad_mask = array_op(compute, grad, q, k, v, probs, out, keep)
        if grad_k is not None:
            grad_k = _sum_head_groups(grad_k, groups)
        if grad_v is not None:
            grad_v = _sum_head_groups(grad_v, groups)
        return grad_q, grad_k, grad_v, grad_mask, None, None, None


def _composed_probs(q, k, mask, scale):
    """The attention probabilities from differentiable core ops (for higher-order gradients)."""
    scores = ops.mul(ops.matmul(q, ops.transpose(k, -1, -2)), scale)
    if mask is not None:
        scores = ops.add(scores, mask)
    dead = ops.isinf(ops.amax(scores, dim=-1, keepdim=True))
    if dead.is_meta or bool(dead.any()):
        # Rows masked everywhere: keep them finite, their probabilities are zeroed below.
        scores = ops.masked_fill(scores, dead, 0.0)
        return ops.masked_fill(softmax(scores, dim=-1), dead, 0.0)
    return softmax(scores, dim=-1)


def _composed_backward(ctx, grad, q, k, v, mask, keep):
    """The same gradients as the fused backward, recorded with core ops."""
    scale, groups = ctx.scale, ctx.groups
    k_rep = ops.repeat_interleave(k, groups, dim=-3) if groups > 1 else k
    v_rep = ops.repeat_interleave(v, groups, dim=-3) if groups > 1 else v
    probs = _composed_probs(q, k_rep, mask, scale)
    keep_t = wrap(keep) if keep is not None else None
    weights = ops.mul(probs, keep_t) if keep_t is not None else probs
    grad_v = _sum_head_groups(ops.matmul(ops.transpose(weights, -1, -2), grad), groups)
    d_weights = ops.matmul(grad, ops.transpose(v_rep, -1, -2))
    d_probs = ops.mul(d_weights, keep_t) if keep_t is not None else d_weights
    d_scores = ops.mul(probs, ops.sub(d_probs, ops.sum(ops.mul(d_probs, probs), dim=-1, keepdim=True)))
    grad_q = ops.mul(ops.matmul(d_scores, k_rep), scale)
    grad_k = _sum_head_groups(ops.mul(ops.matmul(ops.transpose(d_scores, -1, -2), q), scale), groups)
    grad_mask = d_scores if ctx.needs_input_grad[3] else None
    return grad_q, grad_k, grad_v, grad_mask, None, None, None


def _check_mask_shape(query, key, attn_mask):
    """attn_mask must broadcast to the scores' shape (..., L, S); torch's message when not."""
    q, k, mask = query.shape, key.shape, attn_mask.shape
    target = (q if len(q) >= len(k) else k)[:-2] + (q[-2], k[-2])
    for dim in range(1, min(len(mask), len(target)) + 1):
        if mask[-dim] != target[-dim] and mask[-dim] != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[-dim]}) must match the existing size ({mask[-dim]}) at "
                f"non-singleton dimension {len(target) - dim}.  Target sizes: {list(target)}.  "
                f"Tensor sizes: {list(mask)}")


def _check_inputs(query, key, value, attn_mask, enable_gqa):
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead."
        )
    if not query.is_floating_point():
        raise RuntimeError(f"scaled_dot_product_attention expects floating point inputs, got {query.dtype}")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("scaled_dot_product_attention expects query, key and value of at least 2 dims")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(
            f"Expected query and key to have the same embedding size, got {query.shape[-1]} and {key.shape[-1]}"
        )
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(
            f"Expected key and value to have the same sequence length, got {key.shape[-2]} and {value.shape[-2]}"
        )
    if attn_mask is not None and attn_mask.dtype is not bool_ and attn_mask.dtype != query.dtype:
        raise RuntimeError(
            f"Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
            f"{attn_mask.dtype} and  query.dtype: {query.dtype} instead."
        )
    if attn_mask is not None:
        _check_mask_shape(query, key, attn_mask)
    if enable_gqa and query.ndim >= 3:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hk == 0 or hq % hk or hk != hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in query")
        return hq // hk
    return 1


@autocast_op("scaled_dot_product_attention", 3)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims, with torch's semantics.

    attn_mask: a bool mask (True = may attend) or a float mask added to the scores, broadcast
    to (..., L, S). is_causal keeps key j for query i when j <= i (top-left aligned when
    L != S) and excludes attn_mask. Rows with nothing to attend to give zeros.
    scale defaults to 1/sqrt(E). enable_gqa repeats each key/value head for a group of query
    heads (the query's head count must be a multiple of the key/value head count).
    """
    groups = _check_inputs(query, key, value, attn_mask, enable_gqa)
    xp = xp_of(query)
    L, S = query.shape[-2], key.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    mask = attn_mask
    if is_causal:
        if mask is not None:
            raise RuntimeError(
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        mask = wrap_constant(_causal_mask(xp, L, S))
    if mask is not None and mask.dtype is bool_:
        mask = array_op(functools.partial(_additive_mask, xp=xp, dtype=query._data.dtype), mask)
    keep = None
    if dropout_p > 0.0:
        key_batch = tuple(key.shape[:-2])
        if groups > 1:
            key_batch = key_batch[:-1] + (key_batch[-1] * groups,)
        scores_shape = np.broadcast_shapes(tuple(query.shape[:-2]), key_batch) + (L, S)
        if mask is not None:
            scores_shape = np.broadcast_shapes(scores_shape, tuple(mask.shape))
        keep = _DropoutKeep.apply(scores_shape, dropout_p, query.device)._data
    return ScaledDotProductAttention.apply(query, key, value, mask, keep, float(scale), groups)


class _DropoutKeep(Function):
    """Attention dropout's keep-mask, rescaled by 1 / (1 - p), as a float32 array. It is drawn
    inside an op so that graph capture records the draw, which a training replay makes again."""

    @staticmethod
    def forward(ctx, shape, p, device):
        return keep_mask(shape, p, np.float32, device, 1.0 / (1.0 - p) if p < 1.0 else 0.0)


def _canonical_mask(mask, dtype, name):
    """MultiheadAttention masks as additive floats: a bool True marks a position NOT to attend."""
    if mask is None:
        return None
    if mask.dtype is bool_:
        return ops.masked_fill(ops.zeros(tuple(mask.shape), dtype=dtype, device=mask.device), mask, float("-inf"))
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_last(t):
    """Append one zero column to a mask (for the extra bias_k / zero-attention key)."""
    if t is None:
        return None
    return ops.cat([t, ops.zeros(tuple(t.shape[:-1]) + (1,), dtype=t.dtype, device=t.device)], dim=-1)


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the inputs are batched; torch's errors for inputs of the wrong ranks."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {query.ndim - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                             f"{attn_mask.ndim}-D tensor instead")
    if not batched and attn_mask is not None and attn_mask.ndim == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {tuple(attn_mask.shape)}")
    return batched


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch's multi-head attention on sequence-first inputs (L, N, E), or unbatched (L, E).

    Masks use MultiheadAttention's convention: in a bool attn_mask or key_padding_mask, True
    marks a position that may NOT be attended. attn_mask is (L, S) or (N * num_heads, L, S);
    key_padding_mask is (N, S). Returns (output, weights); weights are averaged over heads,
    (N, L, S), when average_attn_weights, per head (N, H, L, S) otherwise, and None unless
    need_weights. With need_weights=False the fused scaled_dot_product_attention is used.
    """
    from .linear import linear

    if static_k is not None or static_v is not None:
        raise NotImplementedError("multi_head_attention_forward: static_k / static_v are not supported")
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if key_padding_mask is not None and attn_mask is not None and key_padding_mask.dtype != attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    key_padding_mask = _canonical_mask(key_padding_mask, query.dtype, "key_padding_mask")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the fused kernel builds the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, query.dtype, "attn_mask")
        is_causal = False

    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = ops.chunk(in_proj_weight, 3, dim=0)
    b_q, b_k, b_v = ops.chunk(in_proj_bias, 3, dim=0) if in_proj_bias is not None else (None, None, None)
    q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    if attn_mask is not None:
        expected = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if attn_mask.ndim not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(
                f"The shape of the {attn_mask.ndim}D attn_mask is {tuple(attn_mask.shape)}, but should be {expected}."
            )
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = ops.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = ops.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)

    # (L, N, E) -> (N * H, L, D), head-major within each batch element as torch lays it out.
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = ops.zeros((bsz * num_heads, 1, head_dim), dtype=q.dtype, device=q.device)
        k, v = ops.cat([k, zeros], dim=1), ops.cat([v, zeros], dim=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        for dim, expected in enumerate((bsz, src_len)):
            if key_padding_mask.shape[dim] != expected:
                raise AssertionError(f"Expected key_padded_mask.shape[{dim}] to be {expected}, "
                                     f"but got {key_padding_mask.shape[dim]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else ops.add(attn_mask, kpm)
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = ops.matmul(ops.mul(q, math.sqrt(1.0 / head_dim)), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = ops.add(scores, attn_mask)
        weights = softmax(scores, dim=-1)
        if dropout_p > 0.0:
            from .dropout import dropout

            weights = dropout(weights, p=dropout_p)
        out = ops.matmul(weights, v)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    else:
        if attn_mask is not None:
            attn_mask = attn_mask.reshape(bsz, -1, attn_mask.shape[-2], src_len) if attn_mask.shape[0] > 1 \
                else attn_mask.unsqueeze(0)
        out = scaled_dot_product_attention(q.reshape(bsz, num_heads, tgt_len, head_dim),
                                           k.reshape(bsz, num_heads, src_len, head_dim),
                                           v.reshape(bsz, num_heads, src_len, head_dim),
                                           attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal)
        out = out.reshape(bsz * num_heads, tgt_len, head_dim)
        weights = None

    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights
