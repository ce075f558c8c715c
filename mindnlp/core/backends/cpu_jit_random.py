# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Dropout's keep masks drawn by compiled code (imported only with numba).

NumPy's float draws cost a training step more than the dropout they serve (a MiniLM LoRA
step's 32 x 64 x 384 dropout took 1.8 ms, 1.4 of them drawing floats one by one from
PCG64). Here one 64-bit draw of the caller's generator keys a SplitMix64 stream (Steele,
Lea and Flood's SplittableRandom generator, a counter-based stream: output t is mix(key +
(t + 1) gamma)), which compiled code expands straight into the mask, both halves of each
output deciding an element. An element's value depends only on the key and its index, so
the mask is the same on any number of threads.
"""
import math

import numba
import numpy as np

from . import cpu_jit
from .cpu_jit_parallel import _launch, parts

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1, _MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_SHIFT_30, _SHIFT_27, _SHIFT_31 = np.uint64(30), np.uint64(27), np.uint64(31)
_HIGH_24, _MIDDLE_24, _LOW_24 = np.uint64(40), np.uint64(8), np.uint64(0xFFFFFF)
_UNIFORM_BITS = 24         # as a float32 draw in [0, 1): a multiple of 2^-24
# Masks at least this large are drawn on numba's threads.
_POOL_ELEMENTS = 1 << 16


@numba.njit(nogil=True, cache=True)
def _mix(key, t):
    """Output t of the SplitMix64 stream `key`."""
    z = key + np.uint64(t + 1) * _GAMMA
    z = (z ^ (z >> _SHIFT_30)) * _MIX_1
    z = (z ^ (z >> _SHIFT_27)) * _MIX_2
    return z ^ (z >> _SHIFT_31)


@numba.njit(nogil=True, cache=True)
def _keep_band(out, key, threshold, kept, dropped, lo, hi):
    """out[2t] and out[2t + 1] for the outputs t in [lo, hi) of the stream `key` (out holding
    2 hi elements or more): `kept` where the output's top (element 2t) or middle (2t + 1) 24
    bits, a uniform integer u in [0, 2^24), have u >= threshold, else `dropped`. The pairs
    are whole, so that the loop needs no test for a last odd element (_keep_last's)."""
    pairs = out[2 * lo:2 * hi].reshape(hi - lo, 2)
    for t in range(hi - lo):
        z = _mix(key, lo + t)
        pairs[t, 0] = kept if (z >> _HIGH_24) >= threshold else dropped
        pairs[t, 1] = kept if ((z >> _MIDDLE_24) & _LOW_24) >= threshold else dropped


@numba.njit(nogil=True, cache=True)
def _keep_last(out, key, threshold, kept, dropped):
    """An odd last element of out: output len(out) // 2's top 24 bits."""
    n = out.shape[0]
    if n % 2:
        out[n - 1] = kept if (_mix(key, n // 2) >> _HIGH_24) >= threshold else dropped


@numba.njit(nogil=True, cache=True, parallel=True)
def _keep_split(out, key, threshold, kept, dropped, parts):
    """_keep_band over all of out's pairs, in `parts` bands, one per thread."""
    pairs = out.shape[0] // 2
    for part in numba.prange(parts):
        _keep_band(out, key, threshold, kept, dropped, pairs * part // parts, pairs * (part + 1) // parts)


def keep_mask(shape, dtype, key, p, kept):
    """An array of `shape` and `dtype` (float32 or float64) holding `kept` where an element is
    kept, with probability 1 - p (u >= p for u uniform on the multiples of 2^-24 in [0, 1), as
    a float32 draw compared with p), and 0 elsewhere; `key` a uint64 drawn from the generator."""
    out = np.empty(shape, dtype)
    flat = out.reshape(-1)
    threshold = np.uint64(min(math.ceil(p * (1 << _UNIFORM_BITS)), 1 << _UNIFORM_BITS))
    kept, dropped = dtype.type(kept), dtype.type(0)
    key = np.uint64(key)
    if flat.shape[0] >= _POOL_ELEMENTS and cpu_jit.parallel() is not None:
        with _launch:
            _keep_split(flat, key, threshold, kept, dropped, parts())
    else:
        _keep_band(flat, key, threshold, kept, dropped, 0, flat.shape[0] // 2)
    _keep_last(flat, key, threshold, kept, dropped)
    return out
