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

Like cpu_jit_lut4 (whose loop layout this follows): one row of x takes four weight rows at a
time sharing each load of x where this machine streams four rows side by side faster
(cpu_jit_parallel.side_by_side), else one; several rows of x take one weight row whose widened
values serve up to eight of them, each product in its own accumulator.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import FLOAT, I16, I32, I64, WIDTH, checked_once, lane_sums, loop_phis, next_iteration
from .cpu_jit_parallel import _launch, add_bias, parts, side_by_side

_ROWS = 4           # weight rows per pass against one row of x
KINDS = {"bfloat16": 0, "float16": 1}


def _widen(builder, raw, kind, width):
    """<width x i16> bits to <width x float>: bfloat16 into a float's upper half, float16 converted."""
    vf = ir.VectorType(FLOAT, width)
    if kind == KINDS["bfloat16"]:
        wide = builder.shl(builder.zext(raw, ir.VectorType(I32, width)), ir.Constant(ir.VectorType(I32, width),
                                                                                    [16] * width))
        return builder.bitcast(wide, vf)
    return builder.fpext(builder.bitcast(raw, ir.VectorType(ir.HalfType(), width)), vf)


def _dot(rows, xrows, width, kind):
    """An intrinsic: x's rows r .. r + xrows - 1 dotted with weight rows i .. i + rows - 1 (w the
    16-bit weight's bits as uint16), a tuple weight row by weight row."""
    @intrinsic
    def dot(typingctx, w, i, x, r):
        signature = types.UniTuple(types.float32, rows * xrows)(w, i, x, r)

        def codegen(context, builder, sig, args):
            w_arr, x_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 2))
            k = cgutils.unpack_tuple(builder, w_arr.shape, 2)[1]
            x_width = cgutils.unpack_tuple(builder, x_arr.shape, 2)[1]
            chunks = builder.sdiv(k, I64(width))
            vf, vh = ir.VectorType(FLOAT, width), ir.VectorType(I16, width)
            fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vf, vf]),
                                                 f"llvm.fma.v{width}f32")
            w_rows = [builder.gep(w_arr.data, [builder.mul(builder.add(args[1], I64(v)), k)]) for v in range(rows)]
            x_rows = [builder.gep(x_arr.data, [builder.mul(builder.add(args[3], I64(t)), x_width)])
                      for t in range(xrows)]
            count = rows * xrows            # accumulator v xrows + t: weight row v, x row t

            function, entry = builder.function, builder.block
            loop, done = function.append_basic_block("chunk"), function.append_basic_block("done")
            builder.branch(loop)

            builder.position_at_end(loop)
            c = builder.phi(I64)
            c.add_incoming(I64(0), entry)
            accs = loop_phis(builder, vf, count, ir.Constant(vf, None), entry)
            at = builder.mul(c, I64(width))
            xs = [builder.load(builder.bitcast(builder.gep(x_row, [at]), vf.as_pointer()), align=4) for x_row in x_rows]
            updated = [None] * count
            for v in range(rows):
                raw = builder.load(builder.bitcast(builder.gep(w_rows[v], [at]), vh.as_pointer()), align=2)
                values = _widen(builder, raw, kind, width)
                for t in range(xrows):
                    updated[v * xrows + t] = builder.call(fma, [values, xs[t], accs[v * xrows + t]])
            next_iteration(builder, c, chunks, accs, updated, loop, done)

            builder.position_at_end(done)
            return context.make_tuple(builder, sig.return_type,
                                      lane_sums(builder, updated, width))
        return signature, codegen
    return dot


if WIDTH is not None:
    _BF16, _F16 = KINDS["bfloat16"], KINDS["float16"]
    _four_bf16, _one_bf16 = _dot(_ROWS, 1, WIDTH, _BF16), _dot(1, 1, WIDTH, _BF16)
    _eight_bf16, _by4_bf16, _two_bf16 = (_dot(1, xrows, WIDTH, _BF16) for xrows in (8, 4, 2))
    _four_f16, _one_f16 = _dot(_ROWS, 1, WIDTH, _F16), _dot(1, 1, WIDTH, _F16)
    _eight_f16, _by4_f16, _two_f16 = (_dot(1, xrows, WIDTH, _F16) for xrows in (8, 4, 2))

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _rows_half(x, w, kind, bias, out, parts, side_by_side):
        n, m = w.shape[0], x.shape[0]
        for part in numba.prange(parts):
            lo, hi = n * part // parts, n * (part + 1) // parts
            i = lo
            if m == 1 and side_by_side:
                while i + _ROWS <= hi:
                    if kind == _BF16:
                        out[0, i], out[0, i + 1], out[0, i + 2], out[0, i + 3] = _four_bf16(w, i, x, 0)
                    else:
                        out[0, i], out[0, i + 1], out[0, i + 2], out[0, i + 3] = _four_f16(w, i, x, 0)
                    i += _ROWS
            while i < hi:
                r = 0
                while r + 8 <= m:
                    values = _eight_bf16(w, i, x, r) if kind == _BF16 else _eight_f16(w, i, x, r)
                    for t in range(8):
                        out[r + t, i] = values[t]
                    r += 8
                if r + 4 <= m:
                    values4 = _by4_bf16(w, i, x, r) if kind == _BF16 else _by4_f16(w, i, x, r)
                    for t in range(4):
                        out[r + t, i] = values4[t]
                    r += 4
                if r + 2 <= m:
                    out[r, i], out[r + 1, i] = _two_bf16(w, i, x, r) if kind == _BF16 else _two_f16(w, i, x, r)
                    r += 2
                if r < m:
                    out[r, i] = (_one_bf16(w, i, x, r) if kind == _BF16 else _one_f16(w, i, x, r))[0]
                i += 1
            if bias is not None:
                add_bias(out, bias, lo, hi)

def _probe():
    """A small product of each kind against the float64 product of the same values."""
    rng = np.random.default_rng(0)
    x = rng.random((3, 2 * WIDTH), dtype=np.float32)
    w = rng.random((6, 2 * WIDTH), dtype=np.float32).astype(np.float16)
    ok = True
    for kind, bits in ((KINDS["float16"], w.view(np.uint16)),
                       (KINDS["bfloat16"], (w.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))):
        widened = w if kind == KINDS["float16"] else (bits.astype(np.uint32) << 16).view(np.float32)
        out = np.empty((3, 6), np.float32)
        _rows_half(x, bits, kind, None, out, parts(), True)
        ok = ok and bool(np.allclose(out, x.astype(np.float64) @ widened.astype(np.float64).T, rtol=1e-5))
    return ok


# Whether the kernels compile and compute here (tried once on a small product of each kind).
usable = checked_once(WIDTH is not None, _probe)


def rows_half(x, w, bias, out):
    """out (m, N) = x (m, K) float32 @ w.T (+ bias, float32) for a bfloat16 or float16 weight w
    (N, K); False where these kernels cannot serve (no AVX-512/AVX2, K not a multiple of the
    vector width, non-contiguous arrays)."""
    if not usable() or w.shape[1] % WIDTH or not (w.flags.c_contiguous and x.flags.c_contiguous):
        return False
    kind = KINDS["float16"] if w.dtype == np.float16 else KINDS["bfloat16"]
    four = side_by_side()
    with _launch:
        _rows_half(x, w.view(np.uint16), kind, bias, out, parts(), four)
    return True
