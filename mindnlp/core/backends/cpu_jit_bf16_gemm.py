# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""bfloat16 matrix products through the CPU's bfloat16 dot-product instruction (imported only
with numba, used where the CPU has AVX512-BF16).

A bfloat16 model's prefill multiplies many rows of bfloat16 activations by bfloat16 weights.
Converting both to float32 for BLAS reads and writes six bytes per weight before the product
and then multiplies at float32's rate. AVX512-BF16's vdpbf16ps multiplies 32 pairs of
bfloat16 values and adds them pairwise into 16 float32 sums in one instruction, twice the
multiply-adds of a float32 FMA, straight from the 16-bit operands. The products of two
bfloat16 values are exact in float32 and are summed in float32, as torch's bfloat16 matmul
sums them; only the order of the additions differs from a float32 product's.

x (M, K) times a weight w (N, K) (Linear's layout: both operands contiguous along K): tiles of
four rows of x by four rows of w hold 16 accumulators, each step loads 32 values of each row
(eight loads for sixteen dot instructions), and at the end the accumulators' partial sums
are reduced in a transposing tree (cpu_jit_ir.lane_sums). Each thread takes a band of w's
rows, walked in blocks that stay in L2 while every tile of x passes over them.
"""
import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import FLOAT, I16, I32, I64, WIDTH, checked_once, lane_sums, loop_phis, next_iteration
from .cpu_jit_parallel import _launch, add_bias, parts

_TILE = 4                      # rows of x and of w per tile
_STEP = 32                     # bfloat16 values per dot instruction
_BLOCK_BYTES = 256 * 1024      # w's rows a thread walks while the tiles of x pass over them


class _BFloat(ir.types.Type):
    """LLVM's bfloat scalar type, which llvmlite does not name (the dot intrinsic's operands)."""

    def _to_string(self):
        return "bfloat"

    def __eq__(self, other):
        return isinstance(other, _BFloat)

    def __hash__(self):
        return hash("bfloat")


def _tile(x_rows, w_rows):
    """An intrinsic: out[m0 + i, n0 + j] = x[m0 + i] . w[n0 + j] for i < x_rows, j < w_rows
    (x, w: bfloat16 bits as uint16, K a multiple of 32; out float32)."""
    @intrinsic
    def tile(typingctx, x, m0, w, n0, out):
        signature = types.void(x, m0, w, n0, out)

        def codegen(context, builder, sig, args):
            x_arr, w_arr, out_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 2, 4))
            k = cgutils.unpack_tuple(builder, x_arr.shape, 2)[1]
            n = cgutils.unpack_tuple(builder, out_arr.shape, 2)[1]
            steps = builder.sdiv(k, I64(_STEP))
            vf, vi, vb = ir.VectorType(FLOAT, 16), ir.VectorType(I16, _STEP), ir.VectorType(_BFloat(), _STEP)
            dot = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vb, vb]),
                                                 "llvm.x86.avx512bf16.dpbf16ps.512")
            xs = [builder.gep(x_arr.data, [builder.mul(builder.add(args[1], I64(i)), k)]) for i in range(x_rows)]
            ws = [builder.gep(w_arr.data, [builder.mul(builder.add(args[3], I64(j)), k)]) for j in range(w_rows)]
            count = x_rows * w_rows             # accumulator i * w_rows + j

            function, entry = builder.function, builder.block
            loop, done = function.append_basic_block("step"), function.append_basic_block("done")
            builder.branch(loop)

            builder.position_at_end(loop)
            s = builder.phi(I64)
            s.add_incoming(I64(0), entry)
            accs = loop_phis(builder, vf, count, ir.Constant(vf, None), entry)
            at = builder.mul(s, I64(_STEP))

            def load(row):
                bits = builder.load(builder.bitcast(builder.gep(row, [at]), vi.as_pointer()), align=2)
                return builder.bitcast(bits, vb)

            x_values, w_values = [load(row) for row in xs], [load(row) for row in ws]
            updated = [builder.call(dot, [accs[i * w_rows + j], x_values[i], w_values[j]])
                       for i in range(x_rows) for j in range(w_rows)]
            next_iteration(builder, s, steps, accs, updated, loop, done)

            builder.position_at_end(done)
            for index, total in enumerate(lane_sums(builder, updated, 16)):
                i, j = divmod(index, w_rows)
                row = builder.add(args[1], I64(i))
                column = builder.add(args[3], I64(j))
                builder.store(total, builder.gep(out_arr.data, [builder.add(builder.mul(row, n), column)]))
            return context.get_dummy_value()
        return signature, codegen
    return tile


def _has_bf16_dot():
    return WIDTH == 16 and bool(llvm_binding.get_host_cpu_features().get("avx512bf16"))


if _has_bf16_dot():
    _tile_44, _tile_41, _tile_14, _tile_11 = _tile(4, 4), _tile(4, 1), _tile(1, 4), _tile(1, 1)

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _gemm(x, w, bias, out, block, parts):
        m, n = x.shape[0], w.shape[0]
        for part in numba.prange(parts):
            lo, hi = n * part // parts, n * (part + 1) // parts
            for start in range(lo, hi, block):
                stop = min(start + block, hi)
                i = 0
                while i + _TILE <= m:
                    j = start
                    while j + _TILE <= stop:
                        _tile_44(x, i, w, j, out)
                        j += _TILE
                    while j < stop:
                        _tile_41(x, i, w, j, out)
                        j += 1
                    i += _TILE
                while i < m:
                    j = start
                    while j + _TILE <= stop:
                        _tile_14(x, i, w, j, out)
                        j += _TILE
                    while j < stop:
                        _tile_11(x, i, w, j, out)
                        j += 1
                    i += 1
            if bias is not None:
                add_bias(out, bias, lo, hi)

def _probe():
    """Every kind of tile against the float64 product of the same bfloat16 values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 2 * _STEP), dtype=np.float32)
    w = rng.standard_normal((7, 2 * _STEP), dtype=np.float32)
    x_bits, w_bits = (_to_bf16_bits(v) for v in (x, w))
    out = np.empty((6, 7), np.float32)
    _gemm(x_bits, w_bits, None, out, 8, parts())
    expected = _widen(x_bits).astype(np.float64) @ _widen(w_bits).astype(np.float64).T
    return np.allclose(out, expected, rtol=1e-5, atol=1e-5)


def _to_bf16_bits(values):
    """float32 -> bfloat16 bits (truncated: only the check above uses it)."""
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def _widen(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# Whether the CPU has the instruction and the kernel computes here.
usable = checked_once(_has_bf16_dot(), _probe)


def gemm(x, w, bias, out):
    """out (M, N) float32 = x (M, K) @ w.T (+ bias, float32) for bfloat16 x and w (N, K);
    False where the kernel cannot serve (no AVX512-BF16, K not a multiple of 32, non-contiguous
    operands)."""
    k = x.shape[1]
    if not usable() or k % _STEP or not (x.flags.c_contiguous and w.flags.c_contiguous and out.flags.c_contiguous):
        return False
    block = max(_TILE, _BLOCK_BYTES // (2 * k) // _TILE * _TILE)
    with _launch:
        _gemm(x.view(np.uint16), w.view(np.uint16), bias, out, block, parts())
    return True
