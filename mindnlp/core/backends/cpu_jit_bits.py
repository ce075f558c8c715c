# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""One float32 to and from the bits of a 16-bit float, inside compiled loops (imported only
with numba).

numba has no bfloat16 type, and its float16 arithmetic is not what the core's half ops do:
those compute in float32 and round each result to the half dtype, as torch's CPU ops do
(ops._helpers.compute_float). Loops over half arrays therefore read them as uint16 bits,
`widen` each element (exact), compute in float32 and `narrow` the result: rounded to
nearest, ties to even, as NumPy's astype rounds it; a NaN stays a NaN of its sign.
bfloat16 is a float32's upper half, so both directions are bit operations; float16 takes the
CPU's conversion instructions (LLVM's fpext / fptrunc).
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .cpu_jit import load

BFLOAT16, FLOAT16 = 0, 1        # the `kind` of half the loops take

_SIGN_FREE, _INFINITY, _QUIET = np.uint32(0x7FFFFFFF), np.uint32(0x7F800000), np.uint32(0x40)
_SIXTEEN, _ONE_BIT, _BELOW_HALF = np.uint32(16), np.uint32(1), np.uint32(0x7FFF)


def kind_of(dtype):
    """The loops' kind of a half dtype (float16, else bfloat16)."""
    return FLOAT16 if dtype == np.float16 else BFLOAT16


@intrinsic
def _float16_bits_to_float(typingctx, bits):
    def codegen(context, builder, sig, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.uint16), codegen


@intrinsic
def _float_to_float16_bits(typingctx, value):
    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.uint16(types.float32), codegen


@numba.njit(inline="always")
def bfloat16_bits(value):
    """float32 `value` rounded to bfloat16, as its bits."""
    u = np.float32(value).view(np.uint32)
    if (u & _SIGN_FREE) > _INFINITY:
        return np.uint16((u >> _SIXTEEN) | _QUIET)
    return np.uint16((u + _BELOW_HALF + ((u >> _SIXTEEN) & _ONE_BIT)) >> _SIXTEEN)


@numba.njit(inline="always")
def widen(bits, kind):
    """The float32 value of a bfloat16 or float16 (`kind`) given as its uint16 bits."""
    if kind == BFLOAT16:
        return np.uint32(np.uint32(bits) << _SIXTEEN).view(np.float32)
    return _float16_bits_to_float(np.uint16(bits))


@numba.njit(inline="always")
def narrow(value, kind):
    """float32 `value` rounded to bfloat16 or float16 (`kind`), as its uint16 bits."""
    if kind == BFLOAT16:
        return bfloat16_bits(value)
    return _float_to_float16_bits(np.float32(value))


@numba.njit(nogil=True, cache=True)
def widen_into(bits, kind, out):
    """out (float32) = the flat half array `bits` widened: a cast to float32."""
    for i in range(bits.shape[0]):
        out[i] = widen(bits[i], kind)


@numba.njit(nogil=True, cache=True)
def narrow_into(values, kind, bits):
    """bits = the flat float32 array `values` rounded to the half dtype: a cast to it."""
    for i in range(values.shape[0]):
        bits[i] = narrow(values[i], kind)


@numba.njit(nogil=True, cache=True)
def rotary_half(x, cos, sin, kind, out):
    """out = x cos + rotate_half(x) sin for half arrays (as bits), each product and the sum
    rounded to the half dtype as the op computes them (modeling_rotary._Rotary). x, out
    (B, L, H, D) and cos, sin (B or 1, L, D), all C-contiguous."""
    half = x.shape[3] // 2
    for b in range(x.shape[0]):
        for i in range(x.shape[1]):
            c, s = cos[b if cos.shape[0] > 1 else 0, i], sin[b if sin.shape[0] > 1 else 0, i]
            for h in range(x.shape[2]):
                row, res = x[b, i, h], out[b, i, h]
                for j in range(half):
                    x1, x2 = widen(row[j], kind), widen(row[j + half], kind)
                    first = widen(narrow(x1 * widen(c[j], kind), kind), kind)
                    res[j] = narrow(first + widen(narrow(-x2 * widen(s[j], kind), kind), kind), kind)
                    first = widen(narrow(x2 * widen(c[j + half], kind), kind), kind)
                    res[j + half] = narrow(first + widen(narrow(x1 * widen(s[j + half], kind), kind), kind), kind)


ADD, SUBTRACT, MULTIPLY = 0, 1, 2       # the `op` of binary_half


@numba.njit(nogil=True, cache=True)
def binary_half(a, b, kind, op, swapped, out):
    """out = a op b (b op a where `swapped`) over flat half arrays (bits), computed in float32
    and rounded once, as the half ops compute it (ops.elementwise._binary_result); b is as long
    as a, or one row repeated along it (a bias or a norm's weight against every row)."""
    width = b.shape[0]
    for start in range(0, a.shape[0], width):
        row, res = a[start:start + width], out[start:start + width]
        for j in range(width):
            x, y = widen(row[j], kind), widen(b[j], kind)
            if swapped:
                x, y = y, x
            if op == ADD:
                value = x + y
            elif op == SUBTRACT:
                value = x - y
            else:
                value = x * y
            res[j] = narrow(value, kind)


# Values widened at a time for cpu_jit's float32 loops (the activations, whose exp is taken a
# block at a time, and the norms, whole rows of about this many): a block stays in L1 from its
# widening to its rounding.
_BLOCK_VALUES = 2048
_float32_loops = load()
_silu_loop, _gelu_tanh_loop = _float32_loops.gated_silu, _float32_loops.gated_gelu_tanh
_layer_norm_loop = _float32_loops.layer_norm


@numba.njit(nogil=True, cache=True)
def activation_half(x, up, kind, tanh_gelu, out):
    """out = act(x), or act(x) * up, over flat half arrays (bits), act SiLU or tanh-GELU, as
    the composed half ops compute it: act in float32 rounded to the half dtype (compute_float),
    then, gated, its product with up in float32 rounded again (the multiplication's own
    rounding; fusing the two would round once, 1 ulp off torch's result on about a quarter of
    the elements)."""
    wide, activated = np.empty(_BLOCK_VALUES, np.float32), np.empty(_BLOCK_VALUES, np.float32)
    for start in range(0, x.shape[0], _BLOCK_VALUES):
        xs, outs = x[start:start + _BLOCK_VALUES], out[start:start + _BLOCK_VALUES]
        values, acts = wide[:xs.shape[0]], activated[:xs.shape[0]]
        for j in range(xs.shape[0]):
            values[j] = widen(xs[j], kind)
        # into a second block: in place, the loop's check for overlapping arrays would send it
        # to its scalar version (three times slower)
        if tanh_gelu:
            _gelu_tanh_loop(values, None, acts)
        else:
            _silu_loop(values, None, acts)
        if up is None:
            for j in range(xs.shape[0]):
                outs[j] = narrow(acts[j], kind)
        else:
            ups = up[start:start + _BLOCK_VALUES]
            for j in range(xs.shape[0]):
                outs[j] = narrow(widen(narrow(acts[j], kind), kind) * widen(ups[j], kind), kind)


@numba.njit(nogil=True, cache=True)
def layer_norm_half(x, kind, weight, bias, eps, centered, out, mean, rstd):
    """Rows of a half array x (rows, width; bits) normalised as cpu_jit's layer_norm does on
    their float32 values (weight and bias float32), each result rounded to the half dtype into
    out (bits), a few rows at a time through L1-sized blocks: the op's widening, float32 norm
    and rounding, without their whole-array passes and copies."""
    rows, width = x.shape
    block = max(1, _BLOCK_VALUES // width)
    wide, normed = np.empty((block, width), np.float32), np.empty((block, width), np.float32)
    for start in range(0, rows, block):
        stop = min(start + block, rows)
        values, results = wide[:stop - start], normed[:stop - start]
        for r in range(stop - start):
            source, row = x[start + r], values[r]
            for j in range(width):
                row[j] = widen(source[j], kind)
        _layer_norm_loop(values, weight, bias, eps, centered, results, mean[start:stop], rstd[start:stop])
        for r in range(stop - start):
            result, target = results[r], out[start + r]
            for j in range(width):
                target[j] = narrow(result[j], kind)


@numba.njit(nogil=True, cache=True)
def residual_norm_half(a, b, kind, weight, bias, eps, centered, scale, total, out, wide, normed, mean, rstd):
    """A residual add and the norm of its sum over rows of half arrays (bits, (rows, width)),
    as the add, the norm and the scaling that follows it compute them one after the other:
    total = a + b rounded to the half dtype; out = its norm in float32 (cpu_jit's layer_norm
    of the rounded sums, with the float32 weight and bias) rounded, then, where `scale` (the
    half weight widened, float32 (width,)) is given, times it and rounded again (HF's half
    RMSNorm: `weight * norm(x).to(dtype)`). `wide` and `normed` are float32 scratch rows."""
    rows, width = a.shape
    for r in range(rows):
        xa, xb, sums, values = a[r], b[r], total[r], wide[r]
        for j in range(width):
            t = narrow(widen(xa[j], kind) + widen(xb[j], kind), kind)
            sums[j] = t
            values[j] = widen(t, kind)
    _layer_norm_loop(wide, weight, bias, eps, centered, normed, mean, rstd)
    for r in range(rows):
        result, target = normed[r], out[r]
        if scale is None:
            for j in range(width):
                target[j] = narrow(result[j], kind)
        else:
            for j in range(width):
                target[j] = narrow(widen(narrow(result[j], kind), kind) * scale[j], kind)


@numba.njit(nogil=True, cache=True)
def residual_norm_float32(a, b, weight, bias, eps, centered, total, out, mean, rstd):
    """residual_norm_half for float32 rows: total = a + b, out = the norm of total (cpu_jit's
    layer_norm, the float32 norm's own loop)."""
    rows, width = a.shape
    for r in range(rows):
        xa, xb, sums = a[r], b[r], total[r]
        for j in range(width):
            sums[j] = xa[j] + xb[j]
    _layer_norm_loop(total, weight, bias, eps, centered, out, mean, rstd)
