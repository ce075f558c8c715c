# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Similarity scores between embeddings, as sentence-transformers defines them (higher = more similar).

Each function takes core tensors, NumPy arrays or lists of vectors and returns a core float
tensor: the full [len(a), len(b)] matrix (a single vector counts as one row), or, for the
`pairwise_` forms, one score per row pair a[i], b[i] (a scalar for two single vectors). Distances are negated so that every
function ranks the same way.
"""
import numpy as np

from .. import core
from ..core.nn import functional as F


def as_tensor(embeddings):
    """A float tensor from a tensor, an array, or a list of either."""
    if isinstance(embeddings, (list, tuple)):
        embeddings = (core.stack(list(embeddings)) if embeddings and isinstance(embeddings[0], core.Tensor)
                      else core.tensor(np.asarray(embeddings)))
    elif not isinstance(embeddings, core.Tensor):
        embeddings = core.tensor(np.asarray(embeddings))
    if not embeddings.is_floating_point():
        embeddings = embeddings.to(core.float32)
    return embeddings


def as_rows(embeddings):
    """as_tensor, with a single vector made one row of a matrix."""
    embeddings = as_tensor(embeddings)
    return embeddings.unsqueeze(0) if embeddings.dim() == 1 else embeddings


def cos_sim(a, b):
    a, b = as_rows(a), as_rows(b)
    return F.normalize(a, p=2, dim=1) @ F.normalize(b, p=2, dim=1).T


def dot_score(a, b):
    return as_rows(a) @ as_rows(b).T


def euclidean_sim(a, b):
    return -core.cdist(as_rows(a), as_rows(b), p=2.0)


def manhattan_sim(a, b):
    return -core.cdist(as_rows(a), as_rows(b), p=1.0)


def pairwise_cos_sim(a, b):
    a, b = as_tensor(a), as_tensor(b)
    return (F.normalize(a, p=2, dim=-1) * F.normalize(b, p=2, dim=-1)).sum(dim=-1)


def pairwise_dot_score(a, b):
    return (as_tensor(a) * as_tensor(b)).sum(dim=-1)


def pairwise_euclidean_sim(a, b):
    return -((as_tensor(a) - as_tensor(b)) ** 2).sum(dim=-1).sqrt()


def pairwise_manhattan_sim(a, b):
    return -(as_tensor(a) - as_tensor(b)).abs().sum(dim=-1)


# similarity_fn_name → (matrix function, pairwise function)
SIMILARITY_FUNCTIONS = {
    "cosine": (cos_sim, pairwise_cos_sim),
    "dot": (dot_score, pairwise_dot_score),
    "euclidean": (euclidean_sim, pairwise_euclidean_sim),
    "manhattan": (manhattan_sim, pairwise_manhattan_sim),
}
