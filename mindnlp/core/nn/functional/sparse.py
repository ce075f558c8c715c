# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""embedding: rows of a weight matrix picked by integer indices."""
import numpy as np

from ... import ops
from ..._tensor import _wrap
from ...autograd import grad_mode
from ...autograd.function import Function
from ...ops._helpers import xp_of
from ...ops.indexing import add_at, add_rows_at

__all__ = [
    "embedding",
]


class _Embedding(Function):
    """weight[indices]; the gradient scatters back into the rows, skipping padding_idx."""

    @staticmethod
    def forward(ctx, weight, indices, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(indices)
        ctx.config = (tuple(weight.shape), padding_idx, scale_grad_by_freq)
        xp = xp_of(weight)
        return xp.take(weight._data, indices._data, axis=0)

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        shape, padding_idx, scale_grad_by_freq = ctx.config
        flat = indices.reshape(-1)
        rows = grad.reshape(-1, shape[1])
        keep = None
        if padding_idx is not None:
            keep = ops.ne(flat, padding_idx)
        if scale_grad_by_freq:
            xp = xp_of(indices)
            counts = xp.bincount(flat._data, minlength=shape[0])[flat._data]
            weights = (1.0 / counts).astype(grad._data.dtype)
            if keep is not None:
                weights = weights * keep._data
            rows = ops.mul(rows, _wrap(weights).unsqueeze(-1))
        elif keep is not None:
            rows = ops.where(keep.unsqueeze(-1), rows, 0.0)
        return _EmbeddingDenseBackward.apply(rows, flat, shape[0]), None, None, None


class _EmbeddingDenseBackward(Function):
    """The embedding weight's gradient: `rows` added at `indices` into zeros of the weight's
    shape, in place, where index_add would copy the vocabulary-sized zeros first (47 MB
    every training step of a BERT-sized vocabulary). Its own gradient picks the rows back."""

    @staticmethod
    def forward(ctx, rows, indices, num_weights):
        ctx.save_for_backward(indices)
        xp = xp_of(rows)
        out = xp.zeros((num_weights,) + tuple(rows.shape[1:]), dtype=rows._data.dtype)
        if xp is np:
            add_rows_at(out, indices._data, rows._data)
        else:
            add_at(xp, out, (indices._data,), rows._data)
        return out

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        return ops.index_select(grad, 0, indices), None, None


def _renorm_rows(weight, indices, max_norm, norm_type):
    """Rescale, in place, the referenced rows whose norm exceeds max_norm (torch.embedding_renorm_)."""
    xp = xp_of(weight)
    rows = xp.unique(indices._data.reshape(-1))
    selected = weight._data[rows].astype(np.float64)
    norms = (xp.abs(selected) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    over = norms > max_norm
    if not over.any():
        return
    scale = xp.where(over, max_norm / (norms + 1e-7), 1.0)[:, None]
    with grad_mode.no_grad():
        weight.index_copy_(0, _wrap(rows.astype(np.int64)), _wrap((selected * scale).astype(weight._data.dtype)))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up rows of weight (num_embeddings, dim) for each index in input."""
    if input.dtype.is_floating_point or input.dtype.name == "bool":
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.type()} instead (while checking arguments for embedding)"
        )
    num = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= num:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -num:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += num
    if input.numel() and not input.is_meta:  # meta indices have no values to check
        lo, hi = int(input._data.min()), int(input._data.max())
        if lo < 0 or hi >= num:
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    return _Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)
