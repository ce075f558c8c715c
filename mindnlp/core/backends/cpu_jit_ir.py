# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""What the kernels written in LLVM IR share (imported only with numba): the vector width this
CPU offers and the pieces of loop and reduction code every one of them emits.

A few decoding kernels need instructions a compiled loop cannot be made to emit (a register
permute as a table lookup, a vector load of 16-bit floats widened in registers). They are
numba intrinsics building their loops with llvmlite, at the widest vector width the CPU has:
16 float lanes with AVX-512, 8 with AVX2 (and FMA), none otherwise, or when numba compiles
for another CPU than this one. MINDNLP_SIMD_WIDTH=8 (or 0, off) asks for less: the AVX2
kernels are tested that way on AVX-512 machines, with a numba cache directory of their own
(numba's cache would otherwise serve the other width's machine code).
"""
import os

import numba
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_bits import BFLOAT16, FLOAT16

FLOAT, I8, I16, I32, I64 = ir.FloatType(), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)


def _vector_width():
    if (numba.config.CPU_NAME or "host") != "host":
        return None
    features = llvm_binding.get_host_cpu_features()
    widths = [w for w, ok in ((16, features.get("avx512f")), (8, features.get("avx2") and features.get("fma"))) if ok]
    asked = os.environ.get("MINDNLP_SIMD_WIDTH")
    if asked is not None:
        widths = [w for w in widths if w <= int(asked)]
    return widths[0] if widths else None


WIDTH = _vector_width()


def checked_once(available, probe):
    """A `usable()` for kernels written here: whether `available` (the CPU has what they need)
    and probe() (a small case computed by the kernels, compared with the plain product) hold,
    found out on the first call and kept. Any failure to compile or run means: not here (a CPU
    or an LLVM without the instruction)."""
    answer = []

    def usable():
        if not answer:
            try:
                answer.append(bool(available and probe()))
            except Exception:  # noqa: BLE001 (see the docstring)
                answer.append(False)
        return answer[0]
    return usable


def next_iteration(builder, counter, count, accumulators, updated, loop, exit_block):
    """Close a loop block: the counter advances, the accumulators take their updated values,
    and the loop repeats while the counter is below count."""
    following = builder.add(counter, I64(1))
    counter.add_incoming(following, builder.block)
    for acc, value in zip(accumulators, updated):
        acc.add_incoming(value, builder.block)
    builder.cbranch(builder.icmp_signed("<", following, count), loop, exit_block)


def lane_sums(builder, vectors, width):
    """The sum of each vector's lanes, in the vectors' order (a power of two of them, at most
    `width`), where a lane-by-lane sum would be a chain of width - 1 dependent additions each.
    Two vectors whose lanes hold blocks of partial sums of size s (one block per result)
    become one whose blocks are of size s / 2, the first vector's results then the second's:
    two shuffles gather the first and the second half of every block, one addition sums them.
    Blocks left when one vector remains are summed lane by lane."""
    count = len(vectors)
    merged, owners = merged_lanes(builder, vectors, width)
    sums = [None] * count
    for lane, owner in enumerate(owners):
        value = builder.extract_element(merged, I32(lane))
        sums[owner] = value if sums[owner] is None else builder.fadd(sums[owner], value)
    return sums


def merged_lanes(builder, vectors, width):
    """lane_sums' tree before its last step: (one vector, the result each of its lanes holds a
    partial sum of); with `width` vectors, each lane holds one whole result."""
    count = len(vectors)
    owners = [[k] * width for k in range(count)]      # lane -> the result whose partial sum it holds
    block = width
    while len(vectors) > 1:
        half = block // 2
        firsts = [start + t for start in range(0, width, block) for t in range(half)]
        seconds = [lane + half for lane in firsts]
        lanes = ir.VectorType(I32, width)
        merged, merged_owners = [], []
        for k in range(0, len(vectors), 2):
            x, y = vectors[k], vectors[k + 1]
            low = builder.shuffle_vector(x, y, ir.Constant(lanes, firsts + [width + i for i in firsts]))
            high = builder.shuffle_vector(x, y, ir.Constant(lanes, seconds + [width + i for i in seconds]))
            merged.append(builder.fadd(low, high))
            merged_owners.append([owners[k][i] for i in firsts] + [owners[k + 1][i] for i in firsts])
        vectors, owners, block = merged, merged_owners, half
    return vectors[0], owners[0]


def open_loop(builder, name, vector, count):
    """Branch into a new loop block `name` from the current block and start it: (the loop
    block, its exit block, a counter from 0, `count` accumulators of type `vector` entering as
    zero). The caller builds the body and closes it with next_iteration."""
    function, entry = builder.function, builder.block
    loop, done = function.append_basic_block(name), function.append_basic_block("done")
    builder.branch(loop)
    builder.position_at_end(loop)
    counter = builder.phi(I64)
    counter.add_incoming(I64(0), entry)
    return loop, done, counter, loop_phis(builder, vector, count, ir.Constant(vector, None), entry)


def loop_phis(builder, kind, count, initial, block):
    """`count` phi nodes of `kind` entering with `initial` (a value or one per phi) from `block`."""
    phis = []
    for k in range(count):
        phi = builder.phi(kind)
        phi.add_incoming(initial[k] if isinstance(initial, list) else initial, block)
        phis.append(phi)
    return phis


def splat(builder, value, width):
    """A float scalar in every lane of a <width x float> vector."""
    vf = ir.VectorType(FLOAT, width)
    one = builder.insert_element(ir.Constant(vf, ir.Undefined), value, I32(0))
    return builder.shuffle_vector(one, ir.Constant(vf, ir.Undefined), ir.Constant(ir.VectorType(I32, width),
                                                                                 [0] * width))


def load_floats(builder, pointer, kind, width):
    """<width x float> from `pointer`: float32 values (kind None), or the bits of a half array
    of cpu_jit_bits' `kind` widened in registers, bfloat16 shifted into a float's upper half
    (exact), float16 by the CPU's conversion instruction (exact too)."""
    vf = ir.VectorType(FLOAT, width)
    if kind is None:
        return builder.load(builder.bitcast(pointer, vf.as_pointer()), align=4)
    raw = builder.load(builder.bitcast(pointer, ir.VectorType(I16, width).as_pointer()), align=2)
    if kind == BFLOAT16:
        wide = builder.shl(builder.zext(raw, ir.VectorType(I32, width)), ir.Constant(ir.VectorType(I32, width),
                                                                                    [16] * width))
        return builder.bitcast(wide, vf)
    return builder.fpext(builder.bitcast(raw, ir.VectorType(ir.HalfType(), width)), vf)


def fma_function(builder, width):
    """llvm.fma of <width x float> vectors, declared in the builder's module."""
    vf = ir.VectorType(FLOAT, width)
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vf, vf]), f"llvm.fma.v{width}f32")


def by_kind(builder, array_type, kind, emit):
    """The code `emit(kind)` builds (returning the values it computes, maybe none) for the
    elements of an array of `array_type`: once for float32 (kind None), or, for a half array's
    bits (uint16), once for each half kind, the runtime `kind` choosing which runs (two loops
    with nothing to decide inside them). The values, merged where there are two versions."""
    if not isinstance(array_type.dtype, types.Integer):
        return emit(None)
    function = builder.function
    blocks = [function.append_basic_block(name) for name in ("bfloat16", "float16")]
    merged = function.append_basic_block("merged")
    builder.cbranch(builder.icmp_signed("==", kind, ir.Constant(kind.type, BFLOAT16)), *blocks)
    outcomes = []
    for block, half in zip(blocks, (BFLOAT16, FLOAT16)):
        builder.position_at_end(block)
        values = emit(half)
        outcomes.append((values, builder.block))
        builder.branch(merged)
    builder.position_at_end(merged)
    phis = []
    for k, value in enumerate(outcomes[0][0]):
        phi = builder.phi(value.type)
        for values, block in outcomes:
            phi.add_incoming(values[k], block)
        phis.append(phi)
    return phis


def prefetch(builder, pointer, ahead):
    """Ask the CPU to fetch the bytes `ahead` bytes past `pointer` into every cache level: a
    stream from memory whose loop leaves the hardware prefetcher too few loads in flight."""
    fetch = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [
        I8.as_pointer(), I32, I32, I32]), "llvm.prefetch.p0i8")
    target = builder.gep(builder.bitcast(pointer, I8.as_pointer()), [I64(ahead)])
    builder.call(fetch, [target, I32(0), I32(3), I32(1)])   # a read (0), kept in every level (3), of data (1)


def dot(rows, xrows, width, ahead=0, separate=False):
    """An intrinsic: x's rows r .. r + xrows - 1 (float32) dotted with rows i, i + step, ...,
    i + (rows - 1) step of w (float32, or a half array's bits as uint16 of cpu_jit_bits' `kind`,
    widened where loaded), a tuple w's row by w's row. Both are C-contiguous, their width a
    multiple of `width`; each product sums lane-wise partial sums, then the lanes (lane_sums).
    With `ahead`, each load of w's rows asks for the bytes that far ahead of it (prefetch).
    `separate` sums each product's lanes on its own, in one order whatever the other products
    of the call, so a product has the same bits from any `rows` and `xrows` (lane_sums' tree
    over all of them is shorter, but its order depends on how many there are)."""
    @intrinsic
    def dot_rows(typingctx, w, i, step, x, r, kind):
        signature = types.UniTuple(types.float32, rows * xrows)(w, i, step, x, r, kind)

        def codegen(context, builder, sig, args):
            w_arr, x_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 3))
            k = cgutils.unpack_tuple(builder, w_arr.shape, 2)[1]
            x_width = cgutils.unpack_tuple(builder, x_arr.shape, 2)[1]
            chunks = builder.sdiv(k, I64(width))
            vf = ir.VectorType(FLOAT, width)
            fma = fma_function(builder, width)
            w_rows = [builder.gep(w_arr.data, [builder.mul(builder.add(args[1], builder.mul(args[2], I64(v))), k)])
                      for v in range(rows)]
            x_rows = [builder.gep(x_arr.data, [builder.mul(builder.add(args[4], I64(t)), x_width)])
                      for t in range(xrows)]
            count = rows * xrows            # accumulator v xrows + t: w's row v, x row t

            def emit(kind):
                loop, done, c, accs = open_loop(builder, "chunk", vf, count)
                at = builder.mul(c, I64(width))
                xs = [load_floats(builder, builder.gep(x_row, [at]), None, width) for x_row in x_rows]
                updated = [None] * count
                for v in range(rows):
                    values = load_floats(builder, builder.gep(w_rows[v], [at]), kind, width)
                    if ahead:
                        prefetch(builder, builder.gep(w_rows[v], [at]), ahead)
                    for t in range(xrows):
                        updated[v * xrows + t] = builder.call(fma, [values, xs[t], accs[v * xrows + t]])
                next_iteration(builder, c, chunks, accs, updated, loop, done)

                builder.position_at_end(done)
                if separate:
                    return [lane_sums(builder, [value], width)[0] for value in updated]
                return lane_sums(builder, updated, width)
            return context.make_tuple(builder, sig.return_type, by_kind(builder, sig.args[0], args[5], emit))
        return signature, codegen
    return dot_rows
