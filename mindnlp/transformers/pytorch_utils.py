"""Layers and helpers Hugging Face model code imports from `transformers.pytorch_utils`."""
from .. import core
from ..core import nn


class Conv1D(nn.Module):
    """GPT-2's projection: a linear layer whose weight is stored transposed, (nx, nf).

    `y = x @ weight + bias`, so a checkpoint written by the original TensorFlow GPT-2 loads
    without transposing. Initialised as HF does: weight ~ N(0, 0.02), bias zero.
    """

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.nx = nx
        self.weight = nn.Parameter(core.empty(nx, nf))
        self.bias = nn.Parameter(core.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = tuple(x.shape[:-1]) + (self.nf,)
        x = core.addmm(self.bias, x.view(-1, x.shape[-1]), self.weight)
        return x.view(size_out)

    def __repr__(self):
        return f"Conv1D(nf={self.nf}, nx={self.nx})"
