# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Padding-free encoding: an encoder's row-wise layers run on the real tokens only.

A padded batch of short sentences is mostly padding (SST-2's phrases, batched 32 at a time,
are two thirds padding), and an encoder spends nearly all its time in row-wise work (the
projections, the feed-forward, norms, dropout) that padding rows take part in for nothing:
no real token attends to them. When nothing outside the encoder can see those rows (a
sequence-classification head reads each row's first token or pools the real ones; no hidden
states, attentions or hooks are asked for), the encoder can stack the real tokens as one row of shape
[1, tokens, hidden], run the row-wise layers on it, and lay the tokens out as a padded batch
only around the attention itself. This is what torch's BetterTransformer fast path does with
nested tensors. The real tokens' results are those of the padded computation up to float32
rounding; the padding rows of the returned hidden state are zeros.
"""
from .. import core
from ..core.nn.modules.module import structure_version

_enabled = True


def set_enabled(enabled):
    """Turn padding-free encoding on (the default) or off, as torch.backends.mha's
    set_fastpath_enabled turns its fast path. Off, an eager run computes the padded batch bit
    for bit as a captured graph does: the packed layout rounds differently and draws dropout
    over fewer rows."""
    global _enabled
    _enabled = bool(enabled)


def is_enabled():
    return _enabled


class DenseRows:
    """The identity layout: every row of the batch is computed (the usual encoder)."""

    @staticmethod
    def pack(hidden_states):
        return hidden_states

    @staticmethod
    def unpack(hidden_states):
        return hidden_states

    @staticmethod
    def unpack_heads(heads):
        return heads


DENSE_ROWS = DenseRows()


class PackedRows:
    """The real tokens of a padded batch, given its 0/1 attention mask of shape [batch, length].

    `pack` takes [batch, length, ...] to [1, tokens, ...]; `unpack` takes it back, with zeros
    where the mask is 0. Both are differentiable (a gather and a scatter of rows).
    """

    def __init__(self, attention_mask):
        self.batch, self.length = attention_mask.shape
        self.index = attention_mask.reshape(-1).nonzero().reshape(-1)

    @property
    def tokens(self):
        return self.index.shape[0]

    def pack(self, hidden_states):
        rest = tuple(hidden_states.shape[2:])
        rows = hidden_states.reshape((self.batch * self.length,) + rest)
        return rows.index_select(0, self.index).unsqueeze(0)

    def unpack(self, hidden_states):
        rest = tuple(hidden_states.shape[2:])
        rows = hidden_states.new_zeros((self.batch * self.length,) + rest)
        return rows.index_copy(0, self.index, hidden_states[0]).reshape((self.batch, self.length) + rest)

    def unpack_heads(self, heads):
        """unpack for (1, heads, tokens, head_dim): (batch, heads, length, head_dim)."""
        return self.unpack(heads.transpose(1, 2)).transpose(1, 2)


def has_forward_hooks(module):
    """Whether any submodule has forward (pre-)hooks: those would see packed shapes. The answer
    is kept until some module's structure, its hooks included, changes (structure_version): the
    walk over a BERT-base encoder's 218 modules took 0.25 ms a call."""
    version = structure_version()
    known = module.__dict__.get("_forward_hooks_seen")
    if known is not None and known[0] == version:
        return known[1]
    found = any(m._forward_pre_hooks or m._forward_hooks for m in module.modules())
    module.__dict__["_forward_hooks_seen"] = (version, found)
    return found


def encoder_layout(encoder, attention_mask, padding_rows_unread, padding_rows_returned):
    """The keyword arguments a base model gives its encoder: {"rows": PackedRows} where the
    caller reads no padding row (`padding_rows_unread`: a head reading each row's first token,
    or pooling the real ones), nothing returns the padding rows (hidden states, attentions, a
    cache: `padding_rows_returned`), no hook watches the encoder's modules, and the encoder can
    lay packed tokens out (`supports_padding_free`).
    Not while a graph is captured (core.compile, ONNX export): the packed layout's size is
    read from the mask's values, and a graph holds for every mask of its shapes."""
    if not (_enabled and padding_rows_unread) or padding_rows_returned \
            or not getattr(encoder, "supports_padding_free", False) or core.compiler.is_compiling() \
            or has_forward_hooks(encoder):
        return {}
    rows = packed_rows_for(attention_mask)
    return {} if rows is None else {"rows": rows}


def packed_rows_for(attention_mask):
    """PackedRows for a 2D 0/1 mask whose rows all start with a real token and which has
    padding somewhere; None where packing would gain nothing or could change what a head reads."""
    if attention_mask is None or attention_mask.ndim != 2:
        return None
    mask = attention_mask.bool()
    if bool(mask.all()) or not bool(mask[:, 0].all()):
        return None                                    # the usual unpadded batch stops here, before the sort
    values = attention_mask.unique()
    if not bool(((values == 0) | (values == 1)).all()):
        return None                                    # not a plain keep/pad mask
    return PackedRows(mask)
