# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Fused float32 kernels of the CPU backend, for the ops that dominate transformer models.

NumPy runs each ufunc on one core and makes one full pass over memory per operation, so a
chain like GELU's reads and writes its whole input a dozen times. The kernels here
(1) cut the arrays into blocks that stay in the L2 cache, so the chain touches main memory
about once, and (2) spread the blocks over a small persistent thread pool, one thread per
core this process may run on: NumPy's ufuncs and BLAS calls release the GIL. Where numba
is installed, GELU (and its backward) and layer_norm run compiled loops from cpu_jit on
the same threads instead (a ufunc chain, even blocked, stays several times slower than a
compiled loop).

Threads (cpu_threads): one worker per core; set_num_threads changes it. Matrix products,
stacks of them and attention's per-head products are split over the workers with BLAS
held to one thread: OpenBLAS's own threads, which spin long after each call, are never
woken. Matrix-vector products run on numba's pool (cpu_jit_parallel).

Every kernel has a composed reference in the op that calls it (activation.py, softmax.py,
attention.py, normalization.py, ops/linalg.py); tests compare the two. Kernels take float32
arrays of any layout and return fresh C-contiguous arrays; callers route other dtypes and
small arrays to the reference (NumpyBackend.fused).
"""
import math

import ml_dtypes
import numpy as np

from . import cpu_jit
from .cpu_threads import blas_threads, workers

# float32 elements per block: 128 KiB, so the input block and the two or three temporaries
# of a kernel stay in L2 together.
BLOCK = 1 << 15
# Below this many elements (of the op's input, or of its work where MIN_WORK names it) a
# kernel is not worth its extra calls: callers use the composed reference.
MIN_SIZE = 1 << 14
MIN_WORK = {
    "attention": 1 << 14,       # score elements: smaller attention is faster composed
    "matmul": 1 << 13,          # multiply-adds: below this OpenBLAS runs products on one thread
    "layer_norm_backward": math.inf,    # compiled only: composed ops without numba
    "attention_backward": 1 << 14,      # score elements, as attention
}
# Kernels that are compiled loops when numba is present: one call beats the composed ops
# at any size (small inputs run inline on the calling thread), e.g. a decoding step's norms.
COMPILED_AT_ANY_SIZE = ("quantized_matmul", "half_matmul", "small_attention", "layer_norm", "layer_norm_backward",
                        "gelu", "gelu_tanh",
                        "silu", "gated_silu", "gated_gelu_tanh", "rotary", "binary_half", "silu_half",
                        "gelu_tanh_half", "gated_silu_half", "gated_gelu_tanh_half")


def min_work(name):
    """The least work (see MIN_SIZE) for which the kernel `name` is used."""
    if name in COMPILED_AT_ANY_SIZE and cpu_jit.load() is not None:
        return 1
    return MIN_WORK.get(name, MIN_SIZE)
# Blocks each thread must get before a kernel splits its work: a hand-off to a worker costs
# tens of microseconds, as much as a few blocks of work.
_BLOCKS_PER_THREAD = 8

_F32 = np.float32
_BF16 = ml_dtypes.bfloat16
_F32_DTYPE = np.dtype(np.float32)
_F16_DTYPE, _BF16_DTYPE = np.dtype(np.float16), np.dtype(_BF16)


def _float32_rows(a):
    """a as a C-contiguous float32 array (a copy only where needed); a half array through the
    compiled widening, NumPy's float16 cast being a call per element."""
    if a.dtype in (_F16_DTYPE, _BF16_DTYPE):
        wide = widen_half(a)
        if wide is not None:
            return np.ascontiguousarray(wide)
    return np.ascontiguousarray(a, dtype=_F32)


def _flat(a):
    """a as a C-contiguous float32 vector (a copy only when a is strided or another dtype)."""
    return _float32_rows(a).reshape(-1)


def _map_blocks(block_fn, shape, *inputs):
    """out = block_fn(out_block, *input_blocks) block by block over flat float32 views, in parallel."""
    flats = [_flat(a) for a in inputs]
    out = np.empty(flats[0].size, dtype=_F32)

    def task(lo, hi):
        for start in range(lo * BLOCK, min(hi * BLOCK, out.size), BLOCK):
            stop = min(start + BLOCK, out.size)
            block_fn(out[start:stop], *(f[start:stop] for f in flats))

    workers.run(task, -(-out.size // BLOCK), min_items=_BLOCKS_PER_THREAD)
    return out.reshape(shape)


def _map_chunks(loop, *inputs):
    """loop(*input_parts, out_part) over one contiguous part of the flat float32 inputs per
    worker (the compiled loops release the GIL)."""
    flats = [_flat(a) for a in inputs]
    out = np.empty(flats[0].size, dtype=_F32)
    _run_chunks(loop, flats, out)
    return out.reshape(inputs[0].shape)


def _run_chunks(loop, flats, out):
    """loop(*parts of flats, part of out) over one contiguous part of the flat arrays per worker."""
    blocks = -(-out.size // BLOCK)
    if blocks < 2 * _BLOCKS_PER_THREAD:  # one worker's share at most: called directly, no pool
        loop(*flats, out)
        return

    def task(lo, hi):
        start, stop = lo * BLOCK, min(hi * BLOCK, out.size)
        loop(*(f[start:stop] for f in flats), out[start:stop])

    workers.run(task, blocks, min_items=_BLOCKS_PER_THREAD)


# Values from which the activation and norm loops run split over numba's pool
# (cpu_jit_parallel.activation, layer_norm): below, waking its threads costs more than they save.
_POOL_VALUES = 1 << 14


def _pool_for(size):
    """cpu_jit_parallel where numba's pool serves and `size` values of work outweigh waking it."""
    return cpu_jit.parallel() if size >= _POOL_VALUES else None


def _norm_pool(rows, width):
    """_pool_for a norm of `rows` rows of `width`: a single row (a decoding step's) stays on
    the calling thread."""
    return _pool_for(rows * width) if rows > 1 else None


def activation_into(x, up, tanh_gelu, out, kind=None):
    """out = silu(x) or gelu_tanh(x) (times up, where not None) over flat C-contiguous arrays,
    float32 or (`kind`) half arrays' bits, on numba's pool where the work is large enough, else
    on this thread; the same bits either way. Only with numba."""
    pool = _pool_for(out.size)
    if pool is not None:
        pool.activation(x, up, tanh_gelu, out, kind)
    elif kind is None:
        compiled = cpu_jit.load()
        (compiled.gated_gelu_tanh if tanh_gelu else compiled.gated_silu)(x, up, out)
    else:
        cpu_jit.half_bits().activation_half(x, up, kind, tanh_gelu, out)
    return out


def layer_norm_into(x, weight, bias, eps, centered, out, mean, rstd, kind=None):
    """The rows of x (rows, width; float32, or with `kind` half bits, out the same) normalised
    into out, mean and rstd as cpu_jit's layer_norm (cpu_jit_bits.layer_norm_half) computes
    them, on numba's pool where the rows are enough work, else on this thread. Only with numba."""
    pool = _norm_pool(*x.shape)
    if pool is not None:
        pool.layer_norm(x, weight, bias, eps, centered, out, mean, rstd, kind)
    elif kind is None:
        cpu_jit.load().layer_norm(x, weight, bias, _F32(eps), centered, out, mean, rstd)
    else:
        cpu_jit.half_bits().layer_norm_half(x, kind, weight, bias, _F32(eps), centered, out, mean, rstd)
    return out


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, maximize, scalars):
    """Adam's update in place, one compiled pass over contiguous parts of the flat float32
    arrays per worker; False (nothing done) where the compiled loop cannot serve: numba
    missing, or an array that is not C-contiguous float32. `scalars` are cpu_jit.adam_step's
    float32 constants (decay ... eps)."""
    compiled = cpu_jit.load()
    arrays = (param, grad, exp_avg, exp_avg_sq) + ((max_exp_avg_sq,) if max_exp_avg_sq is not None else ())
    if compiled is None or any(not isinstance(a, np.ndarray) or a.dtype != _F32 or not a.flags.c_contiguous
                               for a in arrays):
        return False
    flats = [a.reshape(-1) for a in arrays]
    amsgrad = max_exp_avg_sq is not None
    if not amsgrad:
        flats.append(np.empty(0, _F32))

    def task(lo, hi):
        start, stop = lo * BLOCK, min(hi * BLOCK, flats[0].size)
        compiled.adam_step(*(f[start:stop] if f.size else f for f in flats), amsgrad, maximize, *scalars)

    workers.run(task, -(-flats[0].size // BLOCK), min_items=_BLOCKS_PER_THREAD)
    return True


# Abramowitz & Stegun 7.1.26: erf(z) = 1 - t p(t) exp(-z^2), t = 1 / (1 + P z) for z >= 0, with
# |error| < 1.5e-7, below float32's resolution of erf's values; torch's vectorized CPU erf uses
# the same approximation. The coefficients carry GELU's factor 1/2, and P the 1/sqrt(2) of
# Phi(x) = (1 + erf(x / sqrt(2))) / 2.
_AS_P = _F32(0.3275911 / math.sqrt(2.0))
_AS_HALF_COEFS = tuple(_F32(0.5 * c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_INV_SQRT_2PI = _F32(1.0 / math.sqrt(2.0 * math.pi))


def _normal_cdf_block(out, x, gauss):
    """out = Phi(x), given gauss = exp(-x^2 / 2) for the same block."""
    t = out
    np.abs(x, out=t)
    t *= _AS_P
    t += 1.0
    np.reciprocal(t, out=t)
    poly = np.multiply(t, _AS_HALF_COEFS[0])
    for coef in _AS_HALF_COEFS[1:]:
        poly += coef
        poly *= t
    poly *= gauss                          # the upper tail (1 - erf(|x| / sqrt(2))) / 2
    np.subtract(0.5, poly, out=out)
    np.copysign(out, x, out=out)
    out += 0.5
    return out


def _gauss_block(x):
    gauss = np.square(x)
    gauss *= -0.5
    return np.exp(gauss, out=gauss)


def _gelu_block(out, x):
    _normal_cdf_block(out, x, _gauss_block(x))
    out *= x


def _gelu_backward_block(out, grad, x):
    gauss = _gauss_block(x)
    _normal_cdf_block(out, x, gauss)       # d gelu / dx = Phi(x) + x phi(x)
    gauss *= x
    gauss *= _INV_SQRT_2PI
    out += gauss
    out *= grad


def gelu(x):
    """x Phi(x) (exact GELU): compiled when numba is installed, else the blocked ufuncs above."""
    compiled = cpu_jit.load()
    if compiled is not None:
        return _map_chunks(compiled.gelu, x)
    return _map_blocks(_gelu_block, x.shape, x)


def gelu_backward(grad, x):
    """grad (Phi(x) + x phi(x)): the first-order gradient of exact GELU."""
    compiled = cpu_jit.load()
    if compiled is not None:
        return _map_chunks(compiled.gelu_backward, grad, x)
    return _map_blocks(_gelu_backward_block, x.shape, grad, x)


_SQRT_2_OVER_PI = _F32(math.sqrt(2.0 / math.pi))
_TANH_CUBIC = _F32(0.044715 * math.sqrt(2.0 / math.pi))


def _tanh_inner_block(x):
    """tanh(sqrt(2/pi) (x + 0.044715 x^3)) for one block."""
    inner = np.square(x)
    inner *= _TANH_CUBIC
    inner += _SQRT_2_OVER_PI
    inner *= x
    return np.tanh(inner, out=inner)


def _gelu_tanh_block(out, x):
    np.add(_tanh_inner_block(x), 1.0, out=out)
    out *= x
    out *= 0.5


def _gelu_tanh_backward_block(out, grad, x):
    t = _tanh_inner_block(x)
    # d/dx = (1 + t) / 2 + x (1 - t^2) (sqrt(2/pi) (1 + 3 0.044715 x^2)) / 2
    slope = np.square(x)
    slope *= 3.0 * _TANH_CUBIC
    slope += _SQRT_2_OVER_PI
    slope *= x
    np.square(t, out=out)
    np.subtract(1.0, out, out=out)
    out *= slope
    out += t
    out += 1.0
    out *= 0.5
    out *= grad


def _compiled_activation(x, up, tanh_gelu):
    """act(x) (* up) with cpu_jit's compiled loop, split over numba's pool or chunked over the
    workers."""
    pool = _pool_for(x.size)
    if pool is not None:
        flats = [_flat(a) for a in (x,) + (() if up is None else (up,))]
        out = np.empty(flats[0].size, _F32)
        pool.activation(flats[0], flats[1] if up is not None else None, tanh_gelu, out)
        return out.reshape(x.shape)
    compiled = cpu_jit.load()
    kernel = compiled.gated_gelu_tanh if tanh_gelu else compiled.gated_silu

    def loop(*parts):
        *inputs, out = parts
        kernel(inputs[0], inputs[1] if up is not None else None, out)

    return _map_chunks(loop, x, *(() if up is None else (up,)))


def _half_activation(x, up, tanh_gelu):
    """act(x) (* up) of half arrays (SiLU or tanh-GELU) in one compiled pass over their 16-bit
    values, rounded as the composed half ops round (cpu_jit_bits.activation_half); None where
    it does not serve (no numba, not a half dtype, up of another dtype or shape)."""
    bits = cpu_jit.half_bits()
    if bits is None or x.dtype not in (_F16_DTYPE, _BF16_DTYPE) or (
            up is not None and (up.dtype != x.dtype or up.shape != x.shape)):
        return None
    kind = bits.kind_of(x.dtype)
    flats = [_flat_bits(a) for a in ((x,) if up is None else (x, up))]
    out = np.empty(x.shape, x.dtype)
    pool = _pool_for(x.size)
    if pool is not None:
        pool.activation(flats[0], flats[1] if up is not None else None, tanh_gelu, out.reshape(-1).view(np.uint16), kind)
        return out

    def loop(*parts):
        bits.activation_half(parts[0], None if up is None else parts[1], kind, tanh_gelu, parts[-1])

    _run_chunks(loop, flats, out.reshape(-1).view(np.uint16))
    return out


def _flat_bits(a):
    """A half array's elements as flat uint16 bits, in row order (a copy only when strided)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint16)


def silu_half(x):
    """silu(x) of a bfloat16/float16 array, its result in that dtype; None where not served."""
    return _half_activation(x, None, False)


def gelu_tanh_half(x):
    """gelu_tanh(x) of a bfloat16/float16 array, its result in that dtype; None where not served."""
    return _half_activation(x, None, True)


def gated_silu_half(gate, up):
    """silu(gate) * up of bfloat16/float16 arrays, each rounded as the composed ops round
    (silu's result, then the product); None where not served."""
    return _half_activation(gate, up, False)


def gated_gelu_tanh_half(gate, up):
    """gelu_tanh(gate) * up of bfloat16/float16 arrays, rounded as gated_silu_half; None where
    not served."""
    return _half_activation(gate, up, True)


def gated_silu(gate, up):
    """silu(gate) * up, the product of SwiGLU feed-forward layers (same shapes)."""
    if cpu_jit.load() is not None:
        return _compiled_activation(gate, up, False)
    return silu(gate) * up


def gated_gelu_tanh(gate, up):
    """gelu_tanh(gate) * up, the product of GeGLU feed-forward layers (same shapes)."""
    if cpu_jit.load() is not None:
        return _compiled_activation(gate, up, True)
    return gelu_tanh(gate) * up


def gelu_tanh(x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if cpu_jit.load() is not None:
        return _compiled_activation(x, None, True)
    return _map_blocks(_gelu_tanh_block, x.shape, x)


def gelu_tanh_backward(grad, x):
    return _map_blocks(_gelu_tanh_backward_block, x.shape, grad, x)


def _sigmoid_block(out, x):
    """out = sigmoid(x); x is clipped first so that exp cannot overflow (the result is unchanged)."""
    np.clip(x, -88.0, 88.0, out=out)
    np.negative(out, out=out)
    np.exp(out, out=out)
    out += 1.0
    np.reciprocal(out, out=out)
    return out


def _silu_block(out, x):
    _sigmoid_block(out, x)
    out *= x


def _silu_backward_block(out, grad, x):
    sig = _sigmoid_block(np.empty_like(x), x)   # d/dx = s (1 + x (1 - s))
    np.subtract(1.0, sig, out=out)
    out *= x
    out += 1.0
    out *= sig
    out *= grad


def silu(x):
    """x sigmoid(x)."""
    if cpu_jit.load() is not None:
        return _compiled_activation(x, None, False)
    return _map_blocks(_silu_block, x.shape, x)


def silu_backward(grad, x):
    return _map_blocks(_silu_backward_block, x.shape, grad, x)


def _map_rows(row_fn, *inputs):
    """row_fn(out_rows, *input_rows) over blocks of rows of the inputs viewed as (rows, last dim)."""
    width = inputs[0].shape[-1]
    rows = [_float32_rows(a).reshape(-1, width) for a in inputs]
    out = np.empty(rows[0].shape, dtype=_F32)
    per_block = max(1, BLOCK // max(width, 1))

    def task(lo, hi):
        for start in range(lo * per_block, min(hi * per_block, out.shape[0]), per_block):
            stop = min(start + per_block, out.shape[0])
            row_fn(out[start:stop], *(r[start:stop] for r in rows))

    workers.run(task, -(-out.shape[0] // per_block), min_items=_BLOCKS_PER_THREAD)
    return out.reshape(inputs[0].shape)


def _softmax_rows(out, x):
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


def _softmax_backward_rows(out, grad, probs):
    np.multiply(grad, probs, out=out)
    row_sums = out.sum(axis=1, keepdims=True)
    np.subtract(grad, row_sums, out=out)
    out *= probs


def _compiled_softmax_rows(out, x):
    out[...] = x
    cpu_jit.load().masked_softmax(out[None], None, _F32(1.0), _F32(np.nan))


def _compiled_softmax_backward_rows(out, grad, probs):
    cpu_jit.load().softmax_backward(grad, probs, out)


def softmax(x):
    """softmax over the last axis (a row of -inf gives NaN, as in torch)."""
    compiled = cpu_jit.load() is not None
    return _map_rows(_compiled_softmax_rows if compiled else _softmax_rows, x)


def softmax_backward(grad, probs):
    """probs (grad - sum(grad probs)) over the last axis: softmax's vector-Jacobian product."""
    compiled = cpu_jit.load() is not None
    return _map_rows(_compiled_softmax_backward_rows if compiled else _softmax_backward_rows, grad, probs)


def layer_norm(x, weight, bias, eps, centered, n_dims):
    """(out, mean, rstd) of normalising x over its last n_dims dims, then * weight + bias.

    centered=False gives RMS norm (mean is then None). mean and rstd keep x's dims (size 1
    over the normalised ones), as the op saves them for backward. A bfloat16/float16 x gives
    its dtype's out, rounded from the float32 result, in one compiled pass over its 16-bit
    values (cpu_jit_bits.layer_norm_half); float32 otherwise.
    """
    width = math.prod(x.shape[x.ndim - n_dims:])
    compiled, bits = cpu_jit.load(), cpu_jit.half_bits()
    half = bits is not None and x.dtype in (_F16_DTYPE, _BF16_DTYPE)
    rows = (np.ascontiguousarray(x) if half else _float32_rows(x)).reshape(-1, width)
    w = np.ones(width, _F32) if weight is None else _float32_rows(weight).reshape(width)
    b = np.zeros(width, _F32) if bias is None else _float32_rows(bias).reshape(width)
    out = np.empty(rows.shape, dtype=rows.dtype if half else _F32)
    mean = np.zeros(rows.shape[0], dtype=_F32)
    rstd = np.empty(rows.shape[0], dtype=_F32)
    per_block = max(1, BLOCK // max(width, 1))
    eps = _F32(eps)
    stats_shape = x.shape[:x.ndim - n_dims] + (1,) * n_dims
    pool = _norm_pool(*rows.shape)
    if pool is not None:
        pool.layer_norm(rows.view(np.uint16) if half else rows, w, b, eps, centered, out.view(np.uint16) if half else out,
                        mean, rstd, bits.kind_of(rows.dtype) if half else None)
        return out.reshape(x.shape), mean.reshape(stats_shape) if centered else None, rstd.reshape(stats_shape)

    def task(lo, hi):
        start, stop = lo * per_block, min(hi * per_block, rows.shape[0])
        if half:
            bits.layer_norm_half(rows[start:stop].view(np.uint16), bits.kind_of(rows.dtype), w, b, eps, centered,
                                 out[start:stop].view(np.uint16), mean[start:stop], rstd[start:stop])
            return
        if compiled is not None:
            compiled.layer_norm(rows[start:stop], w, b, eps, centered, out[start:stop], mean[start:stop],
                                rstd[start:stop])
            return
        for first in range(start, stop, per_block):
            last = min(first + per_block, stop)
            _layer_norm_rows(rows[first:last], w, b, eps, centered, out[first:last], mean[first:last, None],
                             rstd[first:last, None])

    workers.run(task, -(-rows.shape[0] // per_block), min_items=_BLOCKS_PER_THREAD)
    return out.reshape(x.shape), mean.reshape(stats_shape) if centered else None, rstd.reshape(stats_shape)


def layer_norm_backward(grad, x, weight, mean, rstd, centered, n_dims):
    """(gx, gw, gb) of layer_norm (centered) or RMS norm over x's last n_dims dims, from the
    mean and rstd its forward saved: gw and gb are the sums over the rows of grad * xhat and
    grad (float32; unscaled by weight). Only with numba (min_work: the op composes them otherwise)."""
    compiled = cpu_jit.load()
    width = math.prod(x.shape[x.ndim - n_dims:])
    rows = _float32_rows(x).reshape(-1, width)
    grads = _float32_rows(grad).reshape(-1, width)
    w = np.ones(width, _F32) if weight is None else _float32_rows(weight).reshape(width)
    means = np.zeros(rows.shape[0], _F32) if mean is None else _float32_rows(mean).reshape(-1)
    rstds = _float32_rows(rstd).reshape(-1)
    gx = np.empty(rows.shape, dtype=_F32)
    per_block = max(1, BLOCK // max(width, 1))
    sums = []

    def task(lo, hi):
        start, stop = lo * per_block, min(hi * per_block, rows.shape[0])
        gw, gb = np.zeros(width), np.zeros(width)
        compiled.layer_norm_backward(grads[start:stop], rows[start:stop], w, means[start:stop], rstds[start:stop],
                                     centered, gx[start:stop], gw, gb)
        sums.append((gw, gb))

    workers.run(task, -(-rows.shape[0] // per_block), min_items=_BLOCKS_PER_THREAD)
    gw, gb = (sum(parts[i] for parts in sums).astype(_F32) for i in (0, 1))
    return gx.reshape(x.shape), gw.reshape(x.shape[x.ndim - n_dims:]), gb.reshape(x.shape[x.ndim - n_dims:])


def _layer_norm_rows(block, w, b, eps, centered, out, mean, rstd):
    """One cache-sized block of rows of layer_norm, as NumPy ufuncs; mean, rstd are (rows, 1)."""
    if centered:
        np.mean(block, axis=1, keepdims=True, out=mean)
        np.subtract(block, mean, out=out)
    else:
        out[...] = block
    np.mean(np.square(out), axis=1, keepdims=True, out=rstd)
    rstd += eps
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    out *= rstd
    out *= w
    out += b


def _softmax_rows_allowing_dead(scores):
    """softmax in place over the last axis; a row with no finite score gives zeros, not NaN."""
    row_max = scores.max(axis=-1, keepdims=True)
    dead = ~np.isfinite(row_max)
    any_dead = dead.any()
    if any_dead:
        row_max[dead] = 0.0
    scores -= row_max
    np.exp(scores, out=scores)
    denom = scores.sum(axis=-1, keepdims=True)
    if any_dead:
        denom[denom == 0] = 1.0
    scores /= denom


def _item_view(a, index, lead_ndim):
    """a's part for one work item: index selects along the first len(index) of the lead dims
    (integers, or a slice that keeps its dim), where a's dims are aligned to the right of
    lead + (rows, cols) and size-1 dims broadcast."""
    offset = a.ndim - 2 - lead_ndim        # a's axis for lead axis j is j + offset
    key = tuple((slice(None) if isinstance(i, slice) else 0) if a.shape[j + offset] == 1 else i
                for j, i in enumerate(index) if j + offset >= 0)
    return a[key] if key else a


def _matmul_into(target, a, b):
    """target[...] = a @ b, written in place when the product already has target's shape."""
    if np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) == target.shape[:-2]:
        np.matmul(a, b, out=target)
    else:
        target[...] = np.matmul(a, b)


def _work_items(lead, min_items):
    """Indices into the leading (batch) dims, just deep enough to give at least min_items items."""
    depth, n_items = 0, 1
    while depth < len(lead) and n_items < min_items:
        n_items *= lead[depth]
        depth += 1
    return list(np.ndindex(*lead[:depth]))


def _lead_parts(lead, min_items, max_matrices):
    """Parts of the leading (batch) dims as index tuples, integers then one slice: at least
    min_items of them where lead has that many matrices, each of at most max_matrices
    matrices (but at least one). Consecutive entries of the deepest dim indexed are
    grouped, so small matrices are handled many to a part."""
    depth, outer = 0, 1
    while depth < len(lead) and (outer < min_items or math.prod(lead[depth:]) > max_matrices):
        outer *= lead[depth]
        depth += 1
    if depth == 0:
        return [()]
    size, inner = lead[depth - 1], math.prod(lead[depth:])
    chunks_needed = -(-min_items * size // outer)
    group = max(1, min(max_matrices // max(inner, 1), size // max(chunks_needed, 1)))
    n_groups = -(-size // group)
    bounds = [size * i // n_groups for i in range(n_groups + 1)]
    return [index + (slice(bounds[i], bounds[i + 1]),) for index in np.ndindex(*lead[:depth - 1])
            for i in range(n_groups)]


# Products of at most this many multiply-adds (m n k) are ones where OpenBLAS's own threads
# cost more than they give; a batch of them is better split across our threads.
_SMALL_PRODUCT = 1 << 21
# ... and split by rows on numba's pool (cpu_jit_blas), whose launch costs microseconds, from
# this many (64x128x128: 29 -> 18 us on two threads).
_SMALL_PRODUCT_ON_POOL = 1 << 19
# A matrix product is split by rows (or, for few rows, by columns) over the workers, each
# getting at least this many.
_MIN_ROWS_PER_THREAD = 32
# Keys and values of at least this many bytes as float32 are read by numba's threads together
# (a decoding step against a cache of a few hundred positions); fewer by the calling thread, and
# so are any inside a worker's part (encode's batches run one per core: splitting one of them
# again oversubscribes the cores, 1.5% of all-MiniLM-L6-v2's encode). A half cache counts as
# float32: its multiply-adds decide, not its bytes (SmolLM2-shaped bfloat16 at 576 positions:
# 26.8 us split, 40.8 on one thread).
_SPLIT_ATTENTION_BYTES = 1 << 19
# Keys and values up to this size that are views (a short sequence's projections, not a
# cache) are copied for those loops rather than sent to BLAS (a tiny model's: 27 -> 13 us).
_COPIED_KEYS_BYTES = 1 << 16
# Products of at most this many rows (decoding's matrix-vector products) are memory-bound
# and short: OpenBLAS's threads, which wake faster than ours, serve them.
_FEW_ROWS = 16
# ... except by weights of at most this many elements (a tiny model's, 32 x 96), whose whole
# product is shorter than a launch of that pool: they take the calling thread's kernels at
# every number of rows (gpt2-tiny's 16-token products 9 -> 2 us each).
_TINY_WEIGHT = 1 << 15


def _products_pool():
    """cpu_jit_blas where products are to be split over numba's pool: None with one thread,
    inside a worker's part (its cores are taken), or where cpu_jit.blas() declines."""
    return cpu_jit.blas() if workers.count > 1 and not workers.inside() else None


def matmul(a, b, bias=None):
    """a @ b (+ bias) for a 2-D float32 a (M, K) and b (K, N) of any strides (a weight's
    transpose is a view).

    OpenBLAS's threads spin for a while after each threaded call, and a worker kernel that
    runs next shares its cores with them and takes up to twice as long, so no call here is
    threaded by OpenBLAS: a few rows (decoding's matrix-vector products) run compiled on
    numba's pool, which wakes in microseconds; float32 products by a weight (b a weight's
    transpose, or row-major with a multiple of 16 columns) run on cpu_jit_gemm's kernels,
    which read the weight without packing it (AVX-512 CPUs). Other small products run on one
    thread; larger ones are split by rows (on numba's pool, cpu_jit_blas, where it serves;
    or, for few rows, by columns over the workers), each band multiplied with BLAS on one
    thread and its bias added while it is still in cache.
    """
    m, k = a.shape
    n = b.shape[1]
    out = np.empty((m, n), dtype=np.result_type(a, b))
    if few_rows_product(m, k, n) and _matvec(a, b, bias, out):
        return out
    if _weight_product(a, b, bias, out):
        return out
    # Each band packs all of the other operand: split the rows unless b is the much
    # larger one (few rows against a wide matrix), then split b's columns.
    by_rows = m >= 2 * _MIN_ROWS_PER_THREAD and 4 * m > n
    pool = _products_pool() if by_rows else None
    small = m * n * k <= (_SMALL_PRODUCT_ON_POOL if pool is not None else _SMALL_PRODUCT)
    if workers.count == 1 or small or not by_rows and n < 2 * _MIN_ROWS_PER_THREAD:
        with blas_threads.single():
            np.matmul(a, b, out=out)
        if bias is not None:
            out += bias
        return out

    def rows(lo, hi):
        np.matmul(a[lo:hi], b, out=out[lo:hi])
        if bias is not None:
            out[lo:hi] += bias

    def columns(lo, hi):
        np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
        if bias is not None:
            out[:, lo:hi] += bias[lo:hi]

    with blas_threads.single():
        if pool is None or not pool.gemm_rows(a, b, bias, out):
            workers.run(rows if by_rows else columns, m if by_rows else n, min_items=_MIN_ROWS_PER_THREAD)
    return out


def few_rows_product(rows, k, n):
    """Whether matmul hands a (rows, k) @ (k, n) float32 product to the matrix-vector kernels
    on numba's pool (a graph's kernels mirror the choice, so a replay computes eager's bits)."""
    return rows <= _FEW_ROWS and k * n > _TINY_WEIGHT


def linear_grads(grad, x, weight):
    """(grad @ weight, grad.T @ x): a linear layer's input and weight gradients for 2-D float
    arrays grad (m, n), x (m, k), weight (n, k). Where numba's pool serves, the two products
    run at once, half of the threads on each (cpu_jit_blas.gemm_pair); else one after the
    other, each split as matmul splits it."""
    m, n = grad.shape
    k = x.shape[1]
    pool = _products_pool()
    if pool is not None and m * n * k > _SMALL_PRODUCT_ON_POOL:
        gx = np.empty((m, k), dtype=grad.dtype)
        gw = np.empty((n, k), dtype=grad.dtype)
        with blas_threads.single():
            if pool.gemm_pair(grad, weight, gx, grad.T, x, gw):
                return gx, gw
    return matmul(grad, weight), matmul(grad.T, x)


def _weight_product(a, b, bias, out):
    """out = a @ b (+ bias) by cpu_jit_gemm for float32 a and a b stored as Linear stores its
    weight, transposed (b.T C-contiguous), or row after row (C-contiguous: GPT-2's Conv1D
    weights, a gradient times a weight) with a multiple of the vector width of columns: on
    numba's pool, or on this thread inside a worker's part or for a small product. False where
    it does not serve (then nothing is written).

    The choice does not depend on the number of rows (above matvec's few), so that a row's
    result is the same bits in a batch of any size: the kernels are also faster than BLAS on
    small products (17x64x64: 8 vs 10 us)."""
    transposed = b.T.flags.c_contiguous
    if a.dtype != _F32 or b.dtype != _F32 or not (transposed or b.flags.c_contiguous):
        return False
    kernels = cpu_jit.gemm("float32")
    if kernels is None:
        return False
    bias = None if bias is None else _float32_rows(bias).reshape(-1)
    threads = workers.count > 1 and not workers.inside() and a.size * b.shape[1] > _SMALL_PRODUCT_ON_POOL
    product = kernels.gemm_nt if transposed else kernels.gemm_nn
    return product(np.ascontiguousarray(a), b.T if transposed else b, bias, out, threads=threads)


def tiny_weight_plan(b, bias):
    """For a tiny weight b (K, N) (see _TINY_WEIGHT), whose products matmul runs on the
    calling thread: a function (a, out) -> bool computing out = a @ b (+ bias) as matmul does,
    the weight's checks made once (False, nothing written, where a does not suit the kernel);
    None where matmul would not take cpu_jit_gemm for this weight."""
    kernels = cpu_jit.gemm("float32")
    if kernels is None or (bias is not None and bias.dtype != _F32):
        return None
    transposed = b.T.flags.c_contiguous
    product = kernels.product_here(b.T if transposed else b, transposed)
    if product is None:
        return None
    bias = None if bias is None else np.ascontiguousarray(bias).reshape(-1)
    return lambda a, out: product(a, bias, out)


def _matvec(a, b, bias, out):
    """out = a @ b (+ bias) with numba's parallel kernels; False where they cannot serve."""
    compiled = cpu_jit.parallel()
    if compiled is None or a.dtype != _F32 or b.dtype != _F32 or (bias is not None and bias.dtype != _F32):
        return False
    a = np.ascontiguousarray(a)
    bias = None if bias is None else np.ascontiguousarray(bias).reshape(-1)
    if b.T.flags.c_contiguous:
        compiled.matvec_rows(a, b.T, bias, out)
    elif b.flags.c_contiguous:
        compiled.matvec_columns(a, b, bias, out)
    else:
        return False
    return True


# Weight rows widened to float32 at a time in a quantized matrix product: with K up to a few
# thousand the band stays in L2 while BLAS multiplies it.
_QUANT_BAND = 64


def half_matmul(a, b, bias=None):
    """a @ b (+ bias), float32, for bfloat16/float16 rows a (M, K) and a weight b (K, N) of the
    same dtype, without converting the weight to float32 whole; None where no kernel serves.

    A few rows (decoding) widen the weight in registers: cpu_jit_half's rows for Linear's
    weight (b.T contiguous), the matrix-vector loops' column bands for a weight stored as
    (K, N) itself (GPT-2's Conv1D). More rows of bfloat16 multiply it with the CPU's bfloat16
    dot instruction (cpu_jit_gemm), in either layout."""
    if a.ndim != 2 or b.ndim != 2 or b.dtype != a.dtype:
        return None
    transposed = b.T.flags.c_contiguous
    if not (transposed or b.flags.c_contiguous):
        return None
    few = a.shape[0] <= _FEW_ROWS
    if few and not transposed:
        loops, half = cpu_jit.parallel(), _half_kind(a.dtype)
        if loops is None or half is None:
            return None
        out, bias = _half_product_out(a, b, bias)
        loops.matvec_columns(_float32_rows(a), b.view(np.uint16), bias, out, half=half)
        return out
    compiled = cpu_jit.half() if few else cpu_jit.gemm("bfloat16") if a.dtype.name == "bfloat16" else None
    if compiled is None:
        return None
    out, bias = _half_product_out(a, b, bias)
    if few:
        done = compiled.rows_half(_float32_rows(a), b.T, bias, out)
    elif transposed:
        done = compiled.gemm_nt(np.ascontiguousarray(a), np.ascontiguousarray(b.T), bias, out)
    else:
        done = compiled.gemm_nn(np.ascontiguousarray(a), b, bias, out)
    return out if done else None


def _half_product_out(a, b, bias):
    """half_matmul's float32 output and its bias as the kernels take it."""
    out = np.empty((a.shape[0], b.shape[1]), dtype=_F32)
    return out, None if bias is None else _float32_rows(bias).reshape(-1)


def quantized_matmul(x, q, scales, bits, bias=None, offsets=None, codebook=None):
    """x @ w.T (+ bias) for a float32 x (M, K) and a weight quantized as cpu_jit_quant
    describes (bits 8 or 4; `offsets` for an affine format, `codebook` (16,) float32 for a 4-bit
    codebook one), or None without numba.

    A few rows (decoding) run on numba's pool, reading each quantized byte once; more rows
    (prefill) are split by output features over the workers, each widening a band of weight
    rows at a time into float32 and multiplying it with BLAS on one thread.
    """
    compiled = cpu_jit.quantized()
    if compiled is None or x.dtype != _F32:
        return None
    m, k = x.shape
    if m <= _FEW_ROWS and cpu_jit.parallel() is not None:
        return quantized_matmul_many(x, (q,), (scales,), bits, (bias,), None if offsets is None else (offsets,),
                                     codebook)[0]
    x = np.ascontiguousarray(x)
    bias = None if bias is None else _float32_rows(bias).reshape(-1)
    n = q.shape[0]
    out = np.empty((m, n), dtype=_F32)
    offsets = None if offsets is None else _float32_rows(offsets)

    def bands(lo, hi):
        scratch = np.empty((min(_QUANT_BAND, hi - lo), k), dtype=_F32)
        for start in range(lo, hi, _QUANT_BAND):
            stop = min(start + _QUANT_BAND, hi)
            w = scratch[:stop - start]
            band_offsets = None if offsets is None else offsets[start:stop]
            if bits == 8:
                compiled.dequantize_int8(q[start:stop], scales[start:stop], band_offsets, w)
            else:
                compiled.dequantize_int4(q[start:stop], scales[start:stop], band_offsets, codebook, w)
            np.matmul(x, w.T, out=out[:, start:stop])
            if bias is not None:
                out[:, start:stop] += bias[start:stop]

    with blas_threads.single():
        workers.run(bands, n, min_items=_QUANT_BAND)
    return out


def batched_matmul(a, b):
    """a @ b for float32 stacks of matrices (batch dims broadcast), the products spread over
    the worker threads with BLAS on one thread; a stack against one matrix is one product."""
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.ndim == 2 and a.flags.c_contiguous:
        return matmul(a.reshape(-1, k), b).reshape(a.shape[:-1] + (n,))
    lead = tuple(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    n_products = math.prod(lead)
    out = np.empty(lead + (m, n), dtype=np.result_type(a, b))
    if workers.count == 1 or n_products < 2 * workers.count:
        # Too few products to share out: large ones are split inside, small ones run here.
        for index in np.ndindex(*lead):
            if m * n * k > _SMALL_PRODUCT:
                out[index] = matmul(_item_view(a, index, len(lead)), _item_view(b, index, len(lead)))
            else:
                with blas_threads.single():
                    _matmul_into(out[index], _item_view(a, index, len(lead)), _item_view(b, index, len(lead)))
        return out
    items = _work_items(lead, 4 * workers.count)

    def task(lo, hi):
        for index in items[lo:hi]:
            _matmul_into(out[index], _item_view(a, index, len(lead)), _item_view(b, index, len(lead)))

    with blas_threads.single():
        workers.run(task, len(items))
    return out


# Attention works on blocks of query rows: this many where the mask hides keys differently
# from row to row (a causal mask: smaller blocks skip more keys), and otherwise as many as
# keep a block's scores (times the heads in one work item) in L2 between the two products
# and the softmax. Larger blocks also share each head's keys and values among more rows:
# BLAS packs them once per product, which dominates the products of small blocks.
_QUERY_BLOCK = 64
_UNMASKED_QUERY_BLOCK = 256
# Score elements a work unit aims at: the heads of short sequences are grouped into units
# of about this many (1 MiB: a unit's scores and its rows of q, k and v stay in L2), so
# that BLAS and the compiled softmax each see many heads per call instead of one.
_UNIT_SCORES = 1 << 18
# ... and, split over the threads, at least this many (about 0.1 ms of work).
_MIN_UNIT_SCORES = 1 << 15
# Mask values at or below this are "never attend": the lowest value of the mask's dtype that
# HF's masks hold there (finfo.min; float16's, the narrowest, is -65504) and -inf. Such an
# entry gets exactly zero probability whenever its row may attend another key: its exponent
# stays below float32's underflow unless a score beats the row's best by more than 65000.
_DEAD_MASK = float(np.finfo(np.float16).min)


def key_ends(mask, S):
    """For each row of an additive mask (..., rows, S): one past the last key it may attend,
    0 where it may attend none. A NaN counts as attended: it makes the row's result NaN, as in
    torch, so the key holding it is never left out (as decoding's live_keys keeps it)."""
    return np.where(~(mask <= _DEAD_MASK), np.arange(1, S + 1, dtype=np.int64), 0).max(axis=-1)


def _key_limits(mask, L, S, n_blocks):
    """For each block of query rows, how many leading keys can have nonzero probability.

    Keys after the last one any row of the block may attend (across all of the mask's
    batch entries) contribute exact zeros, so a causal mask lets block i skip the keys of
    later blocks. A block with a row that may attend nothing keeps every key, since such a
    row's result (zeros for -inf, uniform for finfo.min) depends on all of them.
    """
    ends = key_ends(mask, S)
    last = np.where(ends > 0, ends, S)
    last = last.reshape(-1, last.shape[-1]).max(axis=0)       # over the mask's lead dims
    if last.shape[0] == 1:
        return [int(last[0])] * n_blocks
    bounds = _query_blocks(L, n_blocks)
    return [int(last[i0:i1].max()) for i0, i1 in bounds]


def _live_keys(mask, L, S):
    """How many leading keys any query may attend (S where the mask does not say, or where a
    row attends nothing): the keys after them contribute exact zeros, and a prompt filling
    part of a static cache leaves the rest of it masked for every query. The last key's
    column is read first, so that a mask with nothing to trim costs one column."""
    if mask.shape[-1] != S or not (mask.dtype.kind == "f" or mask.dtype == _BF16_DTYPE) or bool((~(mask[..., -1] <= _DEAD_MASK)).any()):
        return S
    return _key_limits(mask, L, S, 1)[0]


def _query_blocks(L, n_blocks):
    return [(L * i // n_blocks, L * (i + 1) // n_blocks) for i in range(n_blocks)]


def _softmax_block(scores, mask, scale):
    """softmax(scores * scale + mask) in place over the last axis for one work unit; scores
    is C-contiguous (..., rows, width), mask None or (..., 1 or rows, >= width)."""
    compiled = cpu_jit.load()
    width = scores.shape[-1]
    if compiled is None:
        scores *= _F32(scale)
        if mask is not None:
            scores += mask[..., :width]
        _softmax_rows_allowing_dead(scores)
        return
    lead = scores.shape[:-2]
    scores3 = scores.reshape((-1,) + scores.shape[-2:])
    compiled.masked_softmax(scores3, None if mask is None else _mask_matrices(mask, lead), _F32(scale))


def _mask_matrices(mask, lead):
    """A mask broadcastable to scores (*lead, rows, width) as masked_softmax reads it beside
    the scores viewed as (prod(lead), rows, width): (n, 1 or rows, >= width) C-contiguous
    float32, each of its n matrices serving prod(lead) / n consecutive score matrices. A mask
    that varies only along the first lead dims (a padding mask per sequence, shared by its
    heads) is read once per sequence, not copied for every head."""
    mask_lead = (1,) * (len(lead) - (mask.ndim - 2)) + mask.shape[:-2]
    varying = len(lead)
    while varying and mask_lead[varying - 1] == 1:
        varying -= 1
    if mask_lead[:varying] == tuple(lead[:varying]):
        return _float32_rows(mask).reshape((math.prod(lead[:varying]),) + mask.shape[-2:])
    full = np.broadcast_to(mask, tuple(lead) + mask.shape[-2:])
    return _float32_rows(full).reshape((-1,) + mask.shape[-2:])


def attention(q, k, v, mask, keep, scale, groups=1, need_probs=True):
    """(out, probs) of dropout(softmax(q k^T scale + mask)) v, in work units of (some batch
    entries or heads) x (a block of query rows), spread over the worker threads where the
    work is large enough to repay waking them.

    q (..., H, L, E), k (..., H / groups, S, E), v (..., H / groups, S, Ev) are float32: each
    key/value head serves `groups` consecutive query heads without being copied. mask
    (additive float32) and keep (dropout keep-mask over (1 - p)) are None or broadcastable to
    the scores (..., H, L, S). A unit's scores are computed, masked, normalised and
    multiplied by v while they sit in cache, over only the keys its rows can attend
    (`_key_limits`: a causal mask halves the work). probs is None unless need_probs.
    """
    heads, L, Ev = q.shape[-3] if q.ndim >= 3 else 1, q.shape[-2], v.shape[-1]
    S = k.shape[-2]
    q, k, v = _blas_rows(q), _blas_rows(k), _blas_rows(v)
    mask, keep = _with_key_dim(mask, S), _with_key_dim(keep, S)
    if groups > 1:
        q = group_heads(q, groups)
        k, v = k[..., None, :, :], v[..., None, :, :]
        mask, keep = group_heads(mask, groups), group_heads(keep, groups)
    others = [m.shape[:-2] for m in (mask, keep) if m is not None]
    lead = tuple(np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], *others))
    # Only a mask with dead entries can hide keys; a learned position bias (T5's) or a mask
    # without padding takes one pass to rule that out, not the three that find each row's
    # last live key.
    hides_keys = mask is not None and float(mask.min()) <= _DEAD_MASK
    row_masked = mask is not None and mask.shape[-2] != 1
    n_blocks = max(1, -(-L // (_QUERY_BLOCK if row_masked and hides_keys else _UNMASKED_QUERY_BLOCK)))
    limits = _key_limits(mask, L, S, n_blocks) if hides_keys else [S] * n_blocks
    blocks = _query_blocks(L, n_blocks)
    block_scores = -(-L // n_blocks) * S
    # as many units as balance the threads, but none so small that its Python overhead
    # (tens of microseconds) outweighs its work
    wanted = min(4 * workers.count, math.prod(lead) * n_blocks * block_scores // _MIN_UNIT_SCORES)
    parallel = workers.count > 1 and not workers.inside() and wanted > 1
    prefixes = _lead_parts(lead, -(-wanted // n_blocks) if parallel else 1, max(1, _UNIT_SCORES // block_scores))
    # Costliest units first, handed out one at a time: causal blocks differ in cost.
    units = sorted(((p, b) for p in prefixes for b in range(n_blocks)),
                   key=lambda unit: -(blocks[unit[1]][1] - blocks[unit[1]][0]) * limits[unit[1]])
    out = _heads_inside_rows(lead, L, Ev, 2 if groups > 1 else 1)
    probs = np.empty(lead + (L, S), dtype=_F32) if need_probs else None
    keep_rows = keep is not None and keep.shape[-2] != 1

    def run_unit(number):
        index, block = units[number]
        (i0, i1), width = blocks[block], limits[block]
        part = lambda a: _item_view(a, index, len(lead))            # noqa: E731
        unit_lead = out[index].shape[:-2]
        # k's transpose as a view: BLAS reads it transposed, no per-unit copy.
        scores = np.matmul(part(q)[..., i0:i1, :], np.swapaxes(part(k)[..., :width, :], -1, -2))
        if scores.shape[:-2] != unit_lead:
            scores = np.ascontiguousarray(np.broadcast_to(scores, unit_lead + scores.shape[-2:]))
        mask_part = None
        if mask is not None:
            mask_part = part(mask)
            mask_part = mask_part[..., i0:i1, :] if row_masked else mask_part
        _softmax_block(scores, mask_part, scale)
        if probs is not None:
            target = probs[index][..., i0:i1, :]
            target[..., :width] = scores
            target[..., width:] = 0.0
        weights = scores
        if keep is not None:
            keep_part = part(keep)
            weights = scores * (keep_part[..., i0:i1, :width] if keep_rows else keep_part[..., :width])
        _matmul_into(out[index][..., i0:i1, :], weights, part(v)[..., :width, :])

    with blas_threads.single():
        if not parallel or len(units) < 2:
            for number in range(len(units)):
                run_unit(number)
        else:
            workers.run_each(run_unit, len(units))
    if groups > 1:
        out = out.reshape(out.shape[:-4] + (heads,) + out.shape[-2:])
        probs = probs.reshape(probs.shape[:-4] + (heads,) + probs.shape[-2:]) if probs is not None else None
    return out, probs


def attention_backward(g, q, k, v, probs, out, keep, scale, groups):
    """(grad_q, grad_k, grad_v) of attention from its saved probabilities, head by head on
    numba's pool (cpu_jit_blas.attention_grads: each head's four products and the softmax's
    gradient in one pass while they sit in cache), grad_k and grad_v per query head as the
    composed backward gives them; None where that pool does not serve or the arrays are not
    the plain (batch, heads, rows, dim) layout it takes."""
    pool = _products_pool()
    if pool is None:
        return None
    with blas_threads.single():
        return pool.attention_grads(g, q, k, v, probs, out, keep, scale, groups)


def _blas_rows(a):
    """a, or a C-contiguous copy where its matrices are not ones BLAS reads in place (unit
    strides along rows, rows that do not overlap): NumPy multiplies those with a slow loop."""
    item = a.itemsize
    if a.strides[-1] == item and (a.shape[-2] <= 1 or a.strides[-2] >= a.shape[-1] * item):
        return a
    return np.ascontiguousarray(a)


# Queries per head from which small_attention hands over to attention's work units, whose
# BLAS calls take many heads each: a short sequence encoded whole (BERT's 24 tokens: 0.8 ms
# for 32 sequences of 12 heads, against 1.1-1.6 ms in small_attention's loops).
_BLAS_ATTENTION_ROWS = 20
# The sequences cpu_jit_attention's one call over every head serves (see small_attention):
# from this many queries per head (fewer: a decoding step, whose loops below read the cache
# once) up to this many keys (more: BLAS's products of long rows are faster).
_SHORT_MIN_QUERIES, _SHORT_MAX_KEYS = 8, 128


def _half_kind(dtype):
    """cpu_jit_bits' kind of a half dtype; None for any other dtype, or without numba."""
    bits = cpu_jit.half_bits() if dtype in (_F16_DTYPE, _BF16_DTYPE) else None
    return None if bits is None else bits.kind_of(dtype)


def small_attention(q, k, v, mask, scale, groups=1):
    """attention's output where no probabilities are saved and there is no dropout
    (inference). Short sequences (from _SHORT_MIN_QUERIES queries per head, up to
    _SHORT_MAX_KEYS keys: an encoder's batch of sentences, a short prompt) take
    cpu_jit_attention's one call over every head where it runs (AVX-512). Otherwise queries
    of at least _BLAS_ATTENTION_ROWS rows per head go to attention's work units. Fewer (a
    decoding step's query against its cache) are served here: the work units and the composed
    ops' passes cost tens of microseconds there, the work itself a few. Keys
    and values in arrays of their own (a cache) are read in place by numba's loops, one
    pass over the keys and one over the values, on numba's threads (split by query heads)
    once the cache is long enough to repay waking them (a decoding step reads its whole
    cache: GPT-2's at 520 positions is 38 MB a token, whose 12 layers took 4.2 ms through
    BLAS, 3.7 ms in the loops on one thread and 2.2 ms split over two). A growing cache's
    keys and values, views of the first positions of its storage, are read there in place
    too (_cache_storage: an eager SmolLM-135M-shaped step at 1900 positions spent 30 ms in
    BLAS's attention). Other views, or no numba pool, go to BLAS on the calling thread, the query heads sharing a
    key/value head multiplied together as keys times queries (the keys' rows are
    contiguous: BLAS reads them in place). The scores are normalised by the compiled masked
    softmax either way. None where this does not serve (no numba; not 4-d float32 or half
    with matching batches).

    bfloat16 or float16 arrays (all three of one dtype) are computed on their float32 values,
    the output float32: a decoding step's loops read a half cache's bits in place, widening
    each value where it is read (cpu_jit_parallel.attention); short bfloat16 sequences take
    their scores from the bfloat16 dot instruction (exact products summed in float32); every
    other path widens copies.
    """
    compiled = cpu_jit.load()
    if compiled is None or q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or not (
            q.shape[0] == k.shape[0] == v.shape[0] and k.shape[1] * groups == q.shape[1] == v.shape[1] * groups
            and q.dtype == k.dtype == v.dtype and q.dtype in (_F32_DTYPE, _F16_DTYPE, _BF16_DTYPE)):
        return None
    batch, heads, L, E = q.shape
    kv_heads, S = k.shape[1], k.shape[2]
    if _SHORT_MIN_QUERIES <= L and S > _SHORT_MAX_KEYS and mask is not None:
        live = _live_keys(mask, L, S)
        if live <= _SHORT_MAX_KEYS:     # a static cache's unfilled positions: zero probability for every query
            k, v, mask, S = k[:, :, :live], v[:, :, :live], mask[..., :live], live
    if _SHORT_MIN_QUERIES <= L and S <= _SHORT_MAX_KEYS and q.dtype == _BF16_DTYPE and not (E % 32 or v.shape[3] % 16):
        short = cpu_jit.short_attention()
        # bfloat16 scores on the dot instruction: the products exact, summed in float32
        out = None if short is None else short.attention(q.view(np.uint16), k.view(np.uint16), widen_half(v), mask,
                                                         scale, threads=not workers.inside())
        if out is not None:
            return out
    half, parallel = _half_kind(q.dtype), cpu_jit.parallel()
    # the rows of a growing cache's storage, where k and v are views of its first S positions
    stored = _cache_storage(k, v) if L < _BLAS_ATTENTION_ROWS and parallel is not None else None
    if q.dtype != _F32_DTYPE:
        q = widen_half(q)
        if half is None or not (L < _SHORT_MIN_QUERIES and parallel is not None and (
                stored is not None or k.flags.c_contiguous and v.flags.c_contiguous)):  # not the loops (below): copies
            k, v, half, stored = widen_half(k), widen_half(v), None, None
    if _SHORT_MIN_QUERIES <= L and S <= _SHORT_MAX_KEYS and not (E % 16 or v.shape[3] % 16):
        short = cpu_jit.short_attention()
        out = None if short is None else short.attention(q, k, v, mask, scale, threads=not workers.inside())
        if out is not None:
            return out
    if L >= _BLAS_ATTENTION_ROWS:
        return attention(q, k, v, mask, None, scale, groups, need_probs=False)[0]
    scores_shape = (batch, heads, L, S)
    if parallel is not None and stored is None and k.nbytes + v.nbytes <= _COPIED_KEYS_BYTES:
        k, v = np.ascontiguousarray(k), np.ascontiguousarray(v)     # views of a projection: a copy is cheap
    if parallel is not None and (stored is not None or k.flags.c_contiguous and v.flags.c_contiguous):
        out = np.empty((batch, heads, L, v.shape[3]), _F32)
        mask = _softmax_mask(mask, scores_shape, batch * heads, L)
        split = 4 * (k.size + v.size) >= _SPLIT_ATTENTION_BYTES and not workers.inside()
        if stored is not None:
            k, v = stored
        if half is not None:
            k, v = k.view(np.uint16), v.view(np.uint16)
        parallel.attention(np.ascontiguousarray(q), k, v, mask, scale, out, half=half, split=split,
                           keys=parallel.live_keys(mask, S, _DEAD_MASK))
        return _in_rows_layout(out)
    rows = groups * L
    # (E, rows) C-contiguous: OpenBLAS multiplies a few columns several times faster in this
    # layout than as the transposed view of the queries' rows.
    queries = np.ascontiguousarray(np.swapaxes(q.reshape(batch, kv_heads, rows, E), -1, -2))
    mask = _softmax_mask(mask, scores_shape, batch * kv_heads, rows)
    with blas_threads.single():     # products this small lose more to a thread hand-off than they gain
        scores = np.ascontiguousarray(np.swapaxes(np.matmul(k, queries), -1, -2))
        compiled.masked_softmax(scores.reshape(batch * kv_heads, rows, S), mask, _F32(scale))
        return _in_rows_layout(np.matmul(scores, v).reshape(batch, heads, L, v.shape[3]))


def _cache_storage(k, v):
    """(k, v) as the rows of their storage where each is a view of the first S positions of a
    C-contiguous (B, H, C, E) array of C >= S positions, the same C for both (a growing cache's
    storage, which keeps room for the positions to come; its start may have moved, as a
    sliding window's does): views of shape (B, H, C, E) from k's and v's first rows, whose
    rows past S are never read (the decoding loops read the first `keys`, at most S). None
    where they are not such views (C-contiguous ones included)."""
    if k.flags.c_contiguous and v.flags.c_contiguous:
        return None
    capacity = set()
    for a in (k, v):
        batch, heads, _, depth = a.shape
        row = a.itemsize * depth
        if a.strides[3] != a.itemsize or a.strides[2] != row:
            return None
        if heads > 1:
            if a.strides[1] % row or (batch > 1 and a.strides[0] != heads * a.strides[1]):
                return None
            capacity.add(a.strides[1] // row)
        elif batch > 1:
            if a.strides[0] % row:
                return None
            capacity.add(a.strides[0] // row)
    if len(capacity) > 1 or (capacity and min(capacity) < k.shape[2]):
        return None
    c = capacity.pop() if capacity else k.shape[2]
    return tuple(np.lib.stride_tricks.as_strided(a, shape=a.shape[:2] + (c, a.shape[3]), writeable=False)
                 for a in (k, v))


def decode_attention_plan(q_shape, k_shape, v_shape, mask_shape, scale, half=None):
    """small_attention's path for one query per head against keys and values in arrays of
    their own (a decoding step's attention over a static cache), its choices made once for
    these shapes: a function of float32 (q, k, v, [mask,] out) writing the output into out
    ((B, H, 1, E) of v's depth E, C-contiguous) and returning it, or None where small_attention
    would take another path. A compiled replay calls it every token, where small_attention's
    checks cost more than the attention of a short cache itself. The function hands keys or
    values not C-contiguous back to small_attention, which makes its own output. With `half`
    (a cpu_jit_bits kind), k and v are C-contiguous arrays of that half dtype, read in place
    as small_attention reads a half cache (q, mask and out float32 still)."""
    parallel = cpu_jit.parallel()
    if cpu_jit.load() is None or parallel is None or len(q_shape) != 4 or len(k_shape) != 4 or len(v_shape) != 4:
        return None
    batch, heads, L, _ = q_shape
    keys = k_shape[2]
    if L != 1 or k_shape[0] != batch or v_shape[0] != batch or heads % k_shape[1] or k_shape[1] != v_shape[1] \
            or v_shape[2] != keys:
        return None
    groups, scores_shape = heads // k_shape[1], (batch, heads, L, keys)
    split = 4 * (math.prod(k_shape) + math.prod(v_shape)) >= _SPLIT_ATTENTION_BYTES
    # one row of mask for every head (a padding mask, or the causal mask's row of this step):
    # the (1, 1, S) view _softmax_mask would make of it
    shared_row = mask_shape is not None and mask_shape[-1] == keys and all(d == 1 for d in mask_shape[:-1])
    small, live_keys = small_attention, parallel.live_keys

    def attention(q, k, v, *mask_and_out):
        mask, out = mask_and_out if len(mask_and_out) == 2 else (None, mask_and_out[0])
        if half is not None:
            k, v = k.view(np.uint16), v.view(np.uint16)
        elif not (k.flags.c_contiguous and v.flags.c_contiguous):
            return small(q, k, v, mask, scale, groups)
        if mask is not None:
            mask = mask.reshape(1, 1, keys) if shared_row else _softmax_mask(mask, scores_shape, batch * heads, L)
        parallel.attention(np.ascontiguousarray(q), k, v, mask, scale, out, split=split and not workers.inside(),
                           half=half, keys=live_keys(mask, keys, _DEAD_MASK))
        return out
    return attention


def decode_step_plan(rows_shapes, cos_shape, cache_shape, mask_shape, scale):
    """A float32 decoding step's rotation, cache write and attention as one compiled call
    (cpu_jit_cache_attention.decode_step), the attention split over numba's threads where its
    live keys and values reach _SPLIT_ATTENTION_BYTES: a function of (xq, xk, xv, cos, sin,
    k_cache, v_cache, position, [mask,] q_rows, k_rows, out) (decode_step's arrays; cos and sin
    None without rotary embeddings) returning False where it wrote nothing (a position
    outside the cache, or an array not C-contiguous), or None where these shapes take the
    separate calls. `rows_shapes` are xq's and xk's (B, 1, H D) and (B, 1, KV D); the mask must
    be one row for every head (1, 1, 1, S)."""
    vector = cpu_jit.cache_attention() if cpu_jit.load() is not None else None
    (batch, length, width), (_, _, kv_width) = rows_shapes
    cache_batch, kv_heads, keys, depth = cache_shape
    heads = width // depth
    if vector is None or length != 1 or cache_batch != batch or width % depth or kv_width != kv_heads * depth or \
            heads % kv_heads or (heads > kv_heads and not vector.serves(depth, depth, 1)) or \
            (cos_shape is not None and (len(cos_shape) != 3 or cos_shape[1:] != (1, depth) or
                                        cos_shape[0] not in (1, batch) or depth % 2)) or \
            (mask_shape is not None and tuple(mask_shape) != (1, 1, 1, keys)):
        return None
    step, scale, dead, pool = vector.decode_step, np.float32(scale), np.float32(_DEAD_MASK), cpu_jit.parallel()

    def attention(xq, xk, xv, cos, sin, k_cache, v_cache, position, *rest):
        mask = rest[0] if len(rest) == 4 else None
        if not (xq.flags.c_contiguous and xk.flags.c_contiguous and xv.flags.c_contiguous and
                (cos is None or cos.flags.c_contiguous and sin.flags.c_contiguous) and
                k_cache.flags.c_contiguous and v_cache.flags.c_contiguous and
                (mask is None or mask.flags.c_contiguous)):
            return False
        with pool._launch:
            return step(xq, xk, xv, cos, sin, k_cache, v_cache, position, mask, scale, dead, _SPLIT_ATTENTION_BYTES,
                        1 if workers.inside() else pool.parts(), *rest[-3:])
    return attention


def _in_rows_layout(out):
    """out (B, H, L, E) laid out as (B, L, H, E) in memory, as every path of attention lays
    it out: the model's `output.transpose(1, 2).contiguous()` is then no copy whichever path
    ran, so a capture (graph mode, ONNX export) records the same ops at every length."""
    if out.shape[2] == 1:
        return out          # one query: both layouts are the same
    rows = _heads_inside_rows(out.shape[:2], out.shape[2], out.shape[3], 1)
    rows[...] = out
    return rows


def _softmax_mask(mask, scores_shape, n, rows):
    """An attention mask (broadcastable to the scores' (B, H, L, S)) as masked_softmax reads
    it beside the scores viewed as (n, rows, S): (1, 1, S) when every row shares it, (1, rows,
    S) when every matrix does (a causal mask), else expanded to the scores' shape."""
    if mask is None:
        return None
    mask = np.asarray(mask, dtype=_F32)
    if all(d == 1 for d in mask.shape[:-2]) and mask.shape[-1] == scores_shape[-1]:
        if mask.ndim < 2 or mask.shape[-2] == 1:
            return np.ascontiguousarray(mask.reshape(1, 1, scores_shape[-1]))
        if mask.shape[-2] == rows:
            return np.ascontiguousarray(mask.reshape(1, rows, scores_shape[-1]))
    return np.ascontiguousarray(np.broadcast_to(mask, scores_shape)).reshape(n, rows, scores_shape[-1])


def _heads_inside_rows(lead, L, Ev, n_head_dims):
    """An empty (*lead, L, Ev) float32 array laid out as (*batch, L, *heads, Ev) in memory:
    models turn attention's output back into (batch, L, heads * Ev) rows, which is then a
    view, not a copy."""
    n_head_dims = min(n_head_dims, len(lead))
    batch = len(lead) - n_head_dims
    buffer = np.empty(lead[:batch] + (L,) + lead[batch:] + (Ev,), dtype=_F32)
    order = tuple(range(batch)) + tuple(range(batch + 1, len(lead) + 1)) + (batch, len(lead) + 1)
    return buffer.transpose(order)       # np.moveaxis, without its argument checks (microseconds)


def _with_key_dim(a, S):
    """A mask or keep array as a view with at least 2 dims and a last (key) dim of size S."""
    if a is None:
        return None
    if a.ndim < 2:
        a = a.reshape((1,) * (2 - a.ndim) + a.shape)
    return a if a.shape[-1] == S else np.broadcast_to(a, a.shape[:-1] + (S,))


def group_heads(a, groups):
    """(..., H, L, X) → (..., H / groups, groups, L, X): a view, broadcasting over size-1 heads."""
    if a is None:
        return None
    if a.ndim < 3 or a.shape[-3] == 1:
        return a[..., None, :, :] if a.ndim >= 3 else a
    return a.reshape(a.shape[:-3] + (a.shape[-3] // groups, groups) + a.shape[-2:])


def round_half(x, dtype):
    """x (float32) rounded to bfloat16 or float16 (`dtype`) as astype rounds it, in one compiled
    pass (NumPy's casts to either are a call per element: on a large array four to five times
    slower to bfloat16, thirty times to float16); None without numba."""
    bits = cpu_jit.half_bits()
    if bits is None or x.dtype != _F32 or dtype not in (_F16_DTYPE, _BF16_DTYPE):
        return None
    out = np.empty(x.shape, dtype=dtype)
    bits.narrow_into(np.ascontiguousarray(x).reshape(-1), bits.kind_of(dtype), out.reshape(-1).view(np.uint16))
    return out


def widen_half(x):
    """x (bfloat16 or float16) as float32, exact, in one compiled pass (NumPy's cast from float16
    is a call per element, twenty times slower on a large array); None without numba. A
    permuted view of contiguous memory (a weight's transpose, heads split from a projection's
    rows) keeps its layout, as astype keeps it, instead of being copied into order first."""
    bits = cpu_jit.half_bits()
    if bits is None or x.dtype not in (_F16_DTYPE, _BF16_DTYPE):
        return None
    if x.flags.c_contiguous:
        out = np.empty(x.shape, dtype=_F32)
        bits.widen_into(x.reshape(-1).view(np.uint16), bits.kind_of(x.dtype), out.reshape(-1))
        return out
    axes = sorted(range(x.ndim), key=lambda a: -abs(x.strides[a]))      # memory order, outermost first
    stored = x.transpose(axes)
    if not stored.flags.c_contiguous:
        return widen_half(np.ascontiguousarray(x))
    return widen_half(stored).transpose(np.argsort(axes))


_HALF_BINARY = {"add": "ADD", "subtract": "SUBTRACT", "multiply": "MULTIPLY"}   # NumPy's name -> cpu_jit_bits' op
# The shortest repeated row binary_half takes: a scalar tensor against a large one would be a
# loop of one element per row.
_HALF_BINARY_MIN_ROW = 16


def binary_half(name, a, b):
    """a + b, a - b or a * b (`name`, NumPy's) of two arrays of one half dtype, computed in
    float32 and rounded once, as the half ops compute it, in one compiled pass over the 16-bit
    values (widening both operands, the NumPy operation and the rounding each pass over the
    arrays); None where it does not serve: other operations or dtypes, no numba, operands that
    are not the same shape or one repeated along the other's rows (of at least
    _HALF_BINARY_MIN_ROW values), not C-contiguous."""
    bits = cpu_jit.half_bits()
    if bits is None or name not in _HALF_BINARY or a.dtype != b.dtype or a.dtype not in (_F16_DTYPE, _BF16_DTYPE):
        return None
    swapped = a.size < b.size
    long, short = (b, a) if swapped else (a, b)
    rows = long.shape[len(long.shape) - len(short.shape):] if short.ndim <= long.ndim else None
    if rows is None or short.shape != rows or short.size < _HALF_BINARY_MIN_ROW or not (
            long.flags.c_contiguous and short.flags.c_contiguous):
        return None
    out = np.empty(long.shape, a.dtype)
    bits.binary_half(long.reshape(-1).view(np.uint16), short.reshape(-1).view(np.uint16), bits.kind_of(a.dtype),
                     getattr(bits, _HALF_BINARY[name]), swapped, out.reshape(-1).view(np.uint16))
    return out


def rotary(x, cos, sin, out=None):
    """x cos + rotate_half(x) sin for x (B, H, L, D) and cos, sin (B or 1, L, D) of one dtype:
    the rotary position embedding of attention heads; None where the compiled loop does not
    serve. float32, or bfloat16/float16 on their 16-bit values with each product and the sum
    rounded to the dtype, as the op's composed half path rounds them (cpu_jit_bits.rotary_half).

    Heads split from a projection's rows are a view of (B, L, H, D) memory: the result keeps
    that layout (a view again), so rotating costs one pass and no transposing copy. It is
    written into `out` (B, L, H, D), C-contiguous, of x's dtype, where one is given.
    """
    if x.ndim != 4 or cos.ndim != 3 or x.shape[-1] % 2 or not (x.dtype == cos.dtype == sin.dtype):
        return None
    rows = x.transpose(0, 2, 1, 3)      # the method, not np.swapaxes: a decoding step calls this per layer
    if not rows.flags.c_contiguous:
        return None
    if x.dtype == _F32_DTYPE:
        compiled = cpu_jit.load()
        if compiled is None:
            return None
        out = np.empty(rows.shape, _F32_DTYPE) if out is None else out
        compiled.rotary(rows, np.ascontiguousarray(cos), np.ascontiguousarray(sin), out)
        return out.transpose(0, 2, 1, 3)
    bits = cpu_jit.half_bits() if x.dtype in (_F16_DTYPE, _BF16_DTYPE) else None
    if bits is None:
        return None
    out = np.empty(rows.shape, x.dtype) if out is None else out
    bits.rotary_half(rows.view(np.uint16), np.ascontiguousarray(cos).view(np.uint16),
                     np.ascontiguousarray(sin).view(np.uint16), bits.kind_of(x.dtype), out.view(np.uint16))
    return out.transpose(0, 2, 1, 3)


def quantized_matmul_plan(qs, scales, bits, biases, offsets=None, codebook=None):
    """x @ w_t.T (+ biases[t]) for each quantized weight (qs[t], scales[t][, offsets[t]]) of one
    format and a few float32 rows of x (decoding, up to _FEW_ROWS), planned once: a function of
    (x, outs), x (m, K) C-contiguous float32 and outs a tuple of C-contiguous float32 (m, N_t)
    arrays, writing into outs and returning them, all the weights in one
    launch of numba's pool where the format allows (a step's query/key/value or gate/up
    projections); the biases all None or all arrays, as the graph pass that groups them
    ensures. A compiled replay keeps the plan while it is given the same weights and calls it
    directly: a decoding step's weight streaming evicts the interpreter from the caches, so
    every function call between the replay and the kernel costs there several times what it
    costs hot. None where that path does not serve (no numba or pool)."""
    compiled = cpu_jit.quantized()
    if compiled is None or cpu_jit.parallel() is None:
        return None
    biases = [b if b is None else _float32_rows(b).reshape(-1) for b in biases]
    offsets = None if offsets is None else [_float32_rows(o) for o in offsets]
    return compiled.plan(qs, scales, offsets, codebook, biases, bits)


def quantized_matmul_many(x, qs, scales, bits, biases, offsets=None, codebook=None):
    """quantized_matmul_plan's product of x with these weights, planned for this call; None
    where that path does not serve (no numba or pool, more rows)."""
    if x.dtype != _F32 or x.shape[0] > _FEW_ROWS:
        return None
    planned = quantized_matmul_plan(qs, scales, bits, biases, offsets, codebook)
    if planned is None:
        return None
    return planned(np.ascontiguousarray(x), tuple([np.empty((x.shape[0], q.shape[0]), _F32) for q in qs]))


KERNELS = {
    "gelu": gelu, "gelu_backward": gelu_backward, "gelu_tanh": gelu_tanh, "gelu_tanh_backward": gelu_tanh_backward,
    "softmax": softmax, "softmax_backward": softmax_backward, "attention": attention, "layer_norm": layer_norm,
    "layer_norm_backward": layer_norm_backward, "linear_grads": linear_grads, "attention_backward": attention_backward,
    "batched_matmul": batched_matmul, "matmul": matmul, "silu": silu, "silu_backward": silu_backward,
    "gated_silu": gated_silu, "gated_gelu_tanh": gated_gelu_tanh, "rotary": rotary,
    "quantized_matmul": quantized_matmul, "small_attention": small_attention, "half_matmul": half_matmul,
    "round_half": round_half, "widen_half": widen_half, "binary_half": binary_half,
    "silu_half": silu_half, "gelu_tanh_half": gelu_tanh_half, "gated_silu_half": gated_silu_half,
    "gated_gelu_tanh_half": gated_gelu_tanh_half,
}
