# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled matrix-vector products and decoding attention on numba's own thread pool
(imported only with numba).

Decoding multiplies one row (or a few) by every weight matrix: the product is memory-bound
and takes tens of microseconds, too short for a hand-off to Python worker threads and
exactly where OpenBLAS's threads would be woken (and then spin, slowing what follows).
Each weight is read once for all of x's rows, and its rows (or columns) are split over
numba's threads. Attention of a step's query reads the whole KV cache, memory-bound the
same way: its query heads are split over the threads. A prompt's activations and norms,
a few hundred microseconds each, are split over them too: the Python workers' hand-off
costs tens. cpu_jit.parallel() decides whether numba's pool qualifies.
"""
import functools
import os
import threading
import time

import numba
import numpy as np

from numba import types
from numba.extending import overload

from .cpu_jit import cache_attention, load
from .cpu_jit_bits import BFLOAT16, activation_half, layer_norm_half, narrow, widen
from .cpu_jit_ir import WIDTH, dot

_ZERO = np.float32(0.0)
# cpu_jit's loops called inside the kernels here: the attention's softmax, the activations and
# norms split over the pool (numba is there: this module is imported only with it)
_float32_loops = load()
_masked_softmax, _gated_silu, _gated_gelu_tanh, _layer_norm = (
    _float32_loops.masked_softmax, _float32_loops.gated_silu, _float32_loops.gated_gelu_tanh, _float32_loops.layer_norm)
_launch = threading.Lock()     # one launch at a time: numba's pool serves one caller
_FLOAT32 = -1                  # the `kind` of float32 arrays, beside cpu_jit_bits' half kinds
# The kernels split their work into `parts`, numba's thread count, passed in: a kernel
# that asks numba for it cannot be cached. It is read once and kept (set_parts follows
# core.set_num_threads): numba.get_num_threads() takes a process-wide multiprocessing lock
# on every call, which some calls wait tens of microseconds for (a SmolLM-sized int4
# decoding step made 210 such calls and lost 6 ms to them).
_parts = []


def parts():
    """How many parts a kernel splits its work into: numba's thread count."""
    if not _parts:
        _parts.append(numba.get_num_threads())
    return _parts[0]


def set_parts(n):
    _parts[:] = [n]


# Whether a matrix-vector kernel reads several weight rows per pass, spread over the thread's
# band (four or eight rows a band's quarter or eighth apart, each a sequential stream of its
# own, all sharing each load of x), or one row at a time in memory order (one stream). Which
# streams faster from memory depends on the CPU's prefetchers: on one AMD EPYC (AVX-512) one
# row at a time read 576x576 float32 at 26 GB/s where four adjacent rows read 20; on another
# (AVX2) four spread rows read 16-25 GB/s where one row read 11-18 (four adjacent rows, 8-16),
# bfloat16 rows 14-22 against 10-13. So each kernel measures both ways once per process, over
# weights larger than the caches (MINDNLP_SIDE_BY_SIDE=1/0 decides for all instead).
_side_by_side = {}
_PROBE_ROWS, _PROBE_WIDTH, _PROBE_WEIGHTS = 2048, 1024, 5      # 40 MB of float32: more than the caches hold


def side_by_side(kernel, run):
    """Whether `kernel` (a name) reads several weight rows per pass on this machine: measured
    the first time, by `run(weight, mode)`, which runs the kernel once over one of the probe's
    float32 (2048, 1024) weights (viewed as it needs) reading them that way."""
    choice = _side_by_side.get(kernel)
    if choice is None:
        asked = _side_by_side_asked()
        choice = _side_by_side[kernel] = asked if asked is not None else _faster_side_by_side(run)
    return choice


def _side_by_side_asked():
    """MINDNLP_SIDE_BY_SIDE=1/0 as True/False, None where it is not set."""
    asked = os.environ.get("MINDNLP_SIDE_BY_SIDE")
    return None if asked is None else bool(int(asked))


def _faster_side_by_side(run):
    """Time `run` both ways over the probe's weights, the best of three turns each."""
    weights = [np.full((_PROBE_ROWS, _PROBE_WIDTH), 0.5, np.float32) for _ in range(_PROBE_WEIGHTS)]
    best = {True: float("inf"), False: float("inf")}
    with _launch:
        for _ in range(3):
            for mode in best:
                start = time.perf_counter()
                for w in weights:
                    run(w, mode)
                best[mode] = min(best[mode], time.perf_counter() - start)
    return best[True] < best[False]


def _value(row, j, kind):
    """row[j] as a float32: itself, or for a half array read as its bits (uint16) widened
    (cpu_jit_bits.widen). Decoding attention reads a half model's cache this way, in place."""


@overload(_value)
def _value_of(row, j, kind):
    if isinstance(row.dtype, types.Integer):
        return lambda row, j, kind: widen(row[j], kind)
    return lambda row, j, kind: row[j]


@numba.njit(nogil=True, cache=True)
def add_bias(out, bias, lo, hi):
    """out[:, lo:hi] += bias[lo:hi]: a thread's band of output columns, after its products."""
    for r in range(out.shape[0]):
        for i in range(lo, hi):
            out[r, i] += bias[i]


@numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _one_row(x, w, out, lo, hi):
    """out[lo:hi] = w[lo:hi] @ x for one row x: _rows' loop for a decoding step. A function of
    its own: written in _rows' body, with the same inner loop, a 1536 x 576 product took ~15%
    longer from cache, and a compiled SmolLM2-shaped float32 step 22.8 instead of 21.2 ms
    (medians of 16 alternating steps' medians); the sums and their order are the same."""
    k = w.shape[1]
    for i in range(lo, hi):
        row = w[i]
        total = _ZERO
        for j in range(k):
            total += row[j] * x[j]
        out[i] = total


@numba.njit(nogil=True, cache=True, parallel=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _rows(x, weights, biases, outs, parts, side_by_side):
    """outs[t] = x @ weights[t].T (+ biases[t], where not empty) for each weight of the tuple,
    one launch for all (a decoding step's query/key/value projections share their input).

    Each thread takes a band of every weight's rows, one at a time or, `side_by_side`, four
    per pass a quarter of the band apart (see side_by_side()), the rows left over one at a
    time. A weight's bands are the same whether it comes alone or with others, so each output
    is bitwise the same. One row of x (a decoding step) runs _one_row, the same sums in the
    same order as a row of several."""
    m = x.shape[0]
    for part in numba.prange(parts):
        for t in range(len(weights)):
            w, out, bias = weights[t], outs[t], biases[t]
            n, k = w.shape
            lo, hi = n * part // parts, n * (part + 1) // parts
            i = lo
            if side_by_side:
                q = (hi - lo) // 4
                for s in range(q):
                    i0, i1, i2, i3 = lo + s, lo + q + s, lo + 2 * q + s, lo + 3 * q + s
                    w0, w1, w2, w3 = w[i0], w[i1], w[i2], w[i3]
                    for r in range(m):
                        xr = x[r]
                        t0 = t1 = t2 = t3 = _ZERO
                        for j in range(k):
                            v = xr[j]
                            t0 += w0[j] * v
                            t1 += w1[j] * v
                            t2 += w2[j] * v
                            t3 += w3[j] * v
                        out[r, i0], out[r, i1], out[r, i2], out[r, i3] = t0, t1, t2, t3
                i = lo + 4 * q
            if m == 1:
                _one_row(x[0], w, out[0], i, hi)
                i = hi
            while i < hi:
                row = w[i]
                for r in range(m):
                    xr = x[r]
                    total = _ZERO
                    for j in range(k):
                        total += row[j] * xr[j]
                    out[r, i] = total
                i += 1
            if bias.shape[0] > 0:
                add_bias(out, bias, lo, hi)


@numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _add_rows(x, b, total, lo, hi, kind):
    """total += x[lo:hi] @ b[lo:hi], one row of b at a time: the rows a pass of several leaves
    (b float32, or a half array's bits of that `kind`)."""
    for t in range(lo, hi):
        c, row = x[t], b[t]
        for j in range(total.shape[0]):
            total[j] += c * _value(row, j, kind)


@numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _column_band(x, b, total, lo, hi, kind, side_by_side):
    """total += x[lo:hi] @ b[lo:hi] for one row x (b float32, or a half weight's bits of that
    `kind`), the band's rows a row at a time in memory order or, `side_by_side` (the machine's
    measured choice for this kernel), eight per pass over the running sums, an eighth of the
    band apart: eight sequential streams (GPT-2 small's Conv1D weights on a 2-core AVX2 EPYC:
    17-24 GB/s, against 15-18 for eight adjacent rows and 12-15 for one row at a time)."""
    n = b.shape[1]
    q = (hi - lo) // 8 if side_by_side else 0
    for t in range(lo, lo + q):
        c0, c1, c2, c3, c4, c5, c6, c7 = (x[t], x[t + q], x[t + 2 * q], x[t + 3 * q], x[t + 4 * q], x[t + 5 * q],
                                          x[t + 6 * q], x[t + 7 * q])
        b0, b1, b2, b3, b4, b5, b6, b7 = (b[t], b[t + q], b[t + 2 * q], b[t + 3 * q], b[t + 4 * q], b[t + 5 * q],
                                          b[t + 6 * q], b[t + 7 * q])
        for j in range(n):
            total[j] += (c0 * _value(b0, j, kind) + c1 * _value(b1, j, kind) + c2 * _value(b2, j, kind) +
                         c3 * _value(b3, j, kind)) + (c4 * _value(b4, j, kind) + c5 * _value(b5, j, kind) +
                                                      c6 * _value(b6, j, kind) + c7 * _value(b7, j, kind))
    t = lo + 8 * q
    _add_rows(x, b, total, t, hi, kind)


@numba.njit(nogil=True, cache=True, parallel=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _columns(x, b, bias, out, parts, kind, side_by_side):
    """Each thread sums x's products with its own band of b's rows (a contiguous stream of
    memory, which DRAM serves best); the bands' partial sums are added at the end. Each row of
    x is summed alone, so a row gives the same bits alone as in a batch."""
    k, n = b.shape
    m = x.shape[0]
    partial = np.zeros((parts, m, n), np.float32)
    for part in numba.prange(parts):
        for r in range(m):
            _column_band(x[r], b, partial[part, r], k * part // parts, k * (part + 1) // parts, kind, side_by_side)
    for r in range(m):
        for j in range(n):
            value = partial[0, r, j]
            for part in range(1, parts):
                value += partial[part, r, j]
            out[r, j] = value if bias is None else value + bias[j]


_NO_BIAS = np.zeros(0, np.float32)


# A prompt's activations and norms, split over numba's pool: its threads start in
# microseconds where the Python worker threads take tens (a bfloat16 tanh-GELU of 128 x 3072
# went from 270 to 159 us on two cores, a float32 gated SiLU of 128 x 1536 from 113 to 48, an
# RMS norm of 128 x 576 from 19 to 7). Each element, or row, is computed as on one thread.
@numba.njit(nogil=True, cache=True, parallel=True)
def _activation_float32(x, up, tanh_gelu, out, parts):
    """out = act(x) (* up) over flat float32 arrays, a contiguous part per thread."""
    n = out.shape[0]
    for part in numba.prange(parts):
        lo, hi = n * part // parts, n * (part + 1) // parts
        gate = None if up is None else up[lo:hi]
        if tanh_gelu:
            _gated_gelu_tanh(x[lo:hi], gate, out[lo:hi])
        else:
            _gated_silu(x[lo:hi], gate, out[lo:hi])


@numba.njit(nogil=True, cache=True, parallel=True)
def _activation_half(x, up, kind, tanh_gelu, out, parts):
    """cpu_jit_bits.activation_half over flat half arrays (bits), a contiguous part per thread."""
    n = out.shape[0]
    for part in numba.prange(parts):
        lo, hi = n * part // parts, n * (part + 1) // parts
        activation_half(x[lo:hi], None if up is None else up[lo:hi], kind, tanh_gelu, out[lo:hi])


def activation(x, up, tanh_gelu, out, kind=None):
    """out = silu(x) or gelu_tanh(x) (times up, where not None) over flat C-contiguous arrays:
    float32, or with `kind` (cpu_jit_bits) half arrays' bits, rounded as the half ops round."""
    with _launch:
        if kind is None:
            _activation_float32(x, up, tanh_gelu, out, parts())
        else:
            _activation_half(x, up, kind, tanh_gelu, out, parts())


@numba.njit(nogil=True, cache=True, parallel=True)
def _layer_norm_float32(x, weight, bias, eps, centered, out, mean, rstd, parts):
    """cpu_jit's layer_norm over float32 rows, a contiguous band of them per thread."""
    n = x.shape[0]
    for part in numba.prange(parts):
        lo, hi = n * part // parts, n * (part + 1) // parts
        _layer_norm(x[lo:hi], weight, bias, eps, centered, out[lo:hi], mean[lo:hi], rstd[lo:hi])


@numba.njit(nogil=True, cache=True, parallel=True)
def _layer_norm_half(x, kind, weight, bias, eps, centered, out, mean, rstd, parts):
    """cpu_jit_bits.layer_norm_half over half rows (bits), a contiguous band of them per thread."""
    n = x.shape[0]
    for part in numba.prange(parts):
        lo, hi = n * part // parts, n * (part + 1) // parts
        layer_norm_half(x[lo:hi], kind, weight, bias, eps, centered, out[lo:hi], mean[lo:hi], rstd[lo:hi])


def layer_norm(x, weight, bias, eps, centered, out, mean, rstd, kind=None):
    """The rows of x (rows, width), C-contiguous, normalised (centered: layer norm, else RMS
    norm) times weight plus bias (float32) into out, their means and rstds into mean and rstd:
    float32 rows, or with `kind` half rows' bits (out the same), rounded as the half op rounds."""
    with _launch:
        if kind is None:
            _layer_norm_float32(x, weight, bias, np.float32(eps), centered, out, mean, rstd, parts())
        else:
            _layer_norm_half(x, kind, weight, bias, np.float32(eps), centered, out, mean, rstd, parts())


# A few rows of x against a weight stored (N, K) as Linear stores it, dotted in explicit
# vectors (cpu_jit_ir.dot): float32 weights with AVX-512 (K a multiple of 16), and the 16-bit
# weights of cpu_jit_half, widened where loaded. With AVX-512 each weight row's loads ask for
# the bytes _DOT_AHEAD past them: SmolLM-shaped float32 weights (30 layers and the head, 540
# MB, in-process turns) read at 22.0 GB/s without the prefetch and 23.3 with it (22.9 at 2
# KiB, 22.4 at 4 KiB), against 20.2 for the loops of _rows. Each product sums its own lanes
# (`separate`), so a row of x gives the same bits alone, with other rows, or with other weight
# rows in a pass.
_DOT_AHEAD = 1024

if WIDTH is not None:
    _ahead = _DOT_AHEAD if WIDTH == 16 else 0
    _dot_four, _dot_one = (dot(rows, 1, WIDTH, _ahead, separate=True) for rows in (4, 1))
    _dot_by8, _dot_by4, _dot_by2 = (dot(1, xrows, WIDTH, _ahead, separate=True) for xrows in (8, 4, 2))

    @numba.njit(nogil=True, cache=True)
    def dot_band(x, w, kind, out, lo, hi, side_by_side):
        """out[:, lo:hi] = x @ w[lo:hi].T, float32, for w float32 or a half weight's bits of
        that `kind`: one row of x against four weight rows per pass, a quarter of the band
        apart, where `side_by_side`, else against a row at a time; several rows of x against
        one weight row, up to eight sharing each load of it."""
        m = x.shape[0]
        i = lo
        if m == 1 and side_by_side:
            q = (hi - lo) // 4
            for s in range(lo, lo + q):
                out[0, s], out[0, s + q], out[0, s + 2 * q], out[0, s + 3 * q] = _dot_four(w, s, q, x, 0, kind)
            i = lo + 4 * q
        while i < hi:
            r = 0
            while r + 8 <= m:
                values = _dot_by8(w, i, 1, x, r, kind)
                for t in range(8):
                    out[r + t, i] = values[t]
                r += 8
            if r + 4 <= m:
                values4 = _dot_by4(w, i, 1, x, r, kind)
                for t in range(4):
                    out[r + t, i] = values4[t]
                r += 4
            if r + 2 <= m:
                out[r, i], out[r + 1, i] = _dot_by2(w, i, 1, x, r, kind)
                r += 2
            if r < m:
                out[r, i] = _dot_one(w, i, 1, x, r, kind)[0]
            i += 1

    @numba.njit(nogil=True, cache=True)
    def _narrow_band(out, kind, narrowed, lo, hi):
        """narrowed[:, lo:hi] = out[:, lo:hi] rounded to the half dtype, as bits."""
        for r in range(out.shape[0]):
            for i in range(lo, hi):
                narrowed[r, i] = narrow(out[r, i], kind)

    @numba.njit(nogil=True, cache=True, parallel=True)
    def dot_rows(x16, x, kind, weights, biases, outs, narrowed, parts, side_by_side):
        """outs[t] = x @ weights[t].T (+ biases[t], where not empty), float32, for each weight
        (float32, or a half weight's bits of that `kind`) in one launch, each thread a band of
        every weight's rows (dot_band); a weight's bands are the same alone or with others, so
        each output is too. x16, where it has rows, is x as half bits, widened into x first;
        narrowed[t], where it has rows, takes the output rounded to the half dtype (a half
        linear's result)."""
        for r in range(x16.shape[0]):
            for j in range(x16.shape[1]):
                x[r, j] = widen(x16[r, j], kind)
        for part in numba.prange(parts):
            for t in range(len(weights)):
                w, out, bias = weights[t], outs[t], biases[t]
                n = w.shape[0]
                lo, hi = n * part // parts, n * (part + 1) // parts
                dot_band(x, w, kind, out, lo, hi, side_by_side)
                if bias.shape[0] > 0:
                    add_bias(out, bias, lo, hi)
                if narrowed[t].shape[0] > 0:
                    _narrow_band(out, kind, narrowed[t], lo, hi)


_NO_HALF = np.zeros((0, 0), np.uint16)     # no half rows: x given as float32, or no rounded output


def matvec_rows(x, w, bias, out):
    """out = x @ w.T (+ bias): x (m, k), w (n, k) and out (m, n) C-contiguous float32."""
    matvec_rows_many(x, (w,), (bias,), (out,))


class _ChosenWhileRunning:
    """Which of two ways of reading the weights, with the same results to the bit, runs
    faster, learnt from the calls themselves: they take turns, timed, until each way has read
    _CHOICE_BYTES of weights, and the faster is kept. side_by_side's probe reads 40 MB, which a
    Xeon's 260 MB third-level cache holds: there both ways measured even (0.92-1.11x over six
    processes) where SmolLM's 540 MB of weights read 1.24x faster four rows at a time."""

    def __init__(self):
        self.choice = _side_by_side_asked()
        self.seconds, self.read = [0.0, 0.0], [0, 0]

    def run(self, kernel, weights):
        """kernel(mode) in the chosen way, or in the next to time over these weights; the caller
        holds _launch."""
        if self.choice is not None:
            kernel(self.choice)
            return
        mode = self.read[1] <= self.read[0]
        start = time.perf_counter()
        kernel(mode)
        self.seconds[mode] += time.perf_counter() - start
        self.read[mode] += sum(w.nbytes for w in weights)
        if min(self.read) >= _CHOICE_BYTES:
            self.choice = self.read[1] / self.seconds[1] > self.read[0] / self.seconds[0]


_CHOICE_BYTES = 1 << 30
_dot_rows_way = _ChosenWhileRunning()


def matvec_rows_many(x, weights, biases, outs):
    """outs[t] = x @ weights[t].T (+ biases[t] where not None) in one launch: x (m, k), each
    weight (n_t, k) and output (m, n_t) C-contiguous float32, each bias (n_t,) or None."""
    biases, weights, outs = tuple(_NO_BIAS if b is None else b for b in biases), tuple(weights), tuple(outs)
    if WIDTH == 16 and x.shape[1] % WIDTH == 0 and x.shape[1]:
        with _launch:
            _dot_rows_way.run(lambda four: dot_rows(_NO_HALF, x, _FLOAT32, weights, biases, outs,
                                                    (_NO_HALF,) * len(weights), parts(), four), weights)
        return
    four = side_by_side("rows", _probe_rows)
    with _launch:
        _rows(x, weights, biases, outs, parts(), four)


def _probe_rows(w, mode):
    _rows(np.ones((1, w.shape[1]), np.float32), (w,), (_NO_BIAS,), (np.empty((1, w.shape[0]), np.float32),), parts(),
          mode)


def matvec_columns(x, b, bias, out, half=None):
    """out = x @ b (+ bias): x (m, k), b (k, n) and out (m, n) C-contiguous float32; with `half`
    (a cpu_jit_bits kind), b is a half weight's bits (uint16), widened where read."""
    _check_half(b, half)
    four = side_by_side("columns", _probe_columns) if half is None else side_by_side("half columns",
                                                                                      _probe_half_columns)
    with _launch:
        _columns(x, b, bias, out, parts(), _FLOAT32 if half is None else half, four)


def _probe_columns(w, mode, kind=_FLOAT32):
    """side_by_side's measure for the column bands: the probe's weight stored (in, out), as
    float32 or, with a half `kind`, as half bits."""
    b = w if kind == _FLOAT32 else w.view(np.uint16)
    b = b.reshape(b.shape[1], b.shape[0])
    _columns(np.ones((1, b.shape[0]), np.float32), b, None, np.empty((1, b.shape[1]), np.float32), parts(), kind, mode)


_probe_half_columns = functools.partial(_probe_columns, kind=BFLOAT16)


def _check_half(a, half):
    """A half kind goes with a half array's bits (uint16), none with float32: the loops would
    otherwise read integers as values."""
    if (half is not None) != (a.dtype == np.uint16):
        raise TypeError(f"the loops take float32 values, or uint16 bits with a half kind: got {a.dtype} "
                        f"with kind {half}")


@numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _attention_scores(q, k, scores, lo, hi, kind):
    """scores[b H + h, i, s] = q[b, h, i] . k[b, h // groups, s] for the query heads b H + h
    in [lo, hi) and the keys s the scores are wide for, reading the keys' rows in place
    (float32, or a half cache's bits of that `kind`), four keys per pass (four independent
    sums share each load of the query, as _rows does with weight rows)."""
    heads, length, depth = q.shape[1], q.shape[2], q.shape[3]
    groups, n = heads // k.shape[1], scores.shape[2]
    for item in range(lo, hi):
        b, h = item // heads, item % heads
        keys = k[b, h // groups]
        for i in range(length):
            query, row = q[b, h, i], scores[item, i]
            s = 0
            while s + 4 <= n:
                k0, k1, k2, k3 = keys[s], keys[s + 1], keys[s + 2], keys[s + 3]
                t0 = t1 = t2 = t3 = _ZERO
                for j in range(depth):
                    x = query[j]
                    t0 += _value(k0, j, kind) * x
                    t1 += _value(k1, j, kind) * x
                    t2 += _value(k2, j, kind) * x
                    t3 += _value(k3, j, kind) * x
                row[s], row[s + 1], row[s + 2], row[s + 3] = t0, t1, t2, t3
                s += 4
            while s < n:
                key = keys[s]
                total = _ZERO
                for j in range(depth):
                    total += query[j] * _value(key, j, kind)
                row[s] = total
                s += 1


@numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _attention_values(probs, v, out, lo, hi, kind):
    """out[b, h, i] = sum over s of probs[b H + h, i, s] v[b, h // groups, s] for the query
    heads b H + h in [lo, hi) and the keys s probs is wide for (v float32, or a half cache's
    bits of that `kind`), four value rows per pass: eight at a time (as _column_band may sum
    longer rows), on a head's short rows (64 values), read a cold decoding cache slower
    (SmolLM2's 3 key/value heads at 2048 positions: 236-244 against 168-181 us)."""
    heads, length, depth = out.shape[1], out.shape[2], out.shape[3]
    groups, n = heads // v.shape[1], probs.shape[2]
    for item in range(lo, hi):
        b, h = item // heads, item % heads
        values = v[b, h // groups]
        for i in range(length):
            weights, total = probs[item, i], out[b, h, i]
            total[:] = _ZERO
            s = 0
            while s + 4 <= n:
                p0, p1, p2, p3 = weights[s], weights[s + 1], weights[s + 2], weights[s + 3]
                r0, r1, r2, r3 = values[s], values[s + 1], values[s + 2], values[s + 3]
                for j in range(depth):
                    total[j] += p0 * _value(r0, j, kind) + p1 * _value(r1, j, kind) + \
                        p2 * _value(r2, j, kind) + p3 * _value(r3, j, kind)
                s += 4
            _add_rows(weights, values, total, s, n, kind)


@numba.njit(nogil=True, cache=True)
def softmax_heads(scores, mask, scale, lo, hi):
    """cpu_jit's masked_softmax of the query heads [lo, hi)' rows of scores (B H, L, keys),
    with mask None, one (1, 1 or L, keys) for every head, or a row of masks per head."""
    if mask is None:
        _masked_softmax(scores[lo:hi], None, scale)
    elif mask.shape[0] == 1:
        _masked_softmax(scores[lo:hi], mask, scale)
    else:
        _masked_softmax(scores[lo:hi], mask[lo:hi], scale)


@numba.njit(nogil=True, cache=True)
def _attention_items(q, k, v, kind, mask, scale, scores, out, lo, hi):
    """out for the query heads in [lo, hi): their scores, their softmax and their values."""
    _attention_scores(q, k, scores, lo, hi, kind)
    softmax_heads(scores, mask, scale, lo, hi)
    _attention_values(scores, v, out, lo, hi, kind)


@numba.njit(nogil=True, cache=True, parallel=True)
def _split_attention(q, k, v, kind, mask, scale, scores, out, parts):
    """_attention_items with the query heads in `parts` bands, one per thread."""
    items = scores.shape[0]
    for part in numba.prange(parts):
        _attention_items(q, k, v, kind, mask, scale, scores, out, items * part // parts, items * (part + 1) // parts)


@numba.njit(nogil=True, cache=True)
def live_keys(mask, n, dead):
    """One past the last of the first n keys that some row of mask (m, rows, >= n) may attend
    (a value above `dead`): the keys after it get probability 0, a static cache's unfilled
    positions. n where mask is None, or where a row may attend none of them (its result
    depends on every key)."""
    if mask is None:
        return n
    width = 0
    for m in range(mask.shape[0]):
        for i in range(mask.shape[1]):
            row = mask[m, i]
            j = n
            while j > 0 and row[j - 1] <= dead:
                j -= 1
            if j == 0:
                return n
            width = max(width, j)
    return width


def attention(q, k, v, mask, scale, out, split, half=None, keys=None):
    """out = softmax(q k^T scale + mask) v for q (B, H, L, E), k and v (B, H / groups, S, E)
    and out (B, H, L, E), all C-contiguous float32, mask None or (1 or B H, 1 or L, S), in one
    compiled call: a decoding step runs it in every layer, and three calls (scores, softmax,
    values) cost it more than their work. With `half` (a cpu_jit_bits kind), k and v are a half
    cache's bits (uint16), widened where read: half the bytes of a float32 copy, and no copy.
    With `keys` (live_keys), only the first keys are read: the result is then the bits the
    cache holding only those would give, and a static cache's unfilled end costs nothing.

    With `split` the query heads are split over numba's threads (a cache long enough that
    reading it outweighs waking them); otherwise all run on the calling thread. Query heads
    sharing key/value heads go to cpu_jit_cache_attention where it serves (each key and value
    row read once for its group, not once per query head)."""
    _check_half(k, half)
    kind, keys = _FLOAT32 if half is None else half, k.shape[2] if keys is None else keys
    vector = cache_attention() if q.shape[1] > k.shape[1] else None     # query heads sharing key/value heads
    if vector is not None and vector.serves(q.shape[3], v.shape[3], keys):
        vector.attention(q, k, v, kind, mask, scale, out, split, keys)
        return
    items = q.shape[0] * q.shape[1]
    scores = np.empty((items, q.shape[2], keys), np.float32)
    if split:
        with _launch:
            _split_attention(q, k, v, kind, mask, np.float32(scale), scores, out, parts())
    else:
        _attention_items(q, k, v, kind, mask, np.float32(scale), scores, out, 0, items)
