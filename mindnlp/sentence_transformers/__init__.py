# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""sentence-transformers' embedding models on mindnlp.core: load the folders it writes, `encode`,
`similarity`, and save folders it reads back. No torch needed.

    from mindnlp.sentence_transformers import SentenceTransformer
"""
from .model import SentenceTransformer
from .modules import Dense, Normalize, Pooling, Transformer
from .similarity import (cos_sim, dot_score, euclidean_sim, manhattan_sim, pairwise_cos_sim, pairwise_dot_score,
                         pairwise_euclidean_sim, pairwise_manhattan_sim)

__all__ = ["SentenceTransformer", "Transformer", "Pooling", "Dense", "Normalize", "cos_sim", "dot_score",
           "euclidean_sim", "manhattan_sim", "pairwise_cos_sim", "pairwise_dot_score", "pairwise_euclidean_sim",
           "pairwise_manhattan_sim"]
