"""Small models to adapt, twins of the torch ones in tests/fixtures/make_peft_fixtures.py
(HF peft's tests use the same kind of custom MLP)."""
from mindnlp.core import nn
from mindnlp.transformers.pytorch_utils import Conv1D


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin0 = nn.Linear(10, 20)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(0.5)
        self.lin1 = nn.Linear(20, 2)
        self.sm = nn.LogSoftmax(dim=-1)

    def forward(self, X):
        return self.sm(self.lin1(self.drop(self.relu(self.lin0(X)))))


class EmbConv1D(nn.Module):
    """Embedding then GPT-2's Conv1D (a transposed linear layer)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, 5)
        self.conv1d = Conv1D(1, 5)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.lin0 = nn.Linear(10, 2)
        self.sm = nn.LogSoftmax(dim=-1)

    def forward(self, X):
        return self.sm(self.lin0(self.flat(self.relu(self.conv1d(self.emb(X))))))


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = nn.Conv1d(5, 5, 3, padding=1)
        self.conv2d = nn.Conv2d(1, 4, 3)
        self.conv2d_1x1 = nn.Conv2d(4, 4, 1)
        self.relu = nn.ReLU()
        self.flat = nn.Flatten()
        self.lin0 = nn.Linear(4 * 3 * 3, 2)
        self.sm = nn.LogSoftmax(dim=-1)

    def forward(self, X):
        hidden = self.relu(self.conv1d(X))
        hidden = self.relu(self.conv2d(hidden[:, None]))
        hidden = self.conv2d_1x1(hidden)
        return self.sm(self.lin0(self.flat(hidden)))


TOY_MODELS = {"mlp": MLP, "emb_conv1d": EmbConv1D, "conv": Conv}
