# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Attention of short sequences, every (batch entry, head) in one compiled call, on
cpu_jit_gemm's tiles (imported only with numba; AVX-512, as those tiles).

An encoder's batch of 32 sentences of 24 tokens with 12 heads is 384 products of 24 x 32 by
32 x 24 and as many by the values: BLAS, one call per product or per group of heads, spends
most of its time in the calls, and a softmax over rows of 24 scores spends most of its own
in each row's loop ends. Here each (batch entry, head) takes:

- the scores transposed, keys by queries: `st = k q^T`, the row-major (outer-product) tiles
  reading the head's rows of k where they are (a head's rows inside (batch, positions, heads,
  dim) activations are read in place, no copy) against the queries transposed into a small
  (dim, queries) buffer. The dot-product tiles, which read both in place, spend most of their
  time summing each product's lanes at a head's depth of 32-64 (MiniLM's 32 x 12 heads of 128
  positions: 18.5 -> 14.8 ms on one thread, 10.3 -> 8.8 on two);
- the softmax down st's columns, one vector of queries at a time: the row maxima and sums of
  a softmax over keys become lane-wise maxima and sums over st's rows, with no horizontal
  reduction and no loop remainder (the queries are padded to whole vectors);
- `out = st^T v`, the row-major tiles broadcasting each probability from st's transpose.

Under a causal mask (a prompt) the queries go 32 at a time, each chunk over the keys its
queries may attend: the triangle the mask hides is never computed (12 heads of 128 positions
379 -> 288 us), and the left-out keys would have added exact zeros, so the bits are the same.

Measured on a two-core AVX-512 machine: 384 heads of 24 queries and keys of 32 dimensions in
0.64 ms on one thread where the work units of cpu_kernels.attention took 0.87 ms (0.71 on two
threads, against 0.32 here); 12 heads of 128 are even; at 512 positions BLAS's products of
long rows win, and a decoding step (a query or two against the cache) is faster on
cpu_jit_parallel's loops, which read the cache once: cpu_kernels.small_attention routes.

The softmax is cpu_jit.masked_softmax's: the same exp (a Cephes polynomial with the power
of two put in the exponent bits), the same maximum over the floats' ordered bit patterns (so
a NaN score makes its query's output NaN), and a query that may attend no key (every score
-inf) gets zeros. Results are the same bits on one thread or split over numba's.
"""
import numba
import numpy as np

from . import cpu_jit_gemm
from .cpu_jit import _EXP_POLY, _EXP_UNDERFLOW, _LN2_HI, _LN2_LO
from .cpu_jit_parallel import _launch, parts
from .cpu_kernels import key_ends

_F32 = np.float32
_LANES = 16
_ZERO, _ONE, _HALF, _NEG_INF = _F32(0.0), _F32(1.0), _F32(0.5), _F32(-np.inf)
_LOG2E, _LOWEST_EXPONENT = _F32(1.4426950408889634), _F32(-126.0)
_P0, _P1, _P2, _P3, _P4, _P5 = _EXP_POLY
_SIGN_FREE = np.int32(0x7FFFFFFF)
_SMALLEST_INT = np.int32(-2147483648)
_OPTIONS = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
# Queries per chunk where a mask hides the later keys from the earlier queries (causal).
_CHUNK = 32


@numba.njit(**_OPTIONS)
def _softmax_columns(st, keys, mask, mask_b, mask_h, scale, top, inverse, powers):
    """st[:keys] (keys, queries padded to whole vectors) = softmax over each column of
    st * scale + mask[mask_b, mask_h] (mask (..., 1 or queries, keys))."""
    width = st.shape[1]
    top_bits, scales = top.view(np.int32), powers.view(np.float32)
    top_bits[:] = _SMALLEST_INT
    per_query = mask.shape[2] > 1
    for j in range(keys):
        row = st[j]
        if per_query:
            for i in range(mask.shape[2]):
                row[i] = row[i] * scale + mask[mask_b, mask_h, i, j]
        else:
            m = mask[mask_b, mask_h, 0, j]
            for i in range(width):
                row[i] = row[i] * scale + m
        # the maximum over the floats' bit patterns mapped to ordered integers (see the docstring)
        bits = row.view(np.int32)
        for i in range(width):
            b = bits[i]
            top_bits[i] = max(top_bits[i], b ^ ((b >> 31) & _SIGN_FREE))
    for i in range(width):
        b = top_bits[i]
        top_bits[i] = b ^ ((b >> 31) & _SIGN_FREE)
        # a query whose every score is -inf: 0 as its maximum makes its exps 0, and its sum 0
        top[i] = _ZERO if top[i] == _NEG_INF else top[i]
        inverse[i] = _ZERO
    for j in range(keys):
        row = st[j]
        for i in range(width):
            x = row[i] - top[i]
            t = np.floor(x * _LOG2E + _HALF)
            r = x - t * _LN2_HI - t * _LN2_LO
            p = ((((_P0 * r + _P1) * r + _P2) * r + _P3) * r + _P4) * r + _P5
            row[i] = _ZERO if x < _EXP_UNDERFLOW else p * r * r + r + _ONE
            powers[i] = (np.int32(max(t, _LOWEST_EXPONENT)) + 127) << 23
        for i in range(width):
            e = row[i] * scales[i]
            row[i] = e
            inverse[i] += e
    for i in range(width):
        inverse[i] = _ZERO if inverse[i] == _ZERO else _ONE / inverse[i]     # a live query's sum is >= 1
    for j in range(keys):
        row = st[j]
        for i in range(width):
            row[i] *= inverse[i]


@numba.njit(**_OPTIONS)
def _heads(q, k, v, mask, scale, out, lo, hi, limits, chunk):
    """out[b, h] = attention of q[b, h] over k[b, h // groups], v[b, h // groups] for the
    (batch entry, head) items b * H + h in [lo, hi); the queries taken `chunk` at a time, chunk
    c over its first limits[c] keys (the others have zero probability for all its queries)."""
    heads, queries, depth = q.shape[1], q.shape[2], q.shape[3]
    groups = q.shape[1] // k.shape[1]
    width = (chunk + _LANES - 1) // _LANES * _LANES
    st = np.zeros((k.shape[2], width), np.float32)
    qt = np.zeros((depth, width), q.dtype)
    top, inverse, powers = np.empty(width, np.float32), np.empty(width, np.float32), np.empty(width, np.int32)
    for item in range(lo, hi):
        b, h = item // heads, item % heads
        keys_bh, values_bh = k[b, h // groups], v[b, h // groups]
        for c in range(limits.shape[0]):
            q0, q1, keys = c * chunk, min((c + 1) * chunk, queries), limits[c]
            n, scores = q1 - q0, st[:keys]
            chunk_q = q[b, h, q0:q1]
            for e in range(depth):      # the chunk's queries transposed, padded with zeros
                line = qt[e]
                for i in range(n):
                    line[i] = chunk_q[i, e]
                line[n:] = 0
            cpu_jit_gemm._outer_band(keys_bh[:keys], qt, scores, 0, keys, 0, width)
            rows = mask[:, :, q0:q1] if mask.shape[2] > 1 else mask[:, :, 0:1]
            _softmax_columns(scores, keys, rows, b if mask.shape[0] > 1 else 0, h if mask.shape[1] > 1 else 0, scale,
                             top, inverse, powers)
            cpu_jit_gemm._outer_band(scores[:, :n].T, values_bh[:keys], out[b, h, q0:q1], 0, n, 0, v.shape[3])


@numba.njit(parallel=True, **_OPTIONS)
def _split_heads(q, k, v, mask, scale, out, count, limits, chunk):
    """_heads with the items in `count` bands, one per thread."""
    items = q.shape[0] * q.shape[1]
    for part in numba.prange(count):
        _heads(q, k, v, mask, scale, out, items * part // count, items * (part + 1) // count, limits, chunk)


def _key_limits(mask, queries, keys):
    """(limits, chunk): the queries in chunks of _CHUNK, each with the number of leading keys any
    of its queries may attend under `mask` (4-d float32), a causal mask's triangle then left
    out; one chunk of every query over every key where that saves little (two chunks or
    fewer), nothing, or where a query may attend no key (its result depends on all of them)."""
    whole = np.array([keys], np.int64), queries
    if mask.shape[2] == 1 or queries <= 2 * _CHUNK:
        return whole
    ends = key_ends(mask, keys)
    if ends.min() == 0:         # in some batch entry or head, a query that may attend nothing
        return whole
    limits = np.maximum.reduceat(ends.max(axis=(0, 1)), np.arange(0, queries, _CHUNK))
    return (limits, _CHUNK) if limits.min() < keys else whole


def usable():
    return cpu_jit_gemm.usable("float32")


def _rows_in_place(a, dtypes=(_F32,)):
    return a.dtype in dtypes and a.ndim == 4 and a.strides[-1] == a.itemsize


def _mask_4d(mask, shape):
    """mask as a float32 view (1 or B, 1 or H, 1 or L, S) with contiguous rows, or None where
    it does not broadcast to the scores' shape (B, H, L, S)."""
    keys = shape[-1]
    mask = np.asarray(mask, dtype=_F32)
    if mask.ndim > 4:
        return None
    mask = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
    if any(m not in (1, s) for m, s in zip(mask.shape, shape)):
        return None
    if mask.shape[-1] != keys or mask.strides[-1] != mask.itemsize:
        mask = np.ascontiguousarray(np.broadcast_to(mask, mask.shape[:-1] + (keys,)))
    return mask


def attention(q, k, v, mask, scale, threads):
    """softmax(q k^T scale + mask) v for q (B, H, L, E), k (B, H / groups, S, E) and v (B, H /
    groups, S, Ev), float32 with contiguous rows (any other strides); q and k may instead both
    be bfloat16 bits (uint16, E a multiple of 32) where the CPU has the bfloat16 dot
    instruction, which then gives the scores. mask additive float32 broadcastable to (B, H, L,
    S) or None; returned (B, H, L, Ev) laid out as (B, L, H, Ev) in memory, split over numba's
    threads where `threads`. None, with nothing computed, where this does not serve: E or Ev
    not a multiple of 16, no keys, other dtypes or layouts. (The
    module is reached through cpu_jit.short_attention, which has checked `usable`.)"""
    scores_from = (_F32, np.dtype(np.uint16)) if cpu_jit_gemm.usable("bfloat16") else (_F32,)
    if not (_rows_in_place(q, scores_from) and _rows_in_place(k, (q.dtype,)) and _rows_in_place(v)):
        return None
    batch, heads, queries, depth = q.shape
    keys, out_depth = k.shape[2], v.shape[3]
    if (k.shape[0] != batch or v.shape[0] != batch or k.shape[1] != v.shape[1] or heads % k.shape[1]
            or k.shape[3] != depth or v.shape[2] != keys or depth % (2 * _LANES if q.dtype == np.uint16 else _LANES)
            or out_depth % _LANES or not keys):
        return None
    mask = np.zeros((1, 1, 1, keys), _F32) if mask is None else _mask_4d(mask, (batch, heads, queries, keys))
    if mask is None:
        return None
    out = np.swapaxes(np.empty((batch, queries, heads, out_depth), _F32), 1, 2)
    limits, chunk = _key_limits(mask, queries, keys)
    if threads and batch * heads > 1:
        with _launch:
            _split_heads(q, k, v, mask, _F32(scale), out, parts(), limits, chunk)
    else:
        _heads(q, k, v, mask, _F32(scale), out, 0, batch * heads, limits, chunk)
    return out
