# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Sequence padding helpers (torch.nn.utils.rnn) used by data collators."""
from ... import ops
from ..._tensor import Tensor

__all__ = ["pad_sequence", "unpad_sequence"]


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
