# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The attention kernels models choose from with `config._attn_implementation`.

"eager" spells attention out (matmul, mask, softmax, dropout, matmul) and can return the
attention probabilities; "sdpa" calls the fused `scaled_dot_product_attention` node,
faster and lighter on memory, and returns no probabilities.
"""
from .. import core
from ..core import nn
from ..core.autograd.function import Function
from ..core.jit.kernels import host_operands
from ..core.jit.lower import kernel_for


class _SplitHeads(Function):
    """(batch, seq, heads * head_dim) → (batch, heads, seq, head_dim) as one view node."""

    _is_view = True

    @staticmethod
    def forward(ctx, x, head_dim):
        ctx.shape = tuple(x._data.shape)
        batch, seq = ctx.shape[0], ctx.shape[1]
        return x._data.reshape(batch, seq, -1, head_dim).transpose(0, 2, 1, 3)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(1, 2).reshape(ctx.shape), None


@kernel_for(_SplitHeads)
def _split_heads_kernel(node, graph):
    """The view itself in a compiled replay, without forward's tensor shells."""
    if host_operands(node, graph) is None:
        return None
    batch, seq = graph.slots[node.args[0].slot].shape[:2]
    head_dim = node.args[1]
    return lambda x: x.reshape(batch, seq, -1, head_dim).transpose(0, 2, 1, 3)


def split_heads(x, head_dim):
    """What `x.view(batch, seq, -1, head_dim).transpose(1, 2)` computes, dispatched once:
    projections are split into heads three times per layer and decoding step."""
    if x.ndim != 3 or x.shape[-1] % head_dim:
        raise ValueError(f"cannot split a tensor of shape {tuple(x.shape)} into heads of size {head_dim}")
    return _SplitHeads.apply(x, head_dim)


def repeat_kv(hidden_states, n_rep):
    """(batch, kv_heads, seq, dim) → (batch, kv_heads * n_rep, seq, dim) for grouped-query attention."""
    if n_rep == 1:
        return hidden_states
    batch, kv_heads, seq, dim = hidden_states.shape
    expanded = hidden_states[:, :, None, :, :].expand(batch, kv_heads, n_rep, seq, dim)
    return expanded.reshape(batch, kv_heads * n_rep, seq, dim)


def check_mask_fits_keys(attention_mask, key):
    """A mask that covers more or fewer positions than there are keys was built for other
    inputs (a tokenizer's mask for another text, a cache that was not passed): refuse it rather
    than cut it to size or let broadcasting fail somewhere deeper."""
    if attention_mask.shape[-1] != key.shape[-2]:
        raise ValueError(
            f"The attention mask covers {attention_mask.shape[-1]} key positions but there are {key.shape[-2]} keys "
            "(the input length plus any cached positions): pass the attention_mask that the tokenizer returned "
            "with these input_ids"
        )


def eager_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None,
                            sinks=None, **kwargs):
    """Returns (output (batch, seq, heads, dim), probabilities (batch, heads, q, kv)).

    `softcap` bounds the scores to (-softcap, softcap) by softcap·tanh(score/softcap) before
    masking (Gemma 2). `sinks` (one logit per head, gpt-oss) joins every row's softmax as an
    extra key without a value, so a query may give part of its attention to nothing.
    """
    n_rep = query.shape[1] // key.shape[1]
    key = repeat_kv(key, n_rep)
    value = repeat_kv(value, n_rep)
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    if query.dtype == core.float32:
        # Scaling the queries rather than the (q x kv) scores is the same product with a pass
        # over seq/kv times fewer elements.
        scores = core.matmul(query * scaling, key.transpose(2, 3))
    else:
        # in half precision the order decides the rounding: HF's (scores, then the scale)
        scores = core.matmul(query, key.transpose(2, 3)) * scaling
    if softcap is not None:
        scores = core.tanh(scores / softcap) * softcap
    if attention_mask is not None:
        check_mask_fits_keys(attention_mask, key)
        scores = scores + attention_mask
    if sinks is not None:
        batch, heads, q_length, _ = scores.shape
        sink_logits = sinks.to(scores.dtype).reshape(1, -1, 1, 1).expand(batch, heads, q_length, 1)
        scores = core.cat([scores, sink_logits], dim=-1)
    if query.dtype == core.float32:
        probs = nn.functional.softmax(scores, dim=-1)
    else:
        # half-precision scores are normalised in float32, as HF does
        probs = nn.functional.softmax(scores, dim=-1, dtype=core.float32).to(query.dtype)
    if sinks is not None:
        probs = probs[..., :-1]
    probs = nn.functional.dropout(probs, p=dropout, training=module.training)
    output = core.matmul(probs, value).transpose(1, 2).contiguous()
    return output, probs


def sdpa_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, is_causal=None,
                           softcap=None, sinks=None, **kwargs):
    """Fused attention; the mask is additive (or None). Returns (output, None).

    Grouped-query key/value heads go in as they are (enable_gqa), so the cache is not
    copied once per query group at every decoding step. The fused kernel knows neither
    soft-capping nor sinks: attention that uses them runs the eager path.
    """
    if softcap is not None or sinks is not None:
        return eager_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                       softcap=softcap, sinks=sinks)
    if attention_mask is not None:
        check_mask_fits_keys(attention_mask, key)
    output = nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout if module.training else 0.0, scale=scaling,
        is_causal=False, enable_gqa=query.shape[1] != key.shape[1],
    )
    return output.transpose(1, 2).contiguous(), None


class AttentionInterface(dict):
    """Name → attention function, as HF's ALL_ATTENTION_FUNCTIONS."""

    def get_interface(self, name, default):
        if name in (None, "eager"):
            return default
        if name not in self:
            raise ValueError(f"unknown attention implementation {name!r}; choose from eager, {', '.join(self)}")
        return self[name]


ALL_ATTENTION_FUNCTIONS = AttentionInterface(sdpa=sdpa_attention_forward)
