# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled products with weight-only quantized matrices (imported only with numba).

Decoding is bound by reading the weights: an int8 matrix is a quarter, an int4 one an
eighth of the float32 bytes. The kernels read the quantized bytes and widen them in
registers, never writing a float32 copy of the matrix.

The weight formats (the only API other code needs; functional.quantized makes them, and
GGUF's blocks are these formats with their float16 scales widened to float32):

- 8-bit: `q` int8 or uint8 (N, K) and `scales` float32 (N, G), G dividing K; with s = K // G,
  w[i, j] = scales[i, j // s] * q[i, j] (+ offsets[i, j // s] in the affine format). G = 1
  is per-output-channel quantization.
- 4-bit: `q` uint8 (N, K // 2) and `scales` float32 (N, G), s = K // G even. Group g of row
  i is the s / 2 bytes q[i, g s/2 : (g+1) s/2]; byte t holds element g s + t in its low
  nibble and element g s + s/2 + t in its high nibble (llama.cpp's Q4_0 layout, so both
  halves of a group stream against contiguous x). A nibble c stands for scale * (c - 8)
  (symmetric), scale * c + offset (affine, `offsets` (N, G) float32) or scale * codebook[c]
  (`codebook` float32 (16,), bitsandbytes' NF4/FP4).

`offsets` and `codebook` are None where the format has none; numba compiles one
specialisation per combination, with the unused branches removed.

`plan` computes out_t = x @ w_t.T (+ bias_t) for a few rows of x (decoding) and one or several
weights of one format (a decoding step's projections of one input), the output features
split over numba's threads (cpu_jit.parallel() decides whether that pool qualifies); every
weight byte is read once for all of x's rows, and each output is bitwise the same whether its
weight comes alone or with others. 4-bit weights go through cpu_jit_lut4's table lookups where
the CPU has them; otherwise one row of x is summed straight from the bytes (`_row_int4`), and
several rows, or a codebook, widen each weight row into an L1-resident float32 buffer by
`dequantize_int4` first. `dequantize_int8` / `dequantize_int4` widen a band of weight rows
into a float32 scratch (nogil, called on the worker threads), which prefill's matrix
products hand to BLAS band by band.
"""
import numba
import numpy as np

from . import cpu_jit_lut4
from .cpu_jit_parallel import _launch, parts, side_by_side

_ZERO = np.float32(0.0)
_EIGHT = np.float32(8.0)
# A byte b is split into its nibbles in float32, where the conversion and the arithmetic
# vectorise sixteen wide (integer shifts of a byte widen to 64 bits in numba):
# high = floor(b / 16), low = b - 16 high, both exact.
_SIXTEEN, _SIXTEENTH = np.float32(16.0), np.float32(1.0 / 16.0)
_OPTIONS = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})


@numba.njit(**_OPTIONS)
def _int8_band(x, q, scales, offsets, x_sums, bias, out, lo, hi, side_by_side):
    """out[:, lo:hi] = x @ w[lo:hi].T (+ bias) for the 8-bit weight (q, scales[, offsets]): one
    thread's band of output features, a row at a time or, `side_by_side` (the machine's measured
    choice, cpu_jit_parallel.side_by_side), four rows per pass a quarter of the band apart (four
    sequential streams, as the float32 rows kernel reads), the rows left over one at a time. An
    affine group adds offset * (the sum of x over the group), from x_sums (m, G)."""
    quarter = (hi - lo) // 4 if side_by_side else 0
    for i in range(lo, lo + quarter):
        _int8_four(x, q, scales, offsets, x_sums, bias, out, i, quarter)
    m, k = x.shape[0], q.shape[1]
    groups = scales.shape[1]
    size = k // groups
    for i in range(lo + 4 * quarter, hi):
        row, row_scales = q[i], scales[i]
        for r in range(m):
            xr = x[r]
            total = _ZERO
            for g in range(groups):
                # Slices, not computed indices: a computed index gets a wraparound
                # check that stops the loop from vectorising.
                qs, xs = row[g * size:(g + 1) * size], xr[g * size:(g + 1) * size]
                acc = _ZERO
                for j in range(size):
                    acc += np.float32(qs[j]) * xs[j]
                total += acc * row_scales[g]
                if offsets is not None:
                    total += offsets[i, g] * x_sums[r, g]
            out[r, i] = total if bias is None else total + bias[i]


@numba.njit(**_OPTIONS)
def _int8_four(x, q, scales, offsets, x_sums, bias, out, i, step):
    """_int8_band's rows i, i + step, i + 2 step and i + 3 step in one pass: each load of x
    serves the four rows, each summed as a row alone is."""
    m, k = x.shape[0], q.shape[1]
    groups = scales.shape[1]
    size = k // groups
    i1, i2, i3 = i + step, i + 2 * step, i + 3 * step
    row0, row1, row2, row3 = q[i], q[i1], q[i2], q[i3]
    for r in range(m):
        xr = x[r]
        t0 = t1 = t2 = t3 = _ZERO
        for g in range(groups):
            a, b = g * size, (g + 1) * size
            xs, q0, q1, q2, q3 = xr[a:b], row0[a:b], row1[a:b], row2[a:b], row3[a:b]
            a0 = a1 = a2 = a3 = _ZERO
            for j in range(size):
                v = xs[j]
                a0 += np.float32(q0[j]) * v
                a1 += np.float32(q1[j]) * v
                a2 += np.float32(q2[j]) * v
                a3 += np.float32(q3[j]) * v
            t0 += a0 * scales[i, g]
            t1 += a1 * scales[i1, g]
            t2 += a2 * scales[i2, g]
            t3 += a3 * scales[i3, g]
            if offsets is not None:
                group_sum = x_sums[r, g]
                t0 += offsets[i, g] * group_sum
                t1 += offsets[i1, g] * group_sum
                t2 += offsets[i2, g] * group_sum
                t3 += offsets[i3, g] * group_sum
        if bias is not None:
            t0, t1, t2, t3 = t0 + bias[i], t1 + bias[i1], t2 + bias[i2], t3 + bias[i3]
        out[r, i], out[r, i1], out[r, i2], out[r, i3] = t0, t1, t2, t3


@numba.njit(parallel=True, **_OPTIONS)
def _rows_int8(x, qs, scales, offsets, x_sums, biases, outs, parts, side_by_side):
    """outs[t] = x @ w_t.T (+ biases[t]) for each 8-bit weight of the tuples (one format) in one
    launch, each thread its band of every weight (`offsets` and `x_sums` None, or one per
    weight)."""
    for part in numba.prange(parts):
        for t in range(len(qs)):
            n = qs[t].shape[0]
            lo, hi = n * part // parts, n * (part + 1) // parts
            if offsets is None:
                _int8_band(x, qs[t], scales[t], None, None, biases[t], outs[t], lo, hi, side_by_side)
            else:
                _int8_band(x, qs[t], scales[t], offsets[t], x_sums[t], biases[t], outs[t], lo, hi, side_by_side)


def _probe_int8(w, mode):
    """side_by_side's measure: one row against the probe's weight as int8 with a scale per row."""
    q = w.view(np.int8)
    _rows_int8(np.ones((1, q.shape[1]), np.float32), (q,), (np.ones((q.shape[0], 1), np.float32),), None, None,
               (None,), (np.empty((1, q.shape[0]), np.float32),), parts(), mode)


@numba.njit(parallel=True, **_OPTIONS)
def _rows_int4(x, q, scales, offsets, codebook, bias, out, parts):
    """Each weight row is widened with its scales into an L1-resident float32 buffer first,
    then dotted with each row of x: the nibbles are separated once for all of x's rows (and a
    codebook is looked up once), where `_row_int4` would redo that work per row."""
    n = q.shape[0]
    m, k = x.shape
    for part in numba.prange(parts):
        buffer = np.empty((1, k), np.float32)
        wide = buffer[0]
        for i in range(n * part // parts, n * (part + 1) // parts):
            if offsets is None:  # a branch on an argument being None is removed at compile time
                dequantize_int4(q[i:i + 1], scales[i:i + 1], None, codebook, buffer)
            else:
                dequantize_int4(q[i:i + 1], scales[i:i + 1], offsets[i:i + 1], codebook, buffer)
            for r in range(m):
                xr = x[r]
                total = _ZERO
                for j in range(k):
                    total += wide[j] * xr[j]
                out[r, i] = total if bias is None else total + bias[i]


@numba.njit(parallel=True, **_OPTIONS)
def _row_int4(x_low, x_mixed, x_sums, q, scales, offsets, bias, out, parts):
    """One row of x against a symmetric or affine 4-bit weight in a single pass over the bytes.

    With byte b = 16 h + l of a group, l x_low + h x_high = b x_low + h (x_high - 16 x_low), so
    the caller passes x_low (each group's first half of x) and x_mixed (x_high - 16 x_low) and
    the nibbles are never separated; the sum of c x over the group times the scale, plus the
    offset (affine; -8 scale when symmetric) times the group's sum of x, is its part of the
    product."""
    n = q.shape[0]
    groups = scales.shape[1]
    half = q.shape[1] // groups
    for part in numba.prange(parts):
        for i in range(n * part // parts, n * (part + 1) // parts):
            row = q[i]
            total = _ZERO
            for g in range(groups):
                lo, hi = g * half, (g + 1) * half
                qs, xl, xm = row[lo:hi], x_low[lo:hi], x_mixed[lo:hi]
                acc = _ZERO
                for t in range(half):
                    b = np.float32(qs[t])
                    acc += b * xl[t] + np.floor(b * _SIXTEENTH) * xm[t]
                scale = scales[i, g]
                shift = -_EIGHT * scale if offsets is None else offsets[i, g]
                total += acc * scale + shift * x_sums[g]
            out[0, i] = total if bias is None else total + bias[i]


@numba.njit(**_OPTIONS)
def dequantize_int8(q, scales, offsets, out):
    """out (rows, K) float32 = the 8-bit band q (rows, K) times its scales (rows, G), plus its
    offsets (rows, G) when affine."""
    k, groups = q.shape[1], scales.shape[1]
    size = k // groups
    for i in range(q.shape[0]):
        for g in range(groups):
            qs, os = q[i, g * size:(g + 1) * size], out[i, g * size:(g + 1) * size]
            scale = scales[i, g]
            if offsets is None:
                for j in range(size):
                    os[j] = np.float32(qs[j]) * scale
            else:
                offset = offsets[i, g]
                for j in range(size):
                    os[j] = np.float32(qs[j]) * scale + offset


@numba.njit(**_OPTIONS)
def dequantize_int4(q, scales, offsets, codebook, out):
    """out (rows, K) float32 = the 4-bit band q (rows, K // 2) widened with its scales (rows, G)
    and its offsets (rows, G) or codebook (16,), whichever the format has."""
    k, groups = out.shape[1], scales.shape[1]
    size = k // groups
    half = size // 2
    for i in range(q.shape[0]):
        for g in range(groups):
            qs = q[i, g * half:(g + 1) * half]
            low, high = out[i, g * size:g * size + half], out[i, g * size + half:(g + 1) * size]
            scale = scales[i, g]
            if codebook is not None:
                for t in range(half):
                    b = qs[t]
                    low[t] = codebook[b & 15] * scale
                    high[t] = codebook[b >> 4] * scale
            elif offsets is not None:
                offset = offsets[i, g]
                for t in range(half):
                    b = np.float32(qs[t])
                    hi = np.floor(b * _SIXTEENTH)
                    low[t] = (b - hi * _SIXTEEN) * scale + offset
                    high[t] = hi * scale + offset
            else:
                for t in range(half):
                    b = np.float32(qs[t])
                    hi = np.floor(b * _SIXTEENTH)
                    low[t] = (b - hi * _SIXTEEN - _EIGHT) * scale
                    high[t] = (hi - _EIGHT) * scale


def plan(qs, scales, offsets, codebook, biases, bits):
    """The product of a few rows of x with each of these weights of one format (`offsets` None
    or one per weight, each bias a float32 (N_t,) array or None), planned once: a function of
    (x, outs), x (m, K) C-contiguous float32 and outs one C-contiguous float32 (m, N_t) array per
    weight, writing x @ w_t.T (+ biases[t]) into outs and returning them. The checks and
    argument tuples the kernels take are made here, not at every call: a decoding step's replay
    multiplies the same weights every token, and they were a third of a small 4-bit product's
    time; the outputs come from the caller, which may reuse them (a replay's planned buffers).

    All the weights run in one launch of numba's pool where the format allows (8-bit, and the
    4-bit table lookups of cpu_jit_lut4), each thread its band of every weight. Otherwise one
    row of a symmetric or affine 4-bit weight takes the single-pass `_row_int4`, and the other
    4-bit cases widen each weight row first (`_rows_int4`)."""
    if bits == 8:
        qs, scales, biases = tuple(qs), tuple(scales), tuple(biases)
        offsets = None if offsets is None else tuple(offsets)

        four = side_by_side("int8 rows", _probe_int8)

        def int8(x, outs):
            x_sums = None if offsets is None else tuple([_group_sums(x, s) for s in scales])
            with _launch:
                _rows_int8(x, qs, scales, offsets, x_sums, biases, outs, parts(), four)
            return outs
        return int8
    lookups = cpu_jit_lut4.plan(qs, scales, offsets, codebook, biases)
    if lookups is not None:
        return lookups
    offsets = (None,) * len(qs) if offsets is None else offsets

    def int4_each(x, outs):
        for q, s, o, bias, out in zip(qs, scales, offsets, biases, outs):
            _int4_rows(x, q, s, o, codebook, bias, out)
        return outs
    return int4_each


def _group_sums(x, scales):
    """The sums of x's rows over each of the weight's groups (m, G)."""
    return x.reshape(x.shape[0], scales.shape[1], -1).sum(axis=2, dtype=np.float32)


def _int4_rows(x, q, scales, offsets, codebook, bias, out):
    """out = x @ w.T (+ bias) for a 4-bit weight the table lookups do not serve."""
    if x.shape[0] == 1 and codebook is None:
        groups = x.reshape(scales.shape[1], 2, -1)
        x_low = np.ascontiguousarray(groups[:, 0]).reshape(-1)
        x_mixed = (groups[:, 1] - np.float32(16.0) * groups[:, 0]).reshape(-1)
        x_sums = groups.sum(axis=(1, 2), dtype=np.float32)
        with _launch:
            _row_int4(x_low, x_mixed, x_sums, q, scales, offsets, bias, out, parts())
        return
    with _launch:
        _rows_int4(x, q, scales, offsets, codebook, bias, out, parts())
