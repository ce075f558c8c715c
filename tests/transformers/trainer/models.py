"""Tiny models and datasets for the Trainer tests (seconds to train on CPU)."""
import numpy as np

from mindnlp import core
from mindnlp.core import nn


class RegressionModel(nn.Module):
    """y = a * x + b with an optional dropout (to check that resuming restores the RNG)."""

    def __init__(self, a=0.0, b=0.0, dropout=0.0):
        super().__init__()
        self.a = nn.Parameter(core.tensor(float(a)))
        self.b = nn.Parameter(core.tensor(float(b)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, input_x, labels=None):
        y = self.dropout(input_x * self.a + self.b)
        if labels is None:
            return (y,)
        return (nn.functional.mse_loss(y, labels), y)


def regression_data(n=64, a=2.0, b=3.0, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n).astype(np.float32)
    y = (a * x + b + 0.1 * rng.standard_normal(n)).astype(np.float32)
    return [{"input_x": x[i], "labels": y[i]} for i in range(n)]


class TokenClassifier(nn.Module):
    """Mean of token embeddings -> linear: returns {"loss", "logits"} like an HF classification head."""

    def __init__(self, vocab_size=32, hidden=8, num_labels=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = self.norm(self.embed(input_ids))
        if attention_mask is None:
            attention_mask = core.ones_like(input_ids)
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        logits = self.classifier(pooled)
        if labels is None:
            return {"logits": logits}
        return {"loss": nn.functional.cross_entropy(logits, labels), "logits": logits}


def parity_data(n=64, length=6, seed=0):
    """Sequences labelled 1 when token 1 appears more often than token 2: learnable from the mean embedding."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        ids = rng.integers(1, 3, size=length).tolist()
        rows.append({"input_ids": ids, "attention_mask": [1] * length,
                     "label": int(ids.count(1) > ids.count(2))})
    return rows


class TokenLossModel(nn.Module):
    """Per-token regression whose loss is a sum over labelled tokens divided by num_items_in_batch
    when the Trainer passes it (forward takes **kwargs), as HF's causal LM losses do."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(core.tensor([0.5]))

    def forward(self, input_x, labels=None, **kwargs):
        prediction = input_x * self.weight
        valid = (labels != -100).to(prediction.dtype)
        errors = ((prediction - labels.to(prediction.dtype)) ** 2) * valid
        count = kwargs.get("num_items_in_batch")
        if count is None:
            count = valid.sum()
        return {"loss": errors.sum() / count}
