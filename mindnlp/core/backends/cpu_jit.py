# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled CPU kernels built with numba (a dependency; the NumPy kernels serve where it cannot be imported).

A chain of NumPy ufuncs cannot match one compiled, vectorised loop: exact GELU as a blocked
ufunc chain still makes about twenty passes over each block, and runs an order of magnitude
slower than PyTorch's kernel. The loops here are compiled once per machine (numba caches
them beside this file) and called on chunks of the array from cpu_kernels' worker threads
(`nogil`), so numba's own thread pool is never started.

Softmax rows use a Cephes-style exp (range reduction to [-ln2/2, ln2/2], a degree-7
polynomial, the power of two built in the float's exponent bits), within 2 float32 ulp of
exp: numba's exp is a call per element, which does not vectorise. Row maxima are taken over
the floats' bit patterns mapped to ordered integers, an integer max that vectorises where a
float max with NaN semantics does not.

The normal CDF uses Abramowitz & Stegun 7.1.28, erf(z) = 1 - (1 + a1 z + ... + a6 z^6)^-16
for z >= 0 with |error| < 3e-7: no transcendental call, so the loop vectorises (numba maps
no vector exp/erf without Intel's SVML). error_model="numpy" lets a division by zero give
inf instead of raising, which is also what allows vectorising; only "contract" (fused
multiply-add) is relaxed, so inf and NaN inputs behave as in the composed op.
"""
import importlib
import math
import os
import types

import numpy as np

_F32 = np.float32
_AS_28 = tuple(_F32(c) for c in (0.0705230784, 0.0422820123, 0.0092705272, 0.0001520143, 0.0002765672, 0.0000430638))
_INV_SQRT_2 = _F32(1.0 / math.sqrt(2.0))

# Cephes expf: ln 2 split in two for an exact range reduction, and the polynomial of e^r.
_LN2_HI, _LN2_LO = _F32(0.693359375), _F32(-2.12194440e-4)
_EXP_POLY = tuple(_F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                                    1.6666665459e-1, 5.0000001201e-1))
# Below this exp(x) is under float32's smallest normal number: taken as 0.
_EXP_UNDERFLOW = _F32(-87.33654)


def _erfcx_polynomial(degree=10):
    """Coefficients (constant first) of P with erfc(z) exp(z^2) ~ t P(t), t = 1 / (1 + z / 2),
    for z >= 0 (t in (0, 1]): a least-squares fit of the relative error at Chebyshev nodes
    to SciPy's erfcx, 7e-9 relative in float64, 3e-7 evaluated in float32."""
    import scipy.special

    nodes = 4000
    t = 0.5 * (1.0 - np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes))
    t = t[t > 0.02]
    target = scipy.special.erfcx(2.0 / t - 2.0) / t
    powers = np.vander(t, degree + 1, increasing=True)
    coefficients = np.linalg.lstsq(powers / target[:, None], np.ones_like(target), rcond=None)[0]
    return tuple(_F32(c) for c in coefficients)

_compiled = None
_parallel = None
_GOMP_SPINCOUNT = "10000"
# Set in a forked child: GNU OpenMP, numba's usual thread pool, cannot be used after fork.
_forked = False

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: globals().update(_forked=True))


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


def parallel():
    """The compiled kernels that run on numba's own thread pool, or None.

    They serve matrix-vector products (decoding), which are too short for a hand-off to
    Python worker threads. Only a pool that wakes fast and accepts calls from several
    threads qualifies (OpenMP or TBB); numba's fallback "workqueue" does not, and GNU
    OpenMP does not survive fork, so forked children (DataLoader workers) use NumPy.
    """
    global _parallel
    if _forked:
        return None
    if _parallel is None:
        _parallel = False
        if load() is not None:
            # GNU OpenMP's idle threads spin for milliseconds by default, slowing the worker
            # kernels that follow a matrix-vector product; a short spin still bridges the
            # gaps between a decoding step's products. Read when libgomp loads, so it only
            # applies if nothing loaded it yet (torch brings its own libgomp, which numba
            # then shares), and never over the user's own setting.
            _spin_is_short[:] = ["GOMP_SPINCOUNT" in os.environ or not _libgomp_loaded()]
            os.environ.setdefault("GOMP_SPINCOUNT", _GOMP_SPINCOUNT)
            import numba

            from . import cpu_jit_parallel as kernels

            kernels.matvec_rows(np.zeros((1, 1), _F32), np.zeros((1, 1), _F32), None, np.zeros((1, 1), _F32))
            if numba.threading_layer() in ("omp", "tbb"):
                _parallel = kernels
    return _parallel or None


_spin_is_short = [False]


def _libgomp_loaded():
    """Whether a GNU OpenMP runtime that numba's would be is already mapped into this process:
    one named libgomp.so.* (torch's copy is; the copies other wheels vendor under a name of
    their own, scikit-learn's libgomp-<hash>.so, are separate runtimes). Linux; elsewhere
    taken as not."""
    try:
        with open("/proc/self/maps") as maps:
            return any(os.path.basename(line.split()[-1]).startswith("libgomp.so") for line in maps if "libgomp" in line)
    except OSError:
        return False


def _usable_on_pool(name, *kind):
    """The LLVM-IR kernel module `name`, or None without numba's pool or where its one-time
    check (for `kind`, where the module serves several) fails (a CPU without the instructions
    it needs). Found out once per process: products and attention ask at every call."""
    if parallel() is None:
        return None
    key = (name,) + kind
    if key not in _pool_modules:
        module = importlib.import_module(f"{__package__}.{name}")
        _pool_modules[key] = module if module.usable(*kind) else None
    return _pool_modules[key]


_pool_modules = {}


def half():
    """The matrix-vector kernels of bfloat16/float16 weights widened in registers (cpu_jit_half)."""
    return _usable_on_pool("cpu_jit_half")


def gemm(dtype):
    """The matrix products on the weight as stored (cpu_jit_gemm) for operands of `dtype`
    ("float32", or "bfloat16" on the CPU's bfloat16 dot instruction), or None where they do
    not run here."""
    return _usable_on_pool("cpu_jit_gemm", dtype)


def short_attention():
    """Attention of short sequences in one call on the product tiles (cpu_jit_attention), or
    None where they do not run here."""
    return _usable_on_pool("cpu_jit_attention")


def cache_attention():
    """A decoding step's attention against a cache in vector code (cpu_jit_cache_attention),
    or None where it does not run here."""
    return _usable_on_pool("cpu_jit_cache_attention")


def blas():
    """Matrix products split by rows over numba's pool, BLAS called on each band (cpu_jit_blas);
    None also where that pool's idle threads spin long (a libgomp loaded before ours, by
    torch): the Python workers that run the kernels in between would then wait for a core
    (a MiniLM-shaped training step 258 -> 275 ms)."""
    if parallel() is None or not _spin_is_short[0]:
        return None
    return _usable_on_pool("cpu_jit_blas")


def quantized():
    """The compiled kernels of quantized weights (cpu_jit_quant), or None when numba is not installed.

    Their matrix-vector products run on numba's pool: callers use them only where
    `parallel()` is not None and dequantize bands (single-threaded kernels) otherwise.
    """
    global _quantized
    if load() is None:
        return None
    if _quantized is None:        # imported once: every quantized product of a decoding step asks
        from . import cpu_jit_quant

        _quantized = cpu_jit_quant
    return _quantized


_quantized = None


def chains():
    """The generated loops of chained elementwise arithmetic (cpu_jit_chains), or None when
    numba is not installed."""
    if load() is None:
        return None
    from . import cpu_jit_chains

    return cpu_jit_chains


def half_bits():
    """Loops over bfloat16/float16 arrays read as their bits (cpu_jit_bits), or None when numba
    is not installed."""
    if load() is None:
        return None
    from . import cpu_jit_bits

    return cpu_jit_bits


def random_masks():
    """Dropout's keep masks drawn by compiled code (cpu_jit_random), or None when numba is not
    installed."""
    if load() is None:
        return None
    from . import cpu_jit_random

    return cpu_jit_random


def _compile(numba):
    a1, a2, a3, a4, a5, a6 = _AS_28
    inv_sqrt_2 = _INV_SQRT_2
    one, half = _F32(1.0), _F32(0.5)

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

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
    def layer_norm(x, weight, bias, eps, centered, out, mean, rstd):
        """Rows of x normalised (centered: layer norm, else RMS norm), * weight + bias.

        The row sums are reassociated (summed in vector lanes), like NumPy's pairwise sums.
        Everything is float32, as torch's float32 kernel computes: dividing by the integer
        width would make the mean and the scale float64, and with them every subtraction
        and the output's products (half as many lanes, and conversions: 3x slower).
        """
        width = x.shape[1]
        count = _F32(width)
        for r in range(x.shape[0]):
            row = x[r]
            m = _F32(0.0)
            if centered:
                total = _F32(0.0)
                for j in range(width):
                    total += row[j]
                m = total / count
            squares = _F32(0.0)
            for j in range(width):
                d = row[j] - m
                squares += d * d
            scale = one / math.sqrt(squares / count + eps)
            mean[r] = m
            rstd[r] = scale
            for j in range(width):
                out[r, j] = (row[j] - m) * scale * weight[j] + bias[j]

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
    def layer_norm_backward(grad, x, weight, mean, rstd, centered, gx, gw, gb):
        """Rows of layer norm's (centered) or RMS norm's backward in one pass each: gx written,
        and g * xhat and g summed over the rows into gw and gb (float64, so that a long
        batch's sums do not lose float32 digits). xhat = (x - mean) rstd is recomputed from
        forward's statistics; with gh = g weight, gx = (gh - xhat mean(gh xhat) - mean(gh)) rstd
        (no mean(gh) term for RMS norm). The row's means are float32, as in the forward."""
        width = x.shape[1]
        count = _F32(width)
        for r in range(x.shape[0]):
            g, row, scale = grad[r], x[r], rstd[r]
            m = mean[r] if centered else _F32(0.0)
            dot = _F32(0.0)
            total = _F32(0.0)
            for j in range(width):
                xhat = (row[j] - m) * scale
                gh = g[j] * weight[j]
                dot += gh * xhat
                total += gh
                gw[j] += np.float64(g[j] * xhat)
                gb[j] += np.float64(g[j])
            dot = dot / count
            shift = total / count if centered else _F32(0.0)
            out = gx[r]
            for j in range(width):
                out[j] = (g[j] * weight[j] - (row[j] - m) * scale * dot - shift) * scale

    p0, p1, p2, p3, p4, p5 = _EXP_POLY
    ln2_hi, ln2_lo, log2e, underflow = _LN2_HI, _LN2_LO, _F32(1.0 / math.log(2.0)), _EXP_UNDERFLOW
    zero, neg_inf = _F32(0.0), _F32(-np.inf)
    sign_free = np.int32(0x7FFFFFFF)
    half_inv_sqrt_2 = _F32(0.5 / math.sqrt(2.0))

    c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10 = _erfcx_polynomial()
    inv_sqrt_2pi = _F32(1.0 / math.sqrt(2.0 * math.pi))
    exp_block = 2048

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
    def gelu_backward(grad, x, out):
        """out = grad (Phi(x) + x phi(x)) over flat float32 arrays, both from e = exp(-x^2 / 2):
        phi(x) = e / sqrt(2 pi), and Phi(-|x|) = erfc(z) / 2 = e erfcx(z) / 2 with z = |x| /
        sqrt(2) and erfcx from its fitted polynomial (_erfcx_polynomial), so the tail keeps
        float32's relative precision. e is taken a block at a time as masked_softmax takes its
        exponentials (a call to exp would stop the loop from vectorising); below float32's
        smallest normal it is 0, so x = +-inf gives NaN, as torch."""
        powers = np.empty(exp_block, np.int32)
        scales = powers.view(np.float32)
        gauss = np.empty(exp_block, np.float32)
        for start in range(0, x.shape[0], exp_block):
            # Slices, not x[start + j]: a computed index gets a wraparound check that stops
            # the loop from vectorising.
            xs, gs, outs = x[start:start + exp_block], grad[start:start + exp_block], out[start:start + exp_block]
            for j in range(xs.shape[0]):
                v = xs[j]
                a = -half * v * v
                clamped = max(a, underflow)
                k = np.floor(clamped * log2e + half)
                r = clamped - k * ln2_hi - k * ln2_lo
                p = ((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5
                gauss[j] = zero if a < underflow else p * r * r + r + one
                powers[j] = (np.int32(k) + 127) << 23
            for j in range(xs.shape[0]):
                v = xs[j]
                e = gauss[j] * scales[j]
                t = one / (one + abs(v) * half_inv_sqrt_2)
                poly = c10 * t + c9
                poly = ((((poly * t + c8) * t + c7) * t + c6) * t + c5) * t + c4
                poly = (((poly * t + c3) * t + c2) * t + c1) * t + c0
                tail = half * e * t * poly
                cdf = one - tail if v >= 0 else tail
                outs[j] = gs[j] * (cdf + v * e * inv_sqrt_2pi)

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
    def masked_softmax(scores, mask, scale, dead_value=zero):
        """softmax(scores * scale + mask) over the last axis, in place; a row with no finite
        value gives `dead_value` everywhere (attention: 0; softmax: NaN, as torch). scores
        (n, rows, width) and mask (m, 1 or rows, >= width) are C-contiguous float32, where m
        divides n: scores[h] takes mask[h // (n // m)]. mask may be None."""
        n, rows, width = scores.shape
        per_mask = 1
        if mask is not None:
            per_mask = n // mask.shape[0]
        powers = np.empty(width, np.int32)
        scales = powers.view(np.float32)
        top_bits = np.empty(1, np.int32)
        top_value = top_bits.view(np.float32)
        for h in range(n):
            for i in range(rows):
                row = scores[h, i]
                if mask is None:
                    for j in range(width):
                        row[j] = row[j] * scale
                else:
                    m = mask[h // per_mask, i if mask.shape[1] > 1 else 0]
                    for j in range(width):
                        row[j] = row[j] * scale + m[j]
                # The row max over the floats' bit patterns mapped to ordered integers (an
                # integer max vectorises; NaN when a positive-signed NaN is present). Written
                # out here: calling another compiled function would stop this one from caching.
                bits = row.view(np.int32)
                best = np.int32(-2147483648)
                for j in range(width):
                    b = bits[j]
                    best = max(best, b ^ ((b >> 31) & sign_free))
                top_bits[0] = best ^ ((best >> 31) & sign_free)
                top = top_value[0]
                if top == neg_inf:
                    row[:] = dead_value
                    continue
                for j in range(width):
                    x = row[j] - top
                    t = np.floor(x * log2e + half)
                    r = x - t * ln2_hi - t * ln2_lo
                    p = ((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5
                    row[j] = zero if x < underflow else p * r * r + r + one
                    powers[j] = (np.int32(max(t, _F32(-126.0))) + 127) << 23
                total = zero
                for j in range(width):
                    e = row[j] * scales[j]
                    row[j] = e
                    total += e
                inverse = one / total
                for j in range(width):
                    row[j] *= inverse

    exp_high, sqrt_2_over_pi, tanh_coef = _F32(88.0), _F32(math.sqrt(2.0 / math.pi)), _F32(0.044715)
    inf = _F32(np.inf)
    block = 2048

    def gated_activation(tanh_gelu):
        """A loop computing out = act(x) * up (just act(x) when up is None) over flat float32
        arrays; act is fixed when compiled, so that the loop body has no branch.

        act is SiLU, x / (1 + exp(-x)), or tanh-GELU, 0.5 x (1 + tanh(z)) written as
        x / (1 + exp(-2z)) with z = sqrt(2/pi) (x + 0.044715 x^3). Exponentials are taken
        a block at a time (arguments clamped to [-87.3, 88], where float32's exp is finite
        and normal), the powers of two assembled in a scratch block. Where exp overflows,
        GELU follows its composed op (x = -inf gives NaN) and SiLU its composed op's clip
        (silu(-inf) = -inf).
        """
        two_c = sqrt_2_over_pi + sqrt_2_over_pi

        @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
        def loop(x, up, out):
            powers = np.empty(block, np.int32)
            scales = powers.view(np.float32)
            e = np.empty(block, np.float32)
            for start in range(0, x.shape[0], block):
                # Slices, not x[start + j]: a computed index gets a wraparound check that
                # stops the loop from vectorising.
                xs, outs = x[start:start + block], out[start:start + block]
                for j in range(xs.shape[0]):
                    v = xs[j]
                    if tanh_gelu:
                        a = -two_c * (v + tanh_coef * v * v * v)
                        big = a > exp_high
                    else:
                        a = -v
                        big = False
                    a = underflow if a < underflow else a
                    a = exp_high if a > exp_high else a
                    t = np.floor(a * log2e + half)
                    r = a - t * ln2_hi - t * ln2_lo
                    p = ((((p0 * r + p1) * r + p2) * r + p3) * r + p4) * r + p5
                    e[j] = inf if big else p * r * r + r + one
                    powers[j] = (np.int32(t) + 127) << 23
                if up is None:
                    for j in range(xs.shape[0]):
                        outs[j] = xs[j] / (one + e[j] * scales[j])
                else:
                    ups = up[start:start + block]
                    for j in range(xs.shape[0]):
                        outs[j] = xs[j] / (one + e[j] * scales[j]) * ups[j]

        return loop

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"})
    def rotary(x, cos, sin, out):
        """out = x cos + rotate_half(x) sin, rotate_half(x) = (-x2, x1) over the halves of the
        last dim. x, out (B, L, H, D) and cos, sin (B or 1, L, D), all C-contiguous."""
        half = x.shape[3] // 2
        for b in range(x.shape[0]):
            for i in range(x.shape[1]):
                c, s = cos[b if cos.shape[0] > 1 else 0, i], sin[b if sin.shape[0] > 1 else 0, i]
                c1, c2, s1, s2 = c[:half], c[half:], s[:half], s[half:]
                for h in range(x.shape[2]):
                    row, res = x[b, i, h], out[b, i, h]
                    x1, x2, r1, r2 = row[:half], row[half:], res[:half], res[half:]
                    for j in range(half):
                        r1[j] = x1[j] * c1[j] - x2[j] * s1[j]
                        r2[j] = x2[j] * c2[j] + x1[j] * s2[j]

    @numba.njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc"})
    def softmax_backward(grad, probs, out):
        """out = probs (grad - sum(grad probs)) row by row: softmax's vector-Jacobian product.
        grad, probs and out are C-contiguous float32 (rows, width)."""
        for r in range(grad.shape[0]):
            g, p, o = grad[r], probs[r], out[r]
            total = zero
            for j in range(g.shape[0]):
                total += g[j] * p[j]
            for j in range(g.shape[0]):
                o[j] = p[j] * (g[j] - total)

    @numba.njit(nogil=True, cache=True, error_model="numpy")
    def add_rows(out, index, values):
        """out[index[i]] += values[i] for every i, duplicates accumulating in order (np.add.at
        on the first axis, an embedding's gradient); indices must be in range."""
        for i in range(index.shape[0]):
            row, source = out[index[i]], values[i]
            for j in range(source.shape[0]):
                row[j] += source[j]

    @numba.njit(nogil=True, cache=True, error_model="numpy")
    def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, amsgrad, maximize, decay, coupled_decay,
                  lerp_weight, lerp_complement, beta2, one_minus_beta2, neg_step_size, bias_correction2_sqrt, eps):
        """One Adam/AdamW update of flat float32 arrays in place, in a single pass. The float32
        scalars are the ones torch's (and optim.adam's NumPy) path multiplies by, and each
        element sees the same operations in the same order, unfused, so the results are
        bitwise those of the multi-pass update: decoupled decay (param * decay) or coupled
        decay (grad + coupled_decay * param); lerp of the first moment with torch's two
        branches; second moment * beta2 + (1 - beta2) g g; param += -step_size m / (sqrt(v) /
        bias_correction2_sqrt + eps), v replaced by its running maximum under amsgrad."""
        small = abs(lerp_weight) < 0.5
        for i in range(param.shape[0]):
            p = param[i]
            g = -grad[i] if maximize else grad[i]
            p = p * decay
            g = g + coupled_decay * p if coupled_decay != 0 else g
            m = exp_avg[i]
            if small:
                m = m + (g - m) * lerp_weight
            else:
                m = g - (g - m) * lerp_complement
            v = exp_avg_sq[i] * beta2
            v = v + one_minus_beta2 * g * g
            exp_avg[i] = m
            exp_avg_sq[i] = v
            if amsgrad:
                v = max(max_exp_avg_sq[i], v)
                max_exp_avg_sq[i] = v
            denom = math.sqrt(v) / bias_correction2_sqrt + eps
            param[i] = p + neg_step_size * m / denom

    return types.SimpleNamespace(gelu=gelu, gelu_backward=gelu_backward, layer_norm=layer_norm,
                                 layer_norm_backward=layer_norm_backward, rotary=rotary,
                                 add_rows=add_rows, adam_step=adam_step,
                                 softmax_backward=softmax_backward,
                                 masked_softmax=masked_softmax, gated_silu=gated_activation(False),
                                 gated_gelu_tanh=gated_activation(True))
