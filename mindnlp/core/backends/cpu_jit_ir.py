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
    sums = [None] * count
    for lane, owner in enumerate(owners[0]):
        value = builder.extract_element(vectors[0], I32(lane))
        sums[owner] = value if sums[owner] is None else builder.fadd(sums[owner], value)
    return sums


def loop_phis(builder, kind, count, initial, block):
    """`count` phi nodes of `kind` entering with `initial` (a value or one per phi) from `block`."""
    phis = []
    for k in range(count):
        phi = builder.phi(kind)
        phi.add_incoming(initial[k] if isinstance(initial, list) else initial, block)
        phis.append(phi)
    return phis
