# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""A few rows of x against a 4-bit weight through a 16-entry table held in vector registers
(imported only with numba, used where the CPU has AVX-512 or AVX2).

Every 4-bit format here reads a nibble c of group g as table_g[c]: scale * c + offset
(affine), scale * (c - 8) (symmetric) or scale * codebook[c] (NF4/FP4). The sixteen values
of a group's table fit one AVX-512 register (two AVX2 ones), and one permute instruction
looks up sixteen nibbles at once, so each weight costs a byte split, a lookup and a fused
multiply-add, with no conversion of the integers and no per-group reduction: a compiled
loop cannot do this (a table lookup is a gather), hence the loop written here in LLVM IR
through numba's intrinsic API. The table values are the dequantized weights themselves,
computed as `dequantize_weight` computes them.

The inner loop reads, per group, its bytes in chunks of one vector width (16 bytes, or 8
with AVX2), the low nibbles against the group's first half of x and the high ones against
its second half (cpu_jit_quant's layout). One row of x (decoding) takes four weight rows per
pass, a quarter of the thread's band apart, so that each load of x serves four of them and
four sequential streams are in flight, where this machine reads faster so
(cpu_jit_parallel.side_by_side measures it; else one row at a time); several rows of x (a
batch, beams, a draft to verify) take one weight row at a time, whose lookups serve up to
eight rows of x. Each product's two halves have their own accumulators (the additions of one
accumulator wait on each other).
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import FLOAT as _FLOAT, I8 as _I8, I32 as _I32, I64 as _I64
from .cpu_jit_ir import WIDTH, checked_once, fma_function, lane_sums, loop_phis, next_iteration, prefetch, splat
from .cpu_jit_parallel import _NO_BIAS, _launch, add_bias, parts, side_by_side

_F32 = np.float32
_ROWS = 4           # weight rows per pass of one row of x
# Whether one row of x converts an affine or symmetric weight's nibbles (_converted_groups)
# instead of looking values up: with AVX2, whose lookups take two permutes and a select
# (AVX-512 looks up sixteen values in one permute).
_CONVERTS = WIDTH == 8
# Each group asks the CPU to fetch the bytes of its weight rows this far ahead: a decoding
# step's weights stream from memory, and the lookups leave too few loads in flight for the
# hardware prefetcher to keep up (SmolLM2-135M's 30 layers of int4 products on a 2-core EPYC:
# 3.4 -> 2.9 ms, the best of 60 steps; 2 to 8 KiB ahead all gave the same).
_PREFETCH_BYTES = 2048


class _Lookup:
    """The table lookups of one group at width W: one permute of the whole table with AVX-512;
    with AVX2 a permute of each half of it, the high half chosen where the nibble is >= 8."""

    def __init__(self, builder, width):
        self.builder, self.width = builder, width
        self.vf, self.vi = ir.VectorType(_FLOAT, width), ir.VectorType(_I32, width)
        module = builder.module
        name = "llvm.x86.avx512.permvar.sf.512" if width == 16 else "llvm.x86.avx2.permps"
        self.permute = cgutils.get_or_insert_function(module, ir.FunctionType(self.vf, [self.vf, self.vi]), name)

    def table(self, bases, scale, offset):
        """The group's table, one vector (AVX-512) or two halves (AVX2) of scale * base
        (+ offset, when the format has offsets)."""
        b = self.builder
        scaled = [b.fmul(base, splat(b, scale, self.width)) for base in bases]
        return scaled if offset is None else [b.fadd(value, splat(b, offset, self.width)) for value in scaled]

    def __call__(self, table, codes):
        b = self.builder
        if self.width == 16:
            return b.call(self.permute, [table[0], codes])
        low, high = (b.call(self.permute, [half, codes]) for half in table)
        return b.select(b.icmp_unsigned(">", codes, ir.Constant(self.vi, [7] * 8)), high, low)


def _open_group_loop(builder, vf, count, q_rows, x_rows, half):
    """Open _rows_dot's loop over a row's groups: its blocks (group, chunk, group_end, done), the
    group counter and `count` vector accumulators carried from group to group (entering as
    zero), each weight row's bytes of the group (fetched ahead) and each x row's two halves of
    it. The builder is left in the group block, for the caller's per-group work."""
    function, entry = builder.function, builder.block
    blocks = [function.append_basic_block(name) for name in ("group", "chunk", "group_end", "done")]
    builder.branch(blocks[0])
    builder.position_at_end(blocks[0])
    g = builder.phi(_I64)
    g.add_incoming(_I64(0), entry)
    carried = loop_phis(builder, vf, count, ir.Constant(vf, None), entry)
    q_groups = [builder.gep(q_row, [builder.mul(g, half)]) for q_row in q_rows]
    for q_group in q_groups:
        prefetch(builder, q_group, _PREFETCH_BYTES)
    x_lows = [builder.gep(x_row, [builder.mul(g, builder.add(half, half))]) for x_row in x_rows]
    x_highs = [builder.gep(x_low, [half]) for x_low in x_lows]
    return blocks, g, carried, q_groups, x_lows, x_highs


def _converted_groups(builder, loads, width, fma):
    """_rows_dot's loop for one row of x against weight rows of an affine or symmetric format,
    the nibbles converted instead of looked up: each group sums c x over its weights (the
    nibble c itself, an exact conversion), then adds scale times that sum, and offset (affine)
    or -8 scale (symmetric) times the group's sum of x, to the row's total. The group's sums of
    x come as lane sums made once per launch (_table), not summed again beside every pass of
    weight rows (a 2-core Zen 2 EPYC, SmolLM2-135M's 30 layers of products: 0-7% faster
    affine, 13-15% symmetric, which no longer subtracts 8 from every vector). Two fewer
    operations per vector than computing each weight's value, and no table registers. With
    AVX2 a lookup is two permutes and a select, and four rows' tables spill from the
    registers: on a 2-core AVX2 EPYC, 4-bit products read 2.3-4 GB/s by lookups, 3.7-7
    computing each value, 5.4-9.7 so. The vectors of row totals are returned."""
    q_rows, s_rows, o_rows, x_row, x_sums, half, groups, chunks = loads
    rows, affine = len(q_rows), o_rows is not None
    vf, vi, vb = ir.VectorType(_FLOAT, width), ir.VectorType(_I32, width), ir.VectorType(_I8, width)
    zero = ir.Constant(vf, None)
    low_mask, shift = ir.Constant(vi, [15] * width), ir.Constant(vi, [4] * width)

    blocks, g, totals, q_groups, (x_low,), (x_high,) = _open_group_loop(builder, vf, rows, q_rows, (x_row,), half)
    group_loop, chunk_loop, group_end, done = blocks
    builder.branch(chunk_loop)

    builder.position_at_end(chunk_loop)
    c = builder.phi(_I64)
    c.add_incoming(_I64(0), group_loop)
    # per weight row, the group's sum of c x (one accumulator: registers for more spill with AVX2)
    accs = loop_phis(builder, vf, rows, zero, group_loop)
    at = builder.mul(c, _I64(width))
    xs = [builder.load(builder.bitcast(builder.gep(ptr, [at]), vf.as_pointer()), align=4) for ptr in (x_low, x_high)]
    updated = []
    for w in range(rows):
        codes = builder.zext(builder.load(builder.bitcast(builder.gep(q_groups[w], [at]), vb.as_pointer()), align=1), vi)
        acc = accs[w]
        for h, nibbles in enumerate((builder.and_(codes, low_mask), builder.lshr(codes, shift))):
            values = builder.sitofp(nibbles, vf)
            acc = builder.call(fma, [values, xs[h], acc])
        updated.append(acc)
    next_iteration(builder, c, chunks, accs, updated, chunk_loop, group_end)

    builder.position_at_end(group_end)
    x_sum = builder.load(builder.bitcast(builder.gep(x_sums, [builder.mul(g, _I64(width))]), vf.as_pointer()),
                         align=4)
    following = []
    for w in range(rows):
        sums = updated[w] if affine else builder.call(fma, [ir.Constant(vf, [-8.0] * width), x_sum, updated[w]])
        total = builder.call(fma, [splat(builder, builder.load(builder.gep(s_rows[w], [g])), width), sums,
                                   totals[w]])
        if affine:
            total = builder.call(fma, [splat(builder, builder.load(builder.gep(o_rows[w], [g])), width), x_sum, total])
        following.append(total)
    next_iteration(builder, g, groups, totals, following, group_loop, done)

    builder.position_at_end(done)
    return following


def _rows_dot(rows, xrows, width, convert=False):
    """An intrinsic: the dot products of x's rows r .. r + xrows - 1 with weight rows i, i +
    step, ..., i + (rows - 1) step, as a tuple (weight row by weight row). `offsets` None (a
    format without them) compiles a loop that neither reads nor adds them; `convert` (formats
    without a codebook, one row of x) converts the nibbles instead of looking values up:
    _converted_groups. `table` is what each group's table scales (_table_base), or, converting,
    x's lane sums over each group (_table)."""
    @intrinsic
    def rows_dot(typingctx, q, i, x, r, scales, offsets, table, step):
        signature = types.UniTuple(types.float32, rows * xrows)(q, i, x, r, scales, offsets, table, step)

        def codegen(context, builder, sig, args):
            q_arr, x_arr, s_arr, table_arr = (context.make_array(sig.args[k])(context, builder, args[k])
                                             for k in (0, 2, 4, 6))
            affine = not isinstance(sig.args[5], types.NoneType)
            o_arr = context.make_array(sig.args[5])(context, builder, args[5]) if affine else None
            row_bytes = cgutils.unpack_tuple(builder, q_arr.shape, 2)[1]
            x_width = cgutils.unpack_tuple(builder, x_arr.shape, 2)[1]
            groups = cgutils.unpack_tuple(builder, s_arr.shape, 2)[1]
            half = builder.sdiv(row_bytes, groups)           # bytes of a group = half its weights
            chunks = builder.sdiv(half, _I64(width))
            look = _Lookup(builder, width)
            vf, vi, vb = look.vf, look.vi, ir.VectorType(_I8, width)
            fma = fma_function(builder, width)
            row_index = [builder.add(args[1], builder.mul(args[7], _I64(w))) for w in range(rows)]
            q_rows = [builder.gep(q_arr.data, [builder.mul(w, row_bytes)]) for w in row_index]
            s_rows = [builder.gep(s_arr.data, [builder.mul(w, groups)]) for w in row_index]
            o_rows = [builder.gep(o_arr.data, [builder.mul(w, groups)]) for w in row_index] if affine else None
            x_rows = [builder.gep(x_arr.data, [builder.mul(builder.add(args[3], _I64(t)), x_width)])
                      for t in range(xrows)]
            if convert:
                loads = (q_rows, s_rows, o_rows, x_rows[0], table_arr.data, half, groups, chunks)
                totals = _converted_groups(builder, loads, width, fma)
                return context.make_tuple(builder, sig.return_type, lane_sums(builder, totals, width))
            bases = [builder.load(builder.bitcast(builder.gep(table_arr.data, [_I64(k)]), vf.as_pointer()), align=4)
                     for k in range(0, 16, width)]
            low_mask, shift = ir.Constant(vi, [15] * width), ir.Constant(vi, [4] * width)
            n_accs = 2 * rows * xrows     # accumulator 2 (w xrows + t) + h: weight row w, x row t, half h

            blocks, g, group_accs, q_groups, x_lows, x_highs = _open_group_loop(builder, vf, n_accs, q_rows, x_rows,
                                                                                half)
            group_loop, chunk_loop, group_end, done = blocks
            tables = []
            for w in range(rows):
                offset = builder.load(builder.gep(o_rows[w], [g])) if affine else None
                tables.append(look.table(bases, builder.load(builder.gep(s_rows[w], [g])), offset))
            builder.branch(chunk_loop)

            builder.position_at_end(chunk_loop)
            c = builder.phi(_I64)
            c.add_incoming(_I64(0), group_loop)
            accs = loop_phis(builder, vf, n_accs, group_accs, group_loop)
            at = builder.mul(c, _I64(width))
            xs = [[builder.load(builder.bitcast(builder.gep(half_ptr, [at]), vf.as_pointer()), align=4)
                   for half_ptr in (x_lows[t], x_highs[t])] for t in range(xrows)]
            updated = [None] * n_accs
            for w in range(rows):
                codes = builder.zext(builder.load(builder.bitcast(builder.gep(q_groups[w], [at]), vb.as_pointer()),
                                                  align=1), vi)
                values = (look(tables[w], builder.and_(codes, low_mask)), look(tables[w], builder.lshr(codes, shift)))
                for t in range(xrows):
                    for h in range(2):
                        k = 2 * (w * xrows + t) + h
                        updated[k] = builder.call(fma, [values[h], xs[t][h], accs[k]])
            next_iteration(builder, c, chunks, accs, updated, chunk_loop, group_end)

            builder.position_at_end(group_end)
            next_iteration(builder, g, groups, group_accs, updated, group_loop, done)

            builder.position_at_end(done)
            totals = lane_sums(builder, [builder.fadd(updated[k], updated[k + 1]) for k in range(0, n_accs, 2)], width)
            return context.make_tuple(builder, sig.return_type, totals)
        return signature, codegen
    return rows_dot


if WIDTH is not None:
    # one x row: four weight rows per pass share each load of x; several x rows: one weight
    # row's lookups serve up to eight x rows (the accumulators fill the registers)
    _dot_four, _dot_one = _rows_dot(_ROWS, 1, WIDTH), _rows_dot(1, 1, WIDTH)
    _convert_four, _convert_one = _rows_dot(_ROWS, 1, WIDTH, True), _rows_dot(1, 1, WIDTH, True)
    _dot_x8, _dot_x4, _dot_x2 = (_rows_dot(1, xrows, WIDTH) for xrows in (8, 4, 2))

    @numba.njit(nogil=True, cache=True)
    def _band(x, q, scales, offsets, table, out, lo, hi, side_by_side, convert):
        """out[:, lo:hi] = x @ w[lo:hi].T for the 4-bit weight (q, scales, offsets): one
        thread's band of output features; one row of x converts the nibbles instead of looking
        values up where `convert` (see _CONVERTS). `table` as _table makes it."""
        m = x.shape[0]
        i = lo
        if m == 1 and side_by_side:
            quarter = (hi - lo) // _ROWS
            for s in range(lo, lo + quarter):
                if convert:
                    values = _convert_four(q, s, x, 0, scales, offsets, table, quarter)
                else:
                    values = _dot_four(q, s, x, 0, scales, offsets, table, quarter)
                out[0, s], out[0, s + quarter], out[0, s + 2 * quarter], out[0, s + 3 * quarter] = values
            i = lo + _ROWS * quarter
        while m == 1 and convert and i < hi:
            out[0, i] = _convert_one(q, i, x, 0, scales, offsets, table, 1)[0]
            i += 1
        while i < hi:
            r = 0
            while r + 8 <= m:
                values = _dot_x8(q, i, x, r, scales, offsets, table, 1)
                for t in range(8):
                    out[r + t, i] = values[t]
                r += 8
            if r + 4 <= m:
                values4 = _dot_x4(q, i, x, r, scales, offsets, table, 1)
                for t in range(4):
                    out[r + t, i] = values4[t]
                r += 4
            if r + 2 <= m:
                out[r, i], out[r + 1, i] = _dot_x2(q, i, x, r, scales, offsets, table, 1)
                r += 2
            if r < m:
                out[r, i] = _dot_one(q, i, x, r, scales, offsets, table, 1)[0]
            i += 1

    @numba.njit(nogil=True, cache=True)
    def _table(x, groups, base, convert):
        """The `table` _rows_dot reads: for one row of x converting the nibbles, the lane sums
        of x over each of the `groups` groups, (groups, WIDTH) float32: lane j of group g sums
        x's elements j, j + WIDTH, ... of the group's first half, those of its second half, and
        then the two (the vectors _converted_groups loads x in, so the sums are what a sum
        beside its loop would give); else the lookups' `base`."""
        if not convert or x.shape[0] != 1:
            return base
        half = x.shape[1] // groups // 2
        sums = np.empty(groups * WIDTH, np.float32)
        for g in range(groups):
            low, high = x[0, 2 * g * half:(2 * g + 1) * half], x[0, (2 * g + 1) * half:(2 * g + 2) * half]
            for lane in range(WIDTH):
                low_sum = high_sum = np.float32(0.0)
                for c in range(half // WIDTH):
                    low_sum += low[c * WIDTH + lane]
                    high_sum += high[c * WIDTH + lane]
                sums[g * WIDTH + lane] = low_sum + high_sum
        return sums

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _rows_lut4(x, q, scales, offsets, base, bias, out, parts, side_by_side, convert):
        """out = x @ w.T (+ bias), the output features split in `parts` bands, one per thread."""
        n = q.shape[0]
        table = _table(x, scales.shape[1], base, convert)
        for part in numba.prange(parts):
            lo, hi = n * part // parts, n * (part + 1) // parts
            _band(x, q, scales, offsets, table, out, lo, hi, side_by_side, convert)
            if bias is not None:
                add_bias(out, bias, lo, hi)

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _rows_lut4_many(x, qs, scales, offsets, base, biases, outs, parts, side_by_side, convert):
        """_rows_lut4 for each weight of the tuples (one format), in one launch: each thread
        takes its band of every weight, the same band as alone, so each output is bitwise the
        same as its own launch's. Converting, every weight's groups are of one size (plan)."""
        table = _table(x, scales[0].shape[1], base, convert)
        for part in numba.prange(parts):
            for t in range(len(qs)):
                n = qs[t].shape[0]
                lo, hi = n * part // parts, n * (part + 1) // parts
                _band(x, qs[t], scales[t], offsets[t], table, outs[t], lo, hi, side_by_side, convert)
                if biases[t].shape[0] > 0:
                    add_bias(outs[t], biases[t], lo, hi)

_IOTA = np.arange(16, dtype=_F32)
_BASES = {"affine": _IOTA, "symmetric": _IOTA - _F32(8.0)}


def _probe():
    """A small symmetric weight against the plain sum of its dequantized values."""
    rng = np.random.default_rng(0)
    q = rng.integers(0, 256, (6, 2 * WIDTH), dtype=np.uint8)
    scales, x = rng.random((6, 2), dtype=_F32), rng.random((1, 4 * WIDTH), dtype=_F32)
    out = np.empty((1, 6), _F32)
    _rows_lut4(x, q, scales, None, _BASES["symmetric"], None, out, parts(), True, False)
    half = q.reshape(6, 2, WIDTH)
    codes = np.concatenate([half & 15, half >> 4], axis=2).astype(_F32) - _F32(8.0)
    expected = ((codes * scales[:, :, None]).reshape(6, -1) @ x[0].astype(np.float64))
    return np.allclose(out[0], expected, rtol=1e-5, atol=1e-5)


def _probe_rows(w, mode):
    """side_by_side's measure: one row against the probe's weight as symmetric 4-bit bytes in
    groups of 64."""
    q = w.view(np.uint8)
    scales = np.ones((q.shape[0], q.shape[1] // 32), _F32)
    _rows_lut4(np.ones((1, 2 * q.shape[1]), _F32), q, scales, None, _BASES["symmetric"], None,
               np.empty((1, q.shape[0]), _F32), parts(), mode, _CONVERTS)


# Whether the kernel compiles and computes here (a CPU or LLVM without the permute
# instruction fails to compile it).
usable = checked_once(WIDTH is not None, _probe)


def _serves(qs, scales, offsets):
    """Whether the kernel reads these weights: AVX-512/AVX2 here, C-contiguous arrays, groups of
    a whole number of vector widths of bytes."""
    if not usable():
        return False
    for q, s, o in zip(qs, scales, offsets):
        groups = s.shape[1]
        if q.shape[1] % groups or (q.shape[1] // groups) % WIDTH or not (
                q.flags.c_contiguous and s.flags.c_contiguous and (o is None or o.flags.c_contiguous)):
            return False
    return True


def _table_base(offsets, codebook):
    """What each group's table scales (see _Lookup): the codebook, or the nibbles themselves."""
    if codebook is not None:
        return np.ascontiguousarray(codebook, dtype=_F32)
    return _BASES["affine" if offsets is not None else "symmetric"]


def plan(qs, scales, offsets, codebook, biases):
    """The launch of the kernel for these 4-bit weights of one format (`offsets` None or one
    per weight, one `codebook` or None, each bias an array or None), checked and its argument
    tuples built once: a function of (x, outs), x (m, K) C-contiguous float32 and outs one
    C-contiguous float32 (m, N_t) array per weight, writing x @ w_t.T (+ biases[t]) into outs
    and returning them. None where the kernel cannot serve these weights (no AVX-512/AVX2, a
    group of fewer than 2 * WIDTH weights, non-contiguous arrays). Several weights run in one
    launch, each thread its band of every weight, the same band as alone, so each output is
    bitwise the same as its own launch's."""
    offsets = (None,) * len(qs) if offsets is None else tuple(offsets)
    if not _serves(qs, scales, offsets):
        return None
    base = _table_base(offsets[0], codebook)
    four = side_by_side("int4 rows", _probe_rows)
    convert = _CONVERTS and codebook is None
    if convert and len({s.shape[1] for s in scales}) > 1:     # one launch each: x's group sums differ
        launches = [plan((q,), (s,), (o,), codebook, (b,)) for q, s, o, b in zip(qs, scales, offsets, biases)]

        def launch_each(x, outs):
            for launch, out in zip(launches, outs):
                launch(x, (out,))
            return outs
        return launch_each
    if len(qs) == 1:
        q, s, o, bias = qs[0], scales[0], offsets[0], biases[0]

        def launch_one(x, outs):
            with _launch:
                _rows_lut4(x, q, s, o, base, bias, outs[0], parts(), four, convert)
            return outs
        return launch_one
    qs, scales = tuple(qs), tuple(scales)
    biases = tuple([_NO_BIAS if b is None else b for b in biases])

    def launch(x, outs):
        with _launch:
            _rows_lut4_many(x, qs, scales, offsets, base, biases, outs, parts(), four, convert)
        return outs
    return launch
