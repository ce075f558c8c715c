# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Matrix products x @ w.T on a weight as Linear stores it, w (N, K) with its rows contiguous
along K, float32 or bfloat16 (imported only with numba).

BLAS multiplies x (M, K) by w.T by first copying (packing) the panels of w it walks into a
layout of its own, on every call and, split over threads by rows, on every thread. The
kernels here read the weight where it is. Each thread takes a band of w's rows (the output's
columns, so the weight is read once).

- float32, with AVX-512 only (the transposed tiles, below): x is copied once, transposed (a
  small copy beside the weight), and a tile broadcasts each of 8 rows' w[n, k] against 3
  vectors of x.T[k, m : m + 48], one FMA per pair into 24 accumulators whose lanes run along
  x's rows, transposed in registers as they are stored. Any K. With AVX2's 16 registers tiles
  are too small to keep up with loading (two by four: 6 loads per 8 FMAs): run at width 8 they
  reached 84-89 GFLOP/s on one core where OpenBLAS reached 95-106, so BLAS keeps those
  machines' products.
- bfloat16: AVX512-BF16's vdpbf16ps multiplies 32 pairs of bfloat16 values and adds them
  pairwise into 16 float32 sums in one instruction, twice the multiply-adds of a float32 FMA,
  straight from the 16-bit operands (a bfloat16 prefill would otherwise convert both operands
  to float32 for BLAS). The pairs run along K, so a tile of x's rows by w's rows loads one
  vector of each row per step and dots every pair into its own accumulator, whose lanes are
  summed in a transposing tree at the end of K (cpu_jit_ir.lane_sums); w's rows walked in
  blocks that stay in L2 while every tile of x passes over them. The products of two bfloat16
  values are exact in float32 and are summed in float32, as torch's bfloat16 matmul sums
  them. K must be a multiple of 32.
- x @ b for b (K, N) stored row after row (below), float32 or bfloat16 (K even).

A row's results do not depend on how the rows are split over threads, nor on how many rows x
has; they are summed in another order than BLAS's, so they differ from it in the last bits.
"""
import os

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import FLOAT, I16, I32, I64, WIDTH, checked_once, loop_phis, merged_lanes, next_iteration, open_loop
from .cpu_jit_parallel import _launch, parts

_LANES = 16                    # float32 lanes of an AVX-512 vector, the only width served
_BF16_STEP = 32                # bfloat16 values per dot instruction


def _second_level_cache_bytes(path="/sys/devices/system/cpu/cpu0/cache"):
    """The size of a core's second-level cache as Linux reports it, or None where it does not."""
    try:
        for index in sorted(os.listdir(path)):
            with open(os.path.join(path, index, "level")) as level, open(os.path.join(path, index, "size")) as size:
                if level.read().strip() == "2":
                    text = size.read().strip().upper()
                    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
                    return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        return None
    return None


def _block_bytes(l2):
    """The bytes of w's rows a thread walks while the tiles of x pass over them: half the core's
    second-level cache (the rest holds the tiles of x going by), at most 512 KB, 256 KB where the
    size is unknown. On a Zen 4 core (1 MB) 512 KB against 256 KB ran MiniLM's and SmolLM's
    products at 185-221 instead of 111-205 GFLOP/s (K = 1536: 171 -> 187; 256 KB holds only
    40 of its rows)."""
    return 256 * 1024 if not l2 else max(128 * 1024, min(l2 // 2, 512 * 1024))


_BLOCK_BYTES = _block_bytes(_second_level_cache_bytes())
# Tile shape (rows of x, rows of w): the accumulators and one step's operands fill the vector
# registers; their product is at most the lanes of a vector (see the sums).
_X_ROWS, _W_ROWS = 4, 4


class _BFloat(ir.types.Type):
    """LLVM's bfloat scalar type, which llvmlite does not name (the dot intrinsic's operands)."""

    def _to_string(self):
        return "bfloat"

    def __eq__(self, other):
        return isinstance(other, _BFloat)

    def __hash__(self):
        return hash("bfloat")


def _step_kind(builder, sums, bfloat16):
    """(values per step, the loaded vector's type, the operand type, multiply_add(acc, x, w))
    for float32 (FMA) or bfloat16 bits (vdpbf16ps), summed into vectors of type `sums`."""
    if bfloat16:
        dot = cgutils.get_or_insert_function(builder.module, ir.FunctionType(sums, [sums] + [ir.VectorType(
            _BFloat(), _BF16_STEP)] * 2), "llvm.x86.avx512bf16.dpbf16ps.512")
        return (_BF16_STEP, ir.VectorType(I16, _BF16_STEP), ir.VectorType(_BFloat(), _BF16_STEP),
                lambda acc, a, b: builder.call(dot, [acc, a, b]))
    fma = cgutils.get_or_insert_function(builder.module, ir.FunctionType(sums, [sums] * 3), "llvm.fma.v16f32")
    return _LANES, sums, sums, lambda acc, a, b: builder.call(fma, [a, b, acc])


def _row_stride(builder, array, axis=0):
    """The distance between an array's rows (axis 0) or columns (axis 1) in elements: the
    tiles read matrices whose rows are contiguous but need not follow each other (a head's rows
    inside (batch, positions, heads, dim) activations), and the row-major tile's scalars of x
    from a transposed view."""
    stride = cgutils.unpack_tuple(builder, array.strides, 2)[axis]
    return builder.sdiv(stride, array.itemsize)


def _bias_at(context, builder, sig, args, index):
    """For the bias argument `index` (a C-contiguous float32 array, or None: no bias), a function
    (element index, kind=float) -> the bias value there, or the vector of `kind` starting there;
    None where there is no bias."""
    if isinstance(sig.args[index], types.NoneType):
        return None
    data = context.make_array(sig.args[index])(context, builder, args[index]).data
    return lambda at, kind=FLOAT: builder.load(builder.bitcast(builder.gep(data, [at]), kind.as_pointer()), align=4)


def _tile(x_rows, w_rows):
    """An intrinsic: out[m0 + i, n0 + j] = x[m0 + i] . w[n0 + j] (+ bias[n0 + j] where bias is
    not None) for i < x_rows, j < w_rows (x, w bfloat16 bits as uint16, float32 products taking
    the transposed tiles below; K a multiple of the step; out and bias float32; 16 lanes). The
    bias is added to each sum as it is stored: the same rounding as adding it afterwards,
    without another pass over the output."""
    @intrinsic
    def tile(typingctx, x, m0, w, n0, out, bias):
        signature = types.void(x, m0, w, n0, out, bias)
        bfloat16 = x.dtype == types.uint16

        def codegen(context, builder, sig, args):
            x_arr, w_arr, out_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 2, 4))
            bias_at = _bias_at(context, builder, sig, args, 5)
            k = cgutils.unpack_tuple(builder, x_arr.shape, 2)[1]
            x_stride, w_stride, out_stride = (_row_stride(builder, a) for a in (x_arr, w_arr, out_arr))
            sums = ir.VectorType(FLOAT, _LANES)
            step, stored, operand, multiply_add = _step_kind(builder, sums, bfloat16)
            steps = builder.sdiv(k, I64(step))
            xs = [builder.gep(x_arr.data, [builder.mul(builder.add(args[1], I64(i)), x_stride)]) for i in range(x_rows)]
            ws = [builder.gep(w_arr.data, [builder.mul(builder.add(args[3], I64(j)), w_stride)]) for j in range(w_rows)]
            count = x_rows * w_rows             # accumulator i * w_rows + j

            loop, done, s, accs = open_loop(builder, "step", sums, count)
            at = builder.mul(s, I64(step))

            def load(row):
                value = builder.load(builder.bitcast(builder.gep(row, [at]), stored.as_pointer()), align=2)
                return value if stored is operand else builder.bitcast(value, operand)

            x_values, w_values = [load(row) for row in xs], [load(row) for row in ws]
            updated = [multiply_add(accs[i * w_rows + j], x_values[i], w_values[j])
                       for i in range(x_rows) for j in range(w_rows)]
            next_iteration(builder, s, steps, accs, updated, loop, done)

            builder.position_at_end(done)
            # Every accumulator is summed by the same tree of _LANES vectors, a tile of fewer
            # padded with copies: a result is then the same bits whichever tile computed it.
            # Each lane of the tree's last vector holds one whole sum; the bias goes in a vector.
            merged, owners = merged_lanes(builder, updated + [updated[0]] * (_LANES - count), _LANES)
            columns = [builder.add(args[3], I64(j)) for j in range(w_rows)]
            if bias_at is not None:
                values = [bias_at(column) for column in columns]
                spread = ir.Constant(sums, None)
                for lane, owner in enumerate(owners):
                    if owner < count:
                        spread = builder.insert_element(spread, values[owner % w_rows], I32(lane))
                merged = builder.fadd(merged, spread)
            for lane, owner in enumerate(owners):
                if owner < count:
                    i, j = divmod(owner, w_rows)
                    row = builder.add(args[1], I64(i))
                    builder.store(builder.extract_element(merged, I32(lane)),
                                  builder.gep(out_arr.data, [builder.add(builder.mul(row, out_stride), columns[j])]))
            return context.get_dummy_value()
        return signature, codegen
    return tile


if WIDTH == 16:
    _tile_full, _tile_x, _tile_w, _tile_one = (_tile(_X_ROWS, _W_ROWS), _tile(_X_ROWS, 1), _tile(1, _W_ROWS),
                                               _tile(1, 1))

    @numba.njit(nogil=True, cache=True)
    def _band(x, w, out, lo, hi, block, bias=None):
        """out[:, lo:hi] = x @ w[lo:hi].T (+ bias[lo:hi]), w's rows walked `block` at a time."""
        m = x.shape[0]
        for start in range(lo, hi, block):
            stop = min(start + block, hi)
            i = 0
            while i + _X_ROWS <= m:
                j = start
                while j + _W_ROWS <= stop:
                    _tile_full(x, i, w, j, out, bias)
                    j += _W_ROWS
                while j < stop:
                    _tile_x(x, i, w, j, out, bias)
                    j += 1
                i += _X_ROWS
            while i < m:
                j = start
                while j + _W_ROWS <= stop:
                    _tile_w(x, i, w, j, out, bias)
                    j += _W_ROWS
                while j < stop:
                    _tile_one(x, i, w, j, out, bias)
                    j += 1
                i += 1

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _gemm(x, w, bias, out, block, parts):
        """out = x @ w.T (+ bias), each thread a band of w's rows."""
        n = w.shape[0]
        for part in numba.prange(parts):
            lo, hi = n * part // parts, n * (part + 1) // parts
            _band(x, w, out, lo, hi, block, bias)

    @numba.njit(nogil=True, cache=True)
    def _gemm_here(x, w, bias, out, block):
        """out = x @ w.T (+ bias) on the calling thread (a worker's part of a larger job)."""
        _band(x, w, out, 0, w.shape[0], block, bias)


# x @ b for b (K, N) stored row after row (GPT-2's Conv1D weights, a Linear's input gradient
# grad @ w): tiles of _OUTER_ROWS rows of x by _OUTER_VECTORS vectors of b's columns. Each step
# of K loads that stretch of one row of b (contiguous, so b needs no packing either) and
# multiply-adds it into every row's accumulators with that row's x value broadcast. Every
# output is summed over K in order by one FMA chain, whichever tile computes it.
# With bfloat16 operands a step takes two rows of b, interleaved in registers into the pairs
# the dot instruction multiplies, against each row's pair of x values broadcast: still no
# packing, and every output summed in order over K's pairs.
_OUTER_ROWS, _OUTER_VECTORS = 8, 3
# The bytes of one of b's columns a pass walks (a tile's stretch of them stays in L1): 256 rows
# of float32, 512 of bfloat16 (even, so that a pair never straddles two passes).
_OUTER_BYTES = 1024


def _outer_tile(x_rows, vectors):
    """An intrinsic: out[m0 + i, n0 : n0 + vectors * _LANES] = (0 if first else that) +
    sum over k in [k0, k1) of x[m0 + i, k] * b[k, n0 : n0 + vectors * _LANES] (float32, or
    bfloat16 bits as uint16 with k0 and k1 even and x's rows contiguous; k1 > k0), the last
    pass over K (k1 = K) adding bias[n0 : n0 + vectors * _LANES] where bias is not None."""
    @intrinsic
    def tile(typingctx, x, m0, b, n0, k0, k1, out, first, bias):
        signature = types.void(x, m0, b, n0, k0, k1, out, first, bias)
        bfloat16 = x.dtype == types.uint16

        def codegen(context, builder, sig, args):
            x_arr, b_arr, out_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 2, 6))
            bias_at = _bias_at(context, builder, sig, args, 8)
            x_stride, b_stride, out_stride = (_row_stride(builder, a) for a in (x_arr, b_arr, out_arr))
            x_step = _row_stride(builder, x_arr, 1)
            lanes = ir.VectorType(FLOAT, _LANES)
            multiply_add = _step_kind(builder, lanes, bfloat16)[3]
            outs = [builder.gep(out_arr.data, [builder.add(builder.mul(builder.add(args[1], I64(i)), out_stride), args[3])])
                    for i in range(x_rows)]

            def at(row, c, kind=lanes):
                return builder.bitcast(builder.gep(row, [I64(c * _LANES)]), kind.as_pointer())

            zero = ir.Constant(lanes, None)
            start = [builder.select(args[7], zero, builder.load(at(row, c), align=4))
                     for row in outs for c in range(vectors)]
            xs = [builder.gep(x_arr.data, [builder.mul(builder.add(args[1], I64(i)), x_stride)]) for i in range(x_rows)]
            # A step covers `per_step` of K: one row of b in float32, a pair of rows in bfloat16.
            per_step = 2 if bfloat16 else 1
            first_step, end_step = (builder.sdiv(args[k], I64(per_step)) for k in (4, 5))

            function, entry = builder.function, builder.block
            loop, done = function.append_basic_block("step"), function.append_basic_block("done")
            builder.branch(loop)
            builder.position_at_end(loop)
            s = builder.phi(I64)
            s.add_incoming(first_step, entry)
            accs = loop_phis(builder, lanes, x_rows * vectors, start, entry)
            row_k = builder.mul(s, I64(per_step))
            b_row = builder.gep(b_arr.data, [builder.add(builder.mul(row_k, b_stride), args[3])])
            if bfloat16:
                b_values = [_interleaved(builder, b_row, builder.gep(b_row, [b_stride]), c) for c in range(vectors)]
            else:
                b_values = [builder.load(at(b_row, c), align=4) for c in range(vectors)]
            updated = []
            for i in range(x_rows):
                spread = _broadcast_pair(builder, xs[i], row_k) if bfloat16 else _broadcast(
                    builder, builder.load(builder.gep(xs[i], [builder.mul(s, x_step)])), lanes)
                updated += [multiply_add(accs[i * vectors + c], spread, b_values[c]) for c in range(vectors)]
            next_iteration(builder, s, end_step, accs, updated, loop, done)

            builder.position_at_end(done)
            if bias_at is not None:
                last = builder.icmp_signed("==", args[5], cgutils.unpack_tuple(builder, x_arr.shape, 2)[1])
                biases = [builder.select(last, bias_at(builder.add(args[3], I64(c * _LANES)), lanes), zero)
                          for c in range(vectors)]
                updated = [builder.fadd(value, biases[index % vectors]) for index, value in enumerate(updated)]
            for i, row in enumerate(outs):
                for c in range(vectors):
                    builder.store(updated[i * vectors + c], at(row, c), align=4)
            return context.get_dummy_value()
        return signature, codegen
    return tile


def _broadcast(builder, value, kind):
    """A vector of `kind` with `value` in every lane."""
    placed = builder.insert_element(ir.Constant(kind, ir.Undefined), value, I32(0))
    return builder.shuffle_vector(placed, ir.Constant(kind, ir.Undefined),
                                  ir.Constant(ir.VectorType(I32, kind.count), [0] * kind.count))


def _broadcast_pair(builder, row, k):
    """The bfloat16 pair row[k], row[k + 1] in every 32-bit lane, as the dot's operand."""
    pair = builder.load(builder.bitcast(builder.gep(row, [k]), I32.as_pointer()), align=2)
    return builder.bitcast(_broadcast(builder, pair, ir.VectorType(I32, _LANES)), ir.VectorType(_BFloat(), _BF16_STEP))


def _interleaved(builder, row, next_row, c):
    """Columns c * 16 ... c * 16 + 15 of two consecutive rows of bfloat16 b, interleaved into
    the dot's pairs (row's value first, then next_row's, column after column)."""
    half = ir.VectorType(I16, _LANES)
    first, second = (builder.load(builder.bitcast(builder.gep(r, [I64(c * _LANES)]), half.as_pointer()), align=2)
                     for r in (row, next_row))
    order = [t for j in range(_LANES) for t in (j, _LANES + j)]
    pairs = builder.shuffle_vector(first, second, ir.Constant(ir.VectorType(I32, _BF16_STEP), order))
    return builder.bitcast(pairs, ir.VectorType(_BFloat(), _BF16_STEP))


if WIDTH == 16:
    _outer_full, _outer_x, _outer_b, _outer_one = (_outer_tile(_OUTER_ROWS, _OUTER_VECTORS), _outer_tile(_OUTER_ROWS, 1),
                                                   _outer_tile(1, _OUTER_VECTORS), _outer_tile(1, 1))
    # two vectors left of a group (or all of a head's 32 values): each row's broadcast serves both
    _outer_pair = _outer_tile(_OUTER_ROWS, 2)

    @numba.njit(nogil=True, cache=True)
    def _outer_band(x, b, out, rows_lo, rows_hi, lo, hi, bias=None):
        """out[rows_lo:rows_hi, lo:hi] = x[rows_lo:rows_hi] @ b[:, lo:hi] (+ bias[lo:hi]) (lo,
        hi multiples of the vector width): K walked _OUTER_BYTES of a column of b at a time, and
        those rows' columns in groups that stay in L2 while every tile of x's rows passes over
        them."""
        k = x.shape[1]
        steps = _OUTER_BYTES // b.itemsize
        wide = _OUTER_VECTORS * _LANES
        group = max(wide, _BLOCK_BYTES // _OUTER_BYTES // wide * wide)
        for k0 in range(0, k, steps):
            k1 = min(k0 + steps, k)
            first = k0 == 0
            for g0 in range(lo, hi, group):
                g1 = min(g0 + group, hi)
                i = rows_lo
                while i + _OUTER_ROWS <= rows_hi:
                    j = g0
                    while j + wide <= g1:
                        _outer_full(x, i, b, j, k0, k1, out, first, bias)
                        j += wide
                    if j + 2 * _LANES <= g1:
                        _outer_pair(x, i, b, j, k0, k1, out, first, bias)
                        j += 2 * _LANES
                    while j < g1:
                        _outer_x(x, i, b, j, k0, k1, out, first, bias)
                        j += _LANES
                    i += _OUTER_ROWS
                while i < rows_hi:
                    j = g0
                    while j + wide <= g1:
                        _outer_b(x, i, b, j, k0, k1, out, first, bias)
                        j += wide
                    while j < g1:
                        _outer_one(x, i, b, j, k0, k1, out, first, bias)
                        j += _LANES
                    i += 1

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _gemm_nn(x, b, bias, out, parts):
        """out = x @ b (+ bias): each thread a band of the columns where there are enough of
        them, else of the rows."""
        m, n = out.shape
        vectors = n // _LANES
        by_columns = vectors >= 2 * parts
        for part in numba.prange(parts):
            if by_columns:
                lo, hi = vectors * part // parts * _LANES, vectors * (part + 1) // parts * _LANES
                _outer_band(x, b, out, 0, m, lo, hi, bias)
            else:
                rows_lo, rows_hi = m * part // parts, m * (part + 1) // parts
                _outer_band(x, b, out, rows_lo, rows_hi, 0, n, bias)

    @numba.njit(nogil=True, cache=True)
    def _gemm_nn_here(x, b, bias, out):
        """out = x @ b (+ bias) on the calling thread."""
        _outer_band(x, b, out, 0, x.shape[0], 0, b.shape[1], bias)


# float32 x @ w.T for w (N, K) as Linear stores it, with the vector lanes along x's rows: a
# tile multiplies _T_ROWS of w's rows by _T_VECTORS vectors of x's rows, broadcasting each
# w[n, k] and loading x.T[k, m : m + 16] (x.T packed once per product, a small copy beside the
# weight), one FMA per pair into its own accumulator. Where the dot tiles above load a vector of
# each operand per multiply-add pair (4 + 4 loads for 16 FMAs, the weight's from L2), these
# load 3 vectors and 8 broadcast scalars for 24, and need no sum across lanes at the end. On a
# two-core AVX-512 Xeon (Emerald Rapids, full-width FMA units) they ran SmolLM's and GPT-2's
# 128-row products at 240-310 GFLOP/s where the dot tiles reached 137-260 (65 at K = 3072,
# whose four rows of x overflow L1). Every output is one FMA chain over K in order, whichever
# tile, thread or number of rows computes it.
_T_ROWS, _T_VECTORS = 8, 3
# K is walked in equal passes of at most _T_K_PASS, a tile of x's rows against every group of 8
# weight rows of the thread's band in turn. Between passes a tile's 24 accumulators wait in a
# scratch of the thread's as they are (each output one FMA chain over all of K, whatever the
# passes), and only the last pass transposes them into the output, written once: 0.99-1.20x
# the speed of passes that each added their transposed sums into the output (passes of 128,
# whose stretch of a panel stays in L1, ran at 0.77-0.97x; 256 and 1024 no better than 512).
# x.T is packed in panels of _T_PANEL of x's rows, each (K, _T_PANEL) of its own: x.T's whole
# rows, 4 x M bytes apart, fell into the same few L1 sets for a batch of sentences (M = 4096:
# 16 KB apart; 100-115 GFLOP/s).
_T_K_PASS = 512
_T_PANEL = 12 * _LANES
_T_TILES = _T_PANEL // (_T_VECTORS * _LANES)          # tiles across a panel


def _rows_of_columns(builder, columns):
    """Eight <16 x float> vectors (the columns of a 16 x 8 block) -> the block's 16 rows, each
    an <8 x float>: three rounds of two-operand shuffles (pairs, quads, halves of a vector)."""
    def shuffle(a, b, order):
        return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(I32, len(order)), order))

    lanes = _LANES
    pairs = [[shuffle(columns[p], columns[p + 1], [t for j in range(8 * h, 8 * h + 8) for t in (j, lanes + j)])
              for h in range(2)] for p in range(0, 8, 2)]          # pairs[p][h]: rows 8h..8h+7, two columns each
    quads = [[[shuffle(pairs[q][h], pairs[q + 1][h], [t for j in range(4 * r, 4 * r + 4)
                                                       for t in (2 * j, 2 * j + 1, lanes + 2 * j, lanes + 2 * j + 1)])
               for r in range(2)] for h in range(2)] for q in (0, 2)]  # quads[q][h][r]: rows 8h+4r.., four columns
    rows = []
    for h in range(2):
        for r in range(2):
            for u in range(2):
                both = shuffle(quads[0][h][r], quads[1][h][r], [t for j in (2 * u, 2 * u + 1)
                                                                 for t in list(range(4 * j, 4 * j + 4))
                                                                 + list(range(lanes + 4 * j, lanes + 4 * j + 4))])
                rows += [shuffle(both, both, list(range(8))), shuffle(both, both, list(range(8, 16)))]
    return rows


def _transposed_tile(w_rows, vectors):
    """An intrinsic: the sums over k in [k0, k1) of w[n0 + i, k] * xt[k, m0 + t] (i < w_rows,
    8 or 1; t < vectors * 16; k1 > k0; xt a panel of x.T), continuing the accumulators `spill`
    holds (from zero where `first`). Before the end of K they go back to `spill` (float32, at
    least w_rows * vectors * 16); on the last pass (k1 = K) each row m0 + t of out (its rows
    from the panel's first) that exists gets them, + bias[n0 + i] where bias is not None."""
    @intrinsic
    def tile(typingctx, w, n0, xt, m0, k0, k1, out, first, bias, spill):
        signature = types.void(w, n0, xt, m0, k0, k1, out, first, bias, spill)

        def codegen(context, builder, sig, args):
            w_arr, xt_arr, out_arr, spill_arr = (context.make_array(sig.args[k])(context, builder, args[k])
                                                 for k in (0, 2, 6, 9))
            bias_at = _bias_at(context, builder, sig, args, 8)
            w_stride, xt_stride, out_stride = (_row_stride(builder, a) for a in (w_arr, xt_arr, out_arr))
            m_total = cgutils.unpack_tuple(builder, out_arr.shape, 2)[0]
            lanes = ir.VectorType(FLOAT, _LANES)
            count = w_rows * vectors
            multiply_add = _step_kind(builder, lanes, False)[3]
            ws = [builder.gep(w_arr.data, [builder.mul(builder.add(args[1], I64(i)), w_stride)]) for i in range(w_rows)]
            xt_columns = builder.gep(xt_arr.data, [args[3]])
            kept = [builder.bitcast(builder.gep(spill_arr.data, [I64(j * _LANES)]), lanes.as_pointer())
                    for j in range(count)]
            zero_lanes = ir.Constant(lanes, None)
            start = [builder.select(args[7], zero_lanes, builder.load(at, align=4)) for at in kept]

            function, entry = builder.function, builder.block
            loop, done = function.append_basic_block("step"), function.append_basic_block("done")
            builder.branch(loop)
            builder.position_at_end(loop)
            s = builder.phi(I64)
            s.add_incoming(args[4], entry)
            accs = loop_phis(builder, lanes, count, start, entry)
            xt_row = builder.gep(xt_columns, [builder.mul(s, xt_stride)])
            x_values = [builder.load(builder.bitcast(builder.gep(xt_row, [I64(c * _LANES)]), lanes.as_pointer()),
                                     align=4) for c in range(vectors)]
            updated = [None] * count
            for i in range(w_rows):
                spread = _broadcast(builder, builder.load(builder.gep(ws[i], [s])), lanes)
                for c in range(vectors):
                    updated[i * vectors + c] = multiply_add(accs[i * vectors + c], spread, x_values[c])
            following = builder.add(s, I64(1))
            s.add_incoming(following, loop)
            for acc, value in zip(accs, updated):
                acc.add_incoming(value, loop)
            builder.cbranch(builder.icmp_signed("<", following, args[5]), loop, done)

            builder.position_at_end(done)
            last = builder.icmp_signed("==", args[5], cgutils.unpack_tuple(builder, w_arr.shape, 2)[1])
            with builder.if_else(last) as (finished, unfinished):
                with unfinished:
                    for value, at in zip(updated, kept):
                        builder.store(value, at, align=4)
                with finished:
                    kind = ir.VectorType(FLOAT, w_rows) if w_rows > 1 else FLOAT
                    added = None if bias_at is None else bias_at(args[1], kind)
                    for c in range(vectors):
                        if w_rows > 1:
                            rows = _rows_of_columns(builder, [updated[i * vectors + c] for i in range(w_rows)])
                        else:
                            rows = [builder.extract_element(updated[c], I32(t)) for t in range(_LANES)]
                        for t, row in enumerate(rows):
                            m = builder.add(args[3], I64(c * _LANES + t))
                            with builder.if_then(builder.icmp_signed("<", m, m_total), likely=True):
                                at = builder.gep(out_arr.data, [builder.add(builder.mul(m, out_stride), args[1])])
                                value = row if added is None else builder.fadd(row, added)
                                builder.store(value, builder.bitcast(at, kind.as_pointer()), align=4)
            return context.get_dummy_value()
        return signature, codegen
    return tile


@intrinsic
def _transposed_block(typingctx, x, i0, k0, xt, j0):
    """xt[k0 + t, j0 : j0 + 8] = x[i0 : i0 + 8, k0 + t] for t < 16 (float32; those rows and
    columns exist)."""
    def codegen(context, builder, sig, args):
        x_arr, xt_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 3))
        x_stride, xt_stride = (_row_stride(builder, a) for a in (x_arr, xt_arr))
        lanes, row = ir.VectorType(FLOAT, _LANES), ir.VectorType(FLOAT, _T_ROWS)
        columns = [builder.load(builder.bitcast(builder.gep(x_arr.data, [builder.add(builder.mul(
            builder.add(args[1], I64(r)), x_stride), args[2])]), lanes.as_pointer()), align=4) for r in range(_T_ROWS)]
        for t, values in enumerate(_rows_of_columns(builder, columns)):
            at = builder.gep(xt_arr.data, [builder.add(builder.mul(builder.add(args[2], I64(t)), xt_stride), args[4])])
            builder.store(values, builder.bitcast(at, row.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.void(x, i0, k0, xt, j0), codegen


if WIDTH == 16:
    _t_tiles = {(rows, vectors): _transposed_tile(rows, vectors) for rows in (_T_ROWS, 1) for vectors in (3, 2, 1)}
    _t_full, _t_pair, _t_one = (_t_tiles[_T_ROWS, v] for v in (3, 2, 1))
    _t_row_full, _t_row_pair, _t_row_one = (_t_tiles[1, v] for v in (3, 2, 1))

    @numba.njit(nogil=True, cache=True)
    def _pack_transposed(x, xt, lo, hi):
        """Columns lo:hi of x.T into xt's panels: xt[p, k, j] = x[p * width + j, k] for k in
        [lo, hi), zero past x's rows (the lanes a tile computes beyond them, never stored);
        blocks of 8 rows by 16 columns transposed in registers."""
        m, width = x.shape[0], xt.shape[2]
        for p in range(xt.shape[0]):        # a panel's rows of x stay in L2 while it is filled
            panel, first = xt[p], p * width
            rows = max(0, min(width, m - first))
            for k0 in range(lo, hi, _LANES):
                k1 = min(k0 + _LANES, hi)
                j = 0
                if k1 - k0 == _LANES:
                    while j + _T_ROWS <= rows:
                        _transposed_block(x, first + j, k0, panel, j)
                        j += _T_ROWS
                for r in range(j, rows):
                    for k in range(k0, k1):
                        panel[k, r] = x[first + r, k]
                for r in range(rows, width):
                    for k in range(k0, k1):
                        panel[k, r] = 0.0

    @numba.njit(nogil=True, cache=True)
    def _transposed_band(xt, w, out, lo, hi, bias=None):
        """out[:, lo:hi] = x @ w[lo:hi].T (+ bias[lo:hi]) from x.T's panels xt (their width a
        multiple of 16): a panel at a time, K in passes of at most _T_K_PASS, each of the
        panel's tiles of x's rows against every group of 8 of w's rows (then each row left)."""
        k, width = w.shape[1], xt.shape[2]
        wide = _T_VECTORS * _LANES
        spill = np.empty(((hi - lo) // _T_ROWS + (hi - lo) % _T_ROWS, _T_TILES, _T_ROWS * wide), np.float32)
        passes = (k + _T_K_PASS - 1) // _T_K_PASS
        for c in range(xt.shape[0]):
            panel, rows = xt[c], out[c * width:]
            for p in range(passes):
                k0, k1 = k * p // passes, k * (p + 1) // passes
                first = p == 0
                m, t = 0, 0
                while m < width:
                    vectors = min(_T_VECTORS, (width - m) // _LANES)
                    n, g = lo, 0
                    while n < hi:
                        eight = n + _T_ROWS <= hi        # else the rows left over, one at a time
                        kept = spill[g, t]
                        if eight and vectors == 3:
                            _t_full(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        elif eight and vectors == 2:
                            _t_pair(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        elif eight:
                            _t_one(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        elif vectors == 3:
                            _t_row_full(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        elif vectors == 2:
                            _t_row_pair(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        else:
                            _t_row_one(w, n, panel, m, k0, k1, rows, first, bias, kept)
                        n += _T_ROWS if eight else 1
                        g += 1
                    m += vectors * _LANES
                    t += 1

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _pack_transposed_parts(x, xt, parts):
        k = x.shape[1]
        for part in numba.prange(parts):
            _pack_transposed(x, xt, k * part // parts, k * (part + 1) // parts)

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _gemm_t(xt, w, bias, out, parts):
        """out = x @ w.T (+ bias) from x.T's panels xt, each thread a band of w's rows (whole tiles)."""
        n = w.shape[0]
        groups = (n + _T_ROWS - 1) // _T_ROWS
        for part in numba.prange(parts):
            lo, hi = min(n, groups * part // parts * _T_ROWS), min(n, groups * (part + 1) // parts * _T_ROWS)
            _transposed_band(xt, w, out, lo, hi, bias)

    @numba.njit(nogil=True, cache=True)
    def _gemm_t_here(x, xt, w, bias, out):
        """out = x @ w.T (+ bias) on the calling thread, x.T packed into xt (_packed_shape(x))."""
        _pack_transposed(x, xt, 0, x.shape[1])
        _transposed_band(xt, w, out, 0, w.shape[0], bias)


def _packed_shape(x):
    """The shape of x.T's panels as the transposed tiles read them: (panels, K, width), x's rows
    padded to a multiple of 16 and cut in as few panels of at most _T_PANEL as hold them, all
    of one width, a multiple of 16, as even as that allows: the tiles compute every lane of a
    panel, and 256 rows in panels of 192 computed 384 (a product of 256 x 576 x 576 ran at 109
    GFLOP/s, where 512 x 1536 x 384 ran at 253)."""
    blocks = -(-x.shape[0] // _LANES)
    panels = -(-blocks * _LANES // _T_PANEL)
    return panels, x.shape[1], -(-blocks // panels) * _LANES


def _has_bf16_dot():
    return WIDTH == 16 and bool(llvm_binding.get_host_cpu_features().get("avx512bf16"))


def _probe_float32():
    """Every kind of tile, on the pool and on the calling thread, against NumPy's product."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((19, 2 * _LANES + 3), dtype=np.float32)
    w = rng.standard_normal((_T_ROWS + 3, 2 * _LANES + 3), dtype=np.float32)
    out, here = np.empty((19, w.shape[0]), np.float32), np.empty((19, w.shape[0]), np.float32)
    xt = np.empty(_packed_shape(x), np.float32)
    _pack_transposed_parts(x, xt, parts())
    _gemm_t(xt, w, None, out, parts())
    _gemm_t_here(x, np.empty(_packed_shape(x), np.float32), w, None, here)
    b = rng.standard_normal((2 * _OUTER_BYTES // 4 + 3, 6 * _LANES), dtype=np.float32)
    x2 = rng.standard_normal((_OUTER_ROWS + 1, b.shape[0]), dtype=np.float32)
    out2, here2 = np.empty((x2.shape[0], b.shape[1]), np.float32), np.empty((x2.shape[0], b.shape[1]), np.float32)
    _gemm_nn(x2, b, None, out2, parts())
    _gemm_nn_here(x2, b, None, here2)
    return (np.allclose(out, x @ w.T, rtol=1e-5, atol=1e-5) and np.array_equal(out, here)
            and np.allclose(out2, x2 @ b, rtol=1e-4, atol=1e-4) and np.array_equal(out2, here2))


def _probe_bfloat16():
    """Every kind of tile against the float64 product of the same bfloat16 values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 2 * _BF16_STEP), dtype=np.float32)
    w = rng.standard_normal((7, 2 * _BF16_STEP), dtype=np.float32)
    x_bits, w_bits = (_to_bf16_bits(v) for v in (x, w))
    out = np.empty((6, 7), np.float32)
    _gemm(x_bits, w_bits, None, out, 8, parts())
    expected = _widen(x_bits).astype(np.float64) @ _widen(w_bits).astype(np.float64).T
    b = _to_bf16_bits(rng.standard_normal((_OUTER_BYTES + 6, 6 * _LANES), dtype=np.float32))
    x2 = _to_bf16_bits(rng.standard_normal((_OUTER_ROWS + 1, b.shape[0]), dtype=np.float32))
    out2, here2 = np.empty((x2.shape[0], b.shape[1]), np.float32), np.empty((x2.shape[0], b.shape[1]), np.float32)
    _gemm_nn(x2, b, None, out2, parts())
    _gemm_nn_here(x2, b, None, here2)
    expected2 = _widen(x2).astype(np.float64) @ _widen(b).astype(np.float64)
    return (np.allclose(out, expected, rtol=1e-5, atol=1e-5) and np.allclose(out2, expected2, rtol=1e-4, atol=1e-4)
            and np.array_equal(out2, here2))


def _to_bf16_bits(values):
    """float32 -> bfloat16 bits (truncated: only the check above uses it)."""
    return (values.view(np.uint32) >> 16).astype(np.uint16)


def _widen(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# Whether the CPU has the instructions and the kernels compute here, per operand dtype.
_usable = {"float32": checked_once(WIDTH == 16, _probe_float32),
           "bfloat16": checked_once(_has_bf16_dot(), _probe_bfloat16)}


def usable(dtype):
    """Whether products of this dtype ("float32" or "bfloat16") run here."""
    return dtype in _usable and _usable[dtype]()


def _block_rows(itemsize, k):
    """The weight rows a thread walks at a time (`_band`'s block): as many as fill _BLOCK_BYTES."""
    return max(_W_ROWS, _BLOCK_BYTES // (itemsize * k) // _W_ROWS * _W_ROWS)


def gemm_nt(x, w, bias, out, threads=True):
    """out (M, N) float32 = x (M, K) @ w.T (+ bias, float32 (N,)) for x and w (N, K) both
    float32 (the transposed tiles, any K) or both bfloat16 (K a multiple of 32), split over
    numba's pool (threads=True) or on the calling thread; False, with nothing written, where the
    kernels cannot serve: not this CPU, K empty or not a multiple of the step, operands not
    C-contiguous."""
    dtype = x.dtype.name
    if (w.dtype != x.dtype or not usable(dtype) or x.shape[1] != w.shape[1] or x.shape[1] == 0
            or (dtype == "bfloat16" and x.shape[1] % _BF16_STEP)
            or not (x.flags.c_contiguous and w.flags.c_contiguous and out.flags.c_contiguous)):
        return False
    bias = None if bias is None else np.ascontiguousarray(bias, np.float32)     # the tiles read it in place
    if dtype == "float32":
        xt = np.empty(_packed_shape(x), np.float32)
        if not threads:
            _gemm_t_here(x, xt, w, bias, out)
            return True
        with _launch:
            _pack_transposed_parts(x, xt, parts())
            _gemm_t(xt, w, bias, out, parts())
        return True
    x, w = x.view(np.uint16), w.view(np.uint16)
    block = _block_rows(x.itemsize, x.shape[1])
    if not threads:
        _gemm_here(x, w, bias, out, block)
        return True
    with _launch:
        _gemm(x, w, bias, out, block, parts())
    return True


def product_here(weight, transposed):
    """The float32 product by this weight on the calling thread, as gemm_nt (`transposed`: the
    weight as Linear stores it, (N, K)) or gemm_nn (row-major (K, N)) computes it there, with
    the weight's checks made once: a function (x, bias, out) -> bool (False, nothing written,
    for an x they would decline), or None where they decline the weight. A replay multiplies
    a tiny model's weights every call, where the checks cost more than the product."""
    if not usable("float32") or weight.dtype != np.float32 or not weight.flags.c_contiguous or 0 in weight.shape:
        return None
    k = weight.shape[1] if transposed else weight.shape[0]
    if not transposed and weight.shape[1] % _LANES:
        return None

    def product(x, bias, out):
        if x.dtype != np.float32 or x.shape[1] != k or not x.flags.c_contiguous:
            return False
        if transposed:
            _gemm_t_here(x, np.empty(_packed_shape(x), np.float32), weight, bias, out)
        else:
            _gemm_nn_here(x, weight, bias, out)
        return True
    return product


def gemm_nn(x, b, bias, out, threads=True):
    """out (M, N) float32 = x (M, K) @ b (K, N) (+ bias, float32 (N,)) for x and b both float32
    or both bfloat16 (K even), all C-contiguous, N a multiple of the vector width, split over
    numba's pool (threads=True) or on the calling thread; False, with nothing written, where
    the kernel cannot serve."""
    dtype = x.dtype.name
    if (b.dtype != x.dtype or not usable(dtype) or x.shape[1] != b.shape[0] or b.shape[1] % _LANES
            or x.shape[1] == 0 or (dtype == "bfloat16" and x.shape[1] % 2)
            or not (x.flags.c_contiguous and b.flags.c_contiguous and out.flags.c_contiguous)):
        return False
    if dtype == "bfloat16":
        x, b = x.view(np.uint16), b.view(np.uint16)
    bias = None if bias is None else np.ascontiguousarray(bias, np.float32)
    if not threads:
        _gemm_nn_here(x, b, bias, out)
        return True
    with _launch:
        _gemm_nn(x, b, bias, out, parts())
    return True
