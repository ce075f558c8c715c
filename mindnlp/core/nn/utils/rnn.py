# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Sequence padding and packing (torch.nn.utils.rnn): data collators pad, recurrent layers run
packed batches."""
import collections

import numpy as np

from ... import _dtype, ops
from ..._tensor import Tensor

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
    "pad_sequence", "unpack_sequence", "unpad_sequence",
]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length tensors (L_i, *) into (T, B, *) or (B, T, *), T the longest length.

    Padding goes after each sequence (padding_side="right") or before it ("left").
    Differentiable with respect to the sequences.
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(ops.unbind(sequences, 0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for seq in sequences:
        missing = longest - seq.shape[0]
        if missing:
            filler = ops.full((missing,) + tuple(seq.shape[1:]), padding_value, dtype=seq.dtype, device=seq.device)
            seq = ops.cat([seq, filler] if padding_side == "right" else [filler, seq])
        padded.append(seq)
    return ops.stack(padded, dim=0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences, given their lengths (right padding)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths)]


class PackedSequence(collections.namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                               "unsorted_indices"])):
    """A batch of variable-length sequences stored time step by time step.

    `data` holds, for t = 0, 1, ..., the step-t elements of the `batch_sizes[t]` sequences still
    running, the sequences ordered by decreasing length; `batch_sizes` is a CPU int64 tensor.
    `sorted_indices[k]` is the original batch position of the k-th longest sequence and
    `unsorted_indices` its inverse (both None when the batch came sorted). Build one with
    `pack_padded_sequence` or `pack_sequence`, not by hand.
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:                      # PackedSequence((data, batch_sizes), ...)
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                "manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn.")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """Convert `data` as Tensor.to does; the indices follow data's device, batch_sizes stays on CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        sorted_indices, unsorted_indices = (None if t is None else t.to(data.device)
                                            for t in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def cpu(self):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda


def invert_permutation(permutation):
    """The inverse of a permutation given as an index tensor (None stays None)."""
    if permutation is None:
        return None
    return ops.argsort(permutation)


def _lengths_array(lengths):
    """`lengths` (a list or a tensor) as a host int64 array, checked as torch checks it."""
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device.type} tensor")
        return np.asarray(lengths.tolist(), dtype=np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _batch_sizes(lengths):
    """batch_sizes[t]: how many of the (decreasing) lengths exceed t."""
    steps = np.arange(int(lengths[0]))
    return (lengths[None, :] > steps[:, None]).sum(axis=1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) or (B, T, *) of sequences with the given lengths.

    With enforce_sorted the lengths must decrease; otherwise the batch is sorted here (longest
    first, ties in their original order) and the order is kept in the result's indices.
    Differentiable with respect to `input`: the packing is one gather.
    """
    lengths = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    if input.dim() < 2:
        raise ValueError(f"pack_padded_sequence expects an input of at least 2 dimensions, got {input.dim()}")
    batch, steps = input.shape[batch_dim], input.shape[1 - batch_dim]
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.shape[0]} "
                           f"(batch_size={batch})")
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = ops.tensor(order, dtype=_dtype.int64, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(lengths[1:] > lengths[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"Expected every length to be at most the padded length {steps}, but got a length of "
                           f"{lengths[0]}")
    batch_sizes = _batch_sizes(lengths)
    # Row of step t, sequence b in the input flattened over its (time, batch) or (batch, time) dims.
    rows = [t * batch + np.arange(n) if not batch_first else np.arange(n) * steps + t
            for t, n in enumerate(batch_sizes)]
    flat = input.flatten(0, 1)
    index = ops.tensor(np.concatenate(rows), dtype=_dtype.int64, device=input.device)
    data = flat.index_select(0, index)
    return PackedSequence(data, ops.tensor(batch_sizes, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack a PackedSequence into a padded batch in the original order, and the lengths.

    Returns (padded, lengths): padded is (T, B, *) or (B, T, *) with T the longest length (or
    `total_length`), filled with `padding_value` past each sequence's end; lengths is a CPU
    int64 tensor. Differentiable with respect to the packed data: the unpacking is one gather.
    """
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    max_length = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < max_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_length}")
        max_length = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    # source[t, b]: the packed row of step t of the b-th longest sequence, or the padding row.
    padding_row = data.shape[0]
    source = np.full((max_length, batch), padding_row, dtype=np.int64)
    start = 0
    for t, n in enumerate(batch_sizes):
        source[t, :n] = np.arange(start, start + n)
        start += n
    lengths = (batch_sizes[:, None] > np.arange(batch)[None, :]).sum(axis=0)
    if sequence.unsorted_indices is not None:
        order = np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)
        source, lengths = source[:, order], lengths[order]
    if batch_first:
        source = source.T
    filler = ops.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    index = ops.tensor(source.reshape(-1), dtype=_dtype.int64, device=data.device)
    padded = ops.cat([data, filler]).index_select(0, index)
    padded = padded.reshape(source.shape + tuple(data.shape[1:]))
    return padded, ops.tensor(lengths, dtype=_dtype.int64)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors (L_i, *) (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
