# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Layers and helpers Hugging Face model code imports from `transformers.pytorch_utils`."""
from .. import core
from ..core import nn
from .utils.import_utils import is_torch_greater_or_equal  # noqa: F401  (HF's tests import it from here)


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


def id_tensor_storage(tensor):
    """(device, start address, size in bytes) of the memory a tensor views.

    Two tensors that share memory (a view and its base, tied weights) give the same id; the
    id is stable for the tensor's lifetime.
    """
    array = tensor._data
    root = array
    while getattr(root, "base", None) is not None and hasattr(root.base, "__array_interface__"):
        root = root.base
    if hasattr(root, "__array_interface__"):
        return tensor.device, root.__array_interface__["data"][0], root.nbytes
    return tensor.device, tensor.data_ptr(), tensor.numel() * tensor.element_size()


def apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, *input_tensors):
    """Run forward_fn on chunks of the inputs along chunk_dim (memory for time); 0 = no chunking.

    Feed-forward layers act on each position alone, so chunking the sequence gives the same
    result with a peak activation of one chunk.
    """
    if chunk_size <= 0:
        return forward_fn(*input_tensors)
    length = input_tensors[0].shape[chunk_dim]
    if length % chunk_size != 0:
        raise ValueError(f"The dimension to be chunked {length} has to be a multiple of the chunk size {chunk_size}")
    n_chunks = length // chunk_size
    chunks = zip(*(t.chunk(n_chunks, dim=chunk_dim) for t in input_tensors))
    return core.cat([forward_fn(*c) for c in chunks], dim=chunk_dim)
