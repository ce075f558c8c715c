# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""one_hot: class indices to one-hot rows."""
from ..._dtype import int64
from ...ops._helpers import wrap, xp_of

__all__ = ["one_hot"]


def one_hot(tensor, num_classes=-1):
    """(*) int64 class indices → (*, num_classes) int64 one-hot; -1 means max + 1."""
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = xp_of(tensor)
    idx = tensor._data
    if idx.size and int(idx.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if idx.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(idx.max()) + 1
    elif idx.size and int(idx.max()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = xp.zeros(idx.shape + (int(num_classes),), dtype=xp.int64)
    grids = tuple(xp.arange(n).reshape((-1,) + (1,) * (idx.ndim - 1 - d)) for d, n in enumerate(idx.shape))
    out[grids + (idx,)] = 1
    return wrap(out)
