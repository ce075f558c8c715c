"""Compiled matrix-vector products on numba's own thread pool (imported only with numba).

Decoding multiplies one row (or a few) by every weight matrix: the product is memory-bound
and takes tens of microseconds, too short for a hand-off to Python worker threads and
exactly where OpenBLAS's threads would be woken (and then spin, slowing what follows).
Each weight is read once for all of x's rows, and its rows (or columns) are split over
numba's threads. cpu_jit.parallel() decides whether numba's pool qualifies.
"""
import threading

import numba
import numpy as np

_ZERO = np.float32(0.0)
_launch = threading.Lock()     # one launch at a time: numba's pool serves one caller
# The kernels split their work into `parts`, numba's thread count, passed in: a kernel
# that asks numba for it cannot be cached.


@numba.njit(nogil=True, cache=True, parallel=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _rows(x, w, bias, out, parts):
    """Each thread takes a band of w's rows, four at a time: four independent dot products
    per pass over x keep four memory streams in flight and share each load of x, where one
    row at a time waits on one stream and ends every row in a horizontal sum (1.16-1.27x
    the bandwidth on one core, the gain largest on narrow rows)."""
    n, m, k = w.shape[0], x.shape[0], w.shape[1]
    for part in numba.prange(parts):
        lo, hi = n * part // parts, n * (part + 1) // parts
        i = lo
        while i + 4 <= hi:
            w0, w1, w2, w3 = w[i], w[i + 1], w[i + 2], w[i + 3]
            for r in range(m):
                xr = x[r]
                t0 = t1 = t2 = t3 = _ZERO
                for j in range(k):
                    v = xr[j]
                    t0 += w0[j] * v
                    t1 += w1[j] * v
                    t2 += w2[j] * v
                    t3 += w3[j] * v
                out[r, i], out[r, i + 1], out[r, i + 2], out[r, i + 3] = t0, t1, t2, t3
            i += 4
        while i < hi:
            row = w[i]
            for r in range(m):
                xr = x[r]
                total = _ZERO
                for j in range(k):
                    total += row[j] * xr[j]
                out[r, i] = total
            i += 1
        if bias is not None:
            for r in range(m):
                for i in range(lo, hi):
                    out[r, i] += bias[i]


@numba.njit(nogil=True, cache=True, parallel=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _columns(x, b, bias, out, parts):
    """Each thread sums x's products with its own band of b's rows (a contiguous stream of
    memory, which DRAM serves best); the bands' partial sums are added at the end."""
    k, n = b.shape
    m = x.shape[0]
    partial = np.zeros((parts, m, n), np.float32)
    for part in numba.prange(parts):
        lo, hi = k * part // parts, k * (part + 1) // parts
        for r in range(m):
            total = partial[part, r]
            t = lo
            while t + 4 <= hi:         # four rows of b per pass over the running sums
                c0, c1, c2, c3 = x[r, t], x[r, t + 1], x[r, t + 2], x[r, t + 3]
                b0, b1, b2, b3 = b[t], b[t + 1], b[t + 2], b[t + 3]
                for j in range(n):
                    total[j] += c0 * b0[j] + c1 * b1[j] + c2 * b2[j] + c3 * b3[j]
                t += 4
            while t < hi:
                c0, b0 = x[r, t], b[t]
                for j in range(n):
                    total[j] += c0 * b0[j]
                t += 1
    for r in range(m):
        for j in range(n):
            value = partial[0, r, j]
            for part in range(1, parts):
                value += partial[part, r, j]
            out[r, j] = value if bias is None else value + bias[j]


def matvec_rows(x, w, bias, out):
    """out = x @ w.T (+ bias): x (m, k), w (n, k) and out (m, n) C-contiguous float32."""
    with _launch:
        _rows(x, w, bias, out, numba.get_num_threads())


def matvec_columns(x, b, bias, out):
    """out = x @ b (+ bias): x (m, k), b (k, n) and out (m, n) C-contiguous float32."""
    with _launch:
        _columns(x, b, bias, out, numba.get_num_threads())
