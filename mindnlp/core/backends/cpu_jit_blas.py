# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Matrix products split over numba's thread pool, each thread calling BLAS on its band of
rows (imported only with numba).

A product of a few hundred rows (a training step's, a prompt's) is split by rows over the
cores, each band multiplied by BLAS on one thread. Handed to Python worker threads, each
split costs tens of microseconds to over a hundred on a virtual machine: the worker wakes,
takes the GIL, and the caller waits to be woken in turn (a MiniLM-shaped training step made
about 100 such splits and lost 13 ms to them). numba's pool launches in a few microseconds
and never takes the GIL. Its threads call the `sgemm`/`dgemm` that SciPy exports to
compiled code (scipy.linalg.cython_blas), by address, with the strides of any operand BLAS
can read (rows or columns contiguous: a weight's transpose, a gradient's transpose), so no
band is copied.
"""
import ctypes

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import checked_once
from .cpu_jit_parallel import _launch, add_bias, parts

_N, _T = ord("N"), ord("T")


def _export_address(name):
    """The address of SciPy's BLAS routine `name` (Fortran calling convention: every
    argument by pointer)."""
    from scipy.linalg import cython_blas

    capsule = cython_blas.__pyx_capi__[name]
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


_GEMM = {np.dtype(np.float32): _export_address("sgemm"), np.dtype(np.float64): _export_address("dgemm")}


@intrinsic
def _call_gemm(typingctx, address, codes, dims, scalars, a, b, c):
    """gemm(codes[0], codes[1], dims[0], dims[1], dims[2], scalars[0], a, dims[3], b, dims[4],
    scalars[1], c, dims[5]) through the routine at `address`; a, b, c are addresses."""
    signature = types.void(address, codes, dims, scalars, a, b, c)

    def codegen(context, builder, sig, args):
        byte_ptr = ir.IntType(8).as_pointer()
        codes_arr, dims_arr, scalars_arr = (context.make_array(sig.args[k])(context, builder, args[k])
                                            for k in (1, 2, 3))

        def element(array, index):
            return builder.bitcast(builder.gep(array.data, [ir.Constant(ir.IntType(64), index)]), byte_ptr)

        def pointer(value):
            return builder.inttoptr(value, byte_ptr)

        gemm_type = ir.FunctionType(ir.VoidType(), [byte_ptr] * 13)
        gemm = builder.inttoptr(args[0], gemm_type.as_pointer())
        builder.call(gemm, [element(codes_arr, 0), element(codes_arr, 1), element(dims_arr, 0), element(dims_arr, 1),
                            element(dims_arr, 2), element(scalars_arr, 0), pointer(args[4]), element(dims_arr, 3),
                            pointer(args[5]), element(dims_arr, 4), element(scalars_arr, 1), pointer(args[6]),
                            element(dims_arr, 5)])
        return context.get_dummy_value()
    return signature, codegen


@numba.njit(nogil=True, cache=True)
def _operand(strides, rows, cols, item):
    """(BLAS op code, leading dimension) of a row-major (rows, cols) operand read as the
    transpose of a column-major one, from its byte strides: rows contiguous read as they are
    ('N'), columns contiguous transposed ('T')."""
    if strides[1] == item or cols == 1:
        return _N, max(strides[0] // item, cols, 1)
    return _T, max(strides[1] // item, rows, 1)


@numba.njit(nogil=True, cache=True)
def _band(address, a, b, out, lo, hi):
    """out[lo:hi] = a[lo:hi] @ b with BLAS: the row-major product computed as its transpose,
    out^T = b^T a^T in BLAS's column-major terms."""
    k, n = b.shape
    item = a.itemsize
    a_code, lda = _operand(a.strides, a.shape[0], k, item)
    b_code, ldb = _operand(b.strides, k, n, item)
    codes = np.empty(2, np.uint8)
    codes[0], codes[1] = b_code, a_code
    dims = np.empty(6, np.int32)
    dims[0], dims[1], dims[2], dims[3], dims[4], dims[5] = n, hi - lo, k, ldb, lda, n
    scalars = np.empty(2, a.dtype)
    scalars[0], scalars[1] = 1.0, 0.0
    _call_gemm(address, codes, dims, scalars, b.ctypes.data, a.ctypes.data + lo * a.strides[0],
               out.ctypes.data + lo * out.strides[0])


@numba.njit(nogil=True, cache=True)
def _part(address, a, b, out, part, parts):
    """Band `part` of `parts` equal bands of out = a @ b's rows; its (lo, hi)."""
    m = out.shape[0]
    lo, hi = m * part // parts, m * (part + 1) // parts
    if hi > lo:
        _band(address, a, b, out, lo, hi)
    return lo, hi


@numba.njit(nogil=True, cache=True, parallel=True)
def _row_bands(address, a, b, bias, out, parts):
    """out = a @ b (+ bias, where not empty), each thread taking one band of rows."""
    for part in numba.prange(parts):
        lo, hi = _part(address, a, b, out, part, parts)
        if bias.shape[0] > 0:
            add_bias(out[lo:hi], bias, 0, out.shape[1])


@numba.njit(nogil=True, cache=True, parallel=True)
def _two_products(address, a1, b1, out1, a2, b2, out2, parts):
    """out1 = a1 @ b1 and out2 = a2 @ b2 side by side, half of the threads on each, every
    thread multiplying one band of its product's rows."""
    half = max(parts // 2, 1)
    for task in numba.prange(2 * half):
        if task < half:
            _part(address, a1, b1, out1, task, half)
        else:
            _part(address, a2, b2, out2, task - half, half)


@numba.njit(nogil=True, cache=True)
def _product(address, a, b, out):
    """out = a @ b (all of a's rows) with BLAS."""
    _band(address, a, b, out, 0, a.shape[0])


_HEADS = types.Array(types.float32, 4, "A")
_OUT = types.Array(types.float32, 4, "C")


@numba.njit([types.void(types.intp, _HEADS, _HEADS, _HEADS, _HEADS, _HEADS, _HEADS, keep, types.float32, types.intp,
                        _OUT, _OUT, _OUT) for keep in (types.none, _HEADS)],
            nogil=True, cache=True, parallel=True)
def _attention_grads(address, g, q, k, v, probs, out, keep, scale, groups, gq, gk, gv):
    """Attention's gradients head by head, each thread taking whole heads: gv = w^T g with
    w = probs (* keep), d = (g v^T (* keep) - rowsum(g * out)) * probs * scale, gq = d k and
    gk = d^T q. gk and gv are per query head (the caller sums a key/value head's group)."""
    batch, heads, length, width = probs.shape
    value_width = g.shape[3]
    for item in numba.prange(batch * heads):
        b, h = item // heads, item % heads
        kv = h // groups
        p, grad = probs[b, h], g[b, h]
        if keep is None:
            _product(address, p.T, grad, gv[b, h])
        else:
            _product(address, (p * keep[b, h]).T, grad, gv[b, h])
        d = np.empty((length, width), p.dtype)
        _product(address, grad, v[b, kv].T, d)
        if keep is not None:
            d *= keep[b, h]
        output = out[b, h]
        for i in range(length):
            total = np.float32(0.0)
            for j in range(value_width):
                total += grad[i, j] * output[i, j]
            for j in range(width):
                d[i, j] = (d[i, j] - total) * p[i, j] * scale
        _product(address, d, k[b, kv], gq[b, h])
        _product(address, d.T, q[b, h], gk[b, h])


def attention_grads(g, q, k, v, probs, out, keep, scale, groups):
    """(gq, gk, gv) of attention (see _attention_grads) for float32 (batch, heads, rows, dim)
    arrays whose matrices BLAS reads in place (the heads of a transposed projection are), k
    and v with heads / groups heads, keep None or probs' shape; BLAS must be held to one
    thread by the caller. gk and gv come per query head (the caller sums each key/value
    head's group). None where the arrays are not so."""
    arrays = (g, q, k, v, probs, out) + (() if keep is None else (keep,))
    if not all(a.dtype == np.float32 and a.ndim == 4 and a.size and _blas_layout(a[0, 0]) for a in arrays):
        return None
    batch, heads, length, width = probs.shape
    if (q.shape[:3] != (batch, heads, length) or k.shape[:3] != (batch, heads // groups, width)
            or v.shape[:3] != k.shape[:3] or g.shape != out.shape or g.shape[:3] != q.shape[:3]
            or g.shape[3] != v.shape[3] or k.shape[3] != q.shape[3] or (keep is not None and keep.shape != probs.shape)):
        return None
    gq = np.empty(q.shape, np.float32)
    gk = np.empty((batch, heads, width, k.shape[3]), np.float32)
    gv = np.empty((batch, heads, width, v.shape[3]), np.float32)
    with _launch:
        _attention_grads(_GEMM[np.dtype(np.float32)], g, q, k, v, probs, out, keep, np.float32(scale), int(groups),
                         gq, gk, gv)
    return gq, gk, gv


def _blas_layout(x):
    """Whether BLAS reads the 2-D array x in place: one of its strides is the item size and
    the other no smaller than that dim's extent (rows or columns that do not overlap)."""
    item = x.itemsize
    s0, s1 = x.strides
    rows, cols = x.shape
    return (s1 == item and (rows <= 1 or s0 >= cols * item)) or (s0 == item and (cols <= 1 or s1 >= rows * item))


def _probe():
    """Small products of every layout against NumPy's."""
    rng = np.random.default_rng(0)
    a, b = rng.random((5, 3), dtype=np.float32), rng.random((3, 4), dtype=np.float32)
    for x in (a, np.asfortranarray(a)):
        for y in (b, np.asfortranarray(b)):
            out = np.empty((5, 4), np.float32)
            _row_bands(_GEMM[x.dtype], x, y, np.zeros(0, np.float32), out, 2)
            if not np.allclose(out, a @ b, rtol=1e-5, atol=1e-6):
                return False
    return True


# Whether BLAS is reachable and computes here (checked on first use).
usable = checked_once(True, _probe)


def _operands_fit(a, b, out):
    """Whether gemm_rows' conditions on (a, b, out) hold."""
    return (a.dtype in _GEMM and a.dtype == b.dtype == out.dtype and out.flags.c_contiguous
            and max(a.shape + b.shape) < 2 ** 31 and _blas_layout(a) and _blas_layout(b))


def gemm_rows(a, b, bias, out):
    """out = a @ b (+ bias) split by rows over numba's threads: a (m, k) and b (k, n) float32
    or float64 with rows or columns contiguous, out (m, n) C-contiguous of their dtype, bias
    (n,) or None. BLAS must be held to one thread by the caller. False where these do not
    hold (then nothing is written)."""
    if not _operands_fit(a, b, out):
        return False
    bias = np.zeros(0, a.dtype) if bias is None else np.ascontiguousarray(bias, dtype=a.dtype).reshape(-1)
    with _launch:
        _row_bands(_GEMM[a.dtype], a, b, bias, out, parts())
    return True


def gemm_pair(a1, b1, out1, a2, b2, out2):
    """out1 = a1 @ b1 and out2 = a2 @ b2 at once, each on half of numba's threads (a linear
    layer's input and weight gradients: two products of equal work, each thread's band
    packing less of the other operand than a split of one product would); operands as
    gemm_rows takes them, of one dtype. False (nothing written) where they do not fit or
    there are fewer than two threads."""
    if parts() < 2 or a1.dtype != a2.dtype or not (_operands_fit(a1, b1, out1) and _operands_fit(a2, b2, out2)):
        return False
    with _launch:
        _two_products(_GEMM[a1.dtype], a1, b1, out1, a2, b2, out2, parts())
    return True
