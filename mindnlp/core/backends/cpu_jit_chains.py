# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled loops for chains of elementwise arithmetic, float32 or half (imported only with
numba).

A graph pass (jit.passes.fuse_elementwise) turns a chain of elementwise ops that feed one
another into one `program`: a tuple of instructions (name, operand, ...), each operand
("in", i) the chain's i-th input, ("tmp", j) the result of instruction j, or ("const", v) a
Python number; the last instruction's result is the chain's. Run op by op, each instruction
is a pass over the whole array, written to a new one; here the chain becomes one loop that
reads each input once and writes only the result.

Only operations that IEEE 754 rounds exactly are chained (+, -, *, /, negation, absolute
value, square root, and 1 / x, 1 / sqrt(x), x * x built from them), and no fast-math flag is
set, so each element is rounded as the NumPy ufunc rounds it: the loop gives the eager bits.
Half arrays (bfloat16, float16) are read as their bits and widened; each instruction's
result is rounded to the half dtype, as each op computes in float32 and rounds its result.
Exponentials and the like are left out, since numba's math library and NumPy's SIMD one may
differ in the last place.

The result is seen as rows (R, C), C its last dimension; each input is read as a full (R, C)
array, a row vector (C,) repeated down the rows, a column (R,) repeated across them, one
element, or a block of rows (R_b, C) repeated R / R_b times, which covers the broadcasts of a
bias, a per-row statistic, a scalar tensor and an attention mask. A
loop takes a range of rows, so that callers can split the rows over threads.
"""
import numba
import numpy as np

from .cpu_jit_bits import narrow, widen

EXPRESSIONS = {
    "add": "{0} + {1}", "sub": "{0} - {1}", "mul": "{0} * {1}", "div": "{0} / {1}", "neg": "-{0}",
    "abs": "abs({0})", "sqrt": "np.sqrt({0})", "rsqrt": "_ONE / np.sqrt({0})", "reciprocal": "_ONE / {0}",
    "square": "{0} * {0}",
}
_READS = {"full": "in{0}[r, c]", "row": "in{0}[c]", "column": "in{0}[r]", "one": "in{0}[0]", "block": "in{0}[b{0}, c]"}
_loops = {}


def loop(program, kinds, half=None):
    """The compiled loop of `program` for inputs of these kinds ("full", "row", "column", "one"
    or "block"): loop(lo, hi, out, *inputs) writes rows lo .. hi - 1 of out (R, C), float32;
    with `half` (a cpu_jit_bits kind), the inputs and out are that half dtype's bits, and
    each instruction's result is rounded to it, as each op rounds its own. One compilation per
    program, kinds and half, shared by every node that has them."""
    key = (program, kinds, half)
    if key not in _loops:
        _loops[key] = _compile(program, kinds, half)
    return _loops[key]


def _compile(program, kinds, half):
    names = {"np": np, "_ONE": np.float32(1.0), "widen": widen, "narrow": narrow, "K": half}
    inputs = [f"in{i}" for i in range(len(kinds))]
    lines = [f"def chain(lo, hi, out, {', '.join(inputs)}):",
             "    for r in range(lo, hi):"]
    lines += [f"        b{i} = r % in{i}.shape[0]" for i, kind in enumerate(kinds) if kind == "block"]
    lines.append("        for c in range(out.shape[1]):")
    last = len(program) - 1
    for j, (name, *operands) in enumerate(program):
        terms = []
        for kind, value in operands:
            if kind == "in":
                read = _READS[kinds[value]].format(value)
                terms.append(read if half is None else f"widen({read}, K)")
            elif kind == "tmp":
                terms.append(f"t{value}")
            else:
                terms.append(f"k{len(names)}")
                names[terms[-1]] = np.float32(value)
        expression = EXPRESSIONS[name].format(*terms)
        if half is not None:
            expression = f"narrow({expression}, K)" if j == last else f"widen(narrow({expression}, K), K)"
        lines.append(f"            t{j} = " + expression)
    lines.append(f"            out[r, c] = t{last}")
    exec(compile("\n".join(lines), "<mindnlp elementwise chain>", "exec"), names)
    return numba.njit(nogil=True, error_model="numpy")(names["chain"])
