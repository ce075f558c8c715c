# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""A few float32 rows of x against a bfloat16 or float16 weight, the weight widened in
registers (imported only with numba, used where the CPU has AVX-512 or AVX2).

A model loaded in bfloat16 (a checkpoint's own dtype, what from_pretrained's dtype="auto"
gives for most current models) holds its weights in two bytes each. Widening a whole weight
to float32 before each product, as the composed op does, writes and reads six bytes per
weight where the product needs two: decoding ran at half the speed of float32. Here each
vector of 16-bit values is loaded and widened where it is used: bfloat16 by shifting its bits
into a float's upper half (exact), float16 by the CPU's conversion instruction (exact too).
The products are float32 sums, as in the composed op.

Like cpu_jit_lut4 (whose loop layout this follows): one row of x takes four weight rows per
pass, a quarter of the thread's band apart, sharing each load of x, where this machine streams
them faster so (cpu_jit_parallel.side_by_side measures it), else one; several rows of x take one
weight row whose widened values serve up to eight of them, each product in its own accumulator
(cpu_jit_parallel.dot_rows, which float32 weights take too).
"""
import numpy as np

from . import cpu_jit_parallel
from .cpu_jit_bits import BFLOAT16, FLOAT16, kind_of
from .cpu_jit_ir import WIDTH, checked_once
from .cpu_jit_parallel import _NO_BIAS, _NO_HALF, _launch, parts, side_by_side

KINDS = {"bfloat16": BFLOAT16, "float16": FLOAT16}


def _probe(w, mode):
    """side_by_side's measure: one row against the probe's weight as bfloat16 bits."""
    bits = w.view(np.uint16)
    cpu_jit_parallel.dot_rows(_NO_HALF, np.ones((1, bits.shape[1]), np.float32), BFLOAT16, (bits,), (_NO_BIAS,),
                              (np.empty((1, bits.shape[0]), np.float32),), (_NO_HALF,), parts(), mode)


def _computes():
    """A small product of each kind against the float64 product of the same values."""
    rng = np.random.default_rng(0)
    x = rng.random((3, 2 * WIDTH), dtype=np.float32)
    w = rng.random((6, 2 * WIDTH), dtype=np.float32).astype(np.float16)
    ok = True
    for kind, bits in ((KINDS["float16"], w.view(np.uint16)),
                       (KINDS["bfloat16"], (w.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))):
        widened = w if kind == KINDS["float16"] else (bits.astype(np.uint32) << 16).view(np.float32)
        out = np.empty((3, 6), np.float32)
        cpu_jit_parallel.dot_rows(_NO_HALF, x, kind, (bits,), (_NO_BIAS,), (out,), (_NO_HALF,), parts(), True)
        ok = ok and bool(np.allclose(out, x.astype(np.float64) @ widened.astype(np.float64).T, rtol=1e-5))
    return ok


# Whether the kernels compile and compute here (tried once on a small product of each kind).
usable = checked_once(WIDTH is not None, _computes)


def rows_half(x, w, bias, out):
    """out (m, N) = x (m, K) float32 @ w.T (+ bias, float32) for a bfloat16 or float16 weight w
    (N, K); False where these kernels cannot serve (no AVX-512/AVX2, K not a multiple of the
    vector width, non-contiguous arrays)."""
    if not serves(x.shape[1], (w,)) or not x.flags.c_contiguous:
        return False
    kind = kind_of(w.dtype)
    four = side_by_side("half rows", _probe)
    with _launch:
        cpu_jit_parallel.dot_rows(_NO_HALF, x, kind, (w.view(np.uint16),), (_NO_BIAS if bias is None else bias,),
                                  (out,), (_NO_HALF,), parts(), four)
    return True


def serves(k, weights):
    """Whether the kernels serve rows of width k against these 16-bit weights."""
    return usable() and k > 0 and not k % WIDTH and all(w.flags.c_contiguous for w in weights)


def half_linears(x16, x, weights, biases, outs, narrowed):
    """narrowed[t] = x16 @ weights[t].T (+ biases[t]) rounded to the half dtype, for a few rows
    x16 (m, K) and weights (N_t, K) of one half dtype (C-contiguous; narrowed too), in one
    launch: a half model's decoding projections, computed as a half linear computes each
    (float32 sums of the widened values, plus the float32 bias, rounded once). x (m, K) and
    outs[t] (m, N_t) are float32 scratch; biases[t] float32 (N_t,) or None. The caller checks
    `serves` first."""
    kind = kind_of(x16.dtype)
    biases = tuple(_NO_BIAS if b is None else b for b in biases)
    bits = tuple(w.view(np.uint16) for w in weights)
    four = side_by_side("half rows", _probe)
    with _launch:
        cpu_jit_parallel.dot_rows(x16.view(np.uint16), x, kind, bits, biases, tuple(outs),
                                  tuple(n.view(np.uint16) for n in narrowed), parts(), four)
    return narrowed
