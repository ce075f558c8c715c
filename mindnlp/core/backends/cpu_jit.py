"""Compiled CPU kernels built with numba (a dependency; the NumPy kernels serve where it cannot be imported).

A chain of NumPy ufuncs cannot match one compiled, vectorised loop: exact GELU as a blocked
ufunc chain still makes about twenty passes over each block, and runs an order of magnitude
slower than PyTorch's kernel. The loops here are compiled once per machine (numba caches
them beside this file) and called on chunks of the array from cpu_kernels' worker threads
(`nogil`), so numba's own thread pool is never started.

The normal CDF uses Abramowitz & Stegun 7.1.28, erf(z) = 1 - (1 + a1 z + ... + a6 z^6)^-16
for z >= 0 with |error| < 3e-7: no transcendental call, so the loop vectorises (numba maps
no vector exp/erf without Intel's SVML). error_model="numpy" lets a division by zero give
inf instead of raising, which is also what allows vectorising; only "contract" (fused
multiply-add) is relaxed, so inf and NaN inputs behave as in the composed op.
"""
import math
import types

import numpy as np

_F32 = np.float32
_AS_28 = tuple(_F32(c) for c in (0.0705230784, 0.0422820123, 0.0092705272, 0.0001520143, 0.0002765672, 0.0000430638))
_INV_SQRT_2 = _F32(1.0 / math.sqrt(2.0))

_compiled = None


def load():
    """The compiled kernels as a namespace, or None when numba is not installed."""
    global _compiled
    if _compiled is None:
        try:
            import numba
        except ImportError:
            _compiled = False
        else:
            _compiled = _compile(numba)
    return _compiled or None


def _compile(numba):
    a1, a2, a3, a4, a5, a6 = _AS_28
    inv_sqrt_2 = _INV_SQRT_2
    one, half = _F32(1.0), _F32(0.5)
    b1, b2, b3, b4, b5, b6 = (float(c) for c in _AS_28)
    inv_sqrt_2_64 = 1.0 / math.sqrt(2.0)
    inv_sqrt_2pi = 1.0 / math.sqrt(2.0 * math.pi)

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
    def gelu(x, out):
        """out = x Phi(x) over flat float32 arrays."""
        for i in range(x.size):
            v = x[i]
            z = abs(v) * inv_sqrt_2
            p = one + z * (a1 + z * (a2 + z * (a3 + z * (a4 + z * (a5 + z * a6)))))
            p = p * p
            p = p * p
            p = p * p
            p = p * p
            tail = half / p                    # (1 - erf(|x| / sqrt(2))) / 2 = Phi(-|x|)
            out[i] = v * (one - tail if v >= 0 else tail)

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
    def gelu_backward(grad, x, out):
        """out = grad (Phi(x) + x phi(x)), computed in float64.

        phi needs exp(-x^2 / 2), and a call to exp would stop vectorisation: it is
        exp(-w)^512 with w = x^2 / 1024 <= 80 / 512, a degree-7 Taylor polynomial (error
        below 1e-11 before the squarings) squared nine times. Beyond x^2 / 2 = 80, x phi(x)
        is taken as 0 (below 1e-33).
        """
        for i in range(x.size):
            v = np.float64(x[i])
            z = abs(v) * inv_sqrt_2_64
            p = 1.0 + z * (b1 + z * (b2 + z * (b3 + z * (b4 + z * (b5 + z * b6)))))
            p = p * p
            p = p * p
            p = p * p
            p = p * p
            tail = 0.5 / p
            cdf = 1.0 - tail if v >= 0 else tail
            w = v * v / 1024.0
            e = 1.0 - w * (1.0 - w / 2 * (1.0 - w / 3 * (1.0 - w / 4 * (1.0 - w / 5 * (1.0 - w / 6 * (1.0 - w / 7))))))
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e if w < 80.0 / 512.0 else 0.0
            out[i] = grad[i] * (cdf + v * e * inv_sqrt_2pi)

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
    def layer_norm(x, weight, bias, eps, centered, out, mean, rstd):
        """Rows of x normalised (centered: layer norm, else RMS norm), * weight + bias.

        The row sums are reassociated (summed in vector lanes), like NumPy's pairwise sums.
        """
        width = x.shape[1]
        for r in range(x.shape[0]):
            row = x[r]
            m = _F32(0.0)
            if centered:
                total = _F32(0.0)
                for j in range(width):
                    total += row[j]
                m = total / width
            squares = _F32(0.0)
            for j in range(width):
                d = row[j] - m
                squares += d * d
            scale = one / math.sqrt(squares / width + eps)
            mean[r] = m
            rstd[r] = scale
            for j in range(width):
                out[r, j] = (row[j] - m) * scale * weight[j] + bias[j]

    return types.SimpleNamespace(gelu=gelu, gelu_backward=gelu_backward, layer_norm=layer_norm)
