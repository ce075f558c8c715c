# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Direct array kernels for the ops a replay runs most, registered in lower.KERNELS.

A decode step's graph is mostly views, elementwise arithmetic and one-row products and
norms, each tiny: the cost of replaying it through the op's `forward` (tensor shells,
promotion, ctx bookkeeping, kernel look-up, work splitting) is several times the kernel
itself. Each builder here looks at one captured node and returns the call it amounts to,
specialised on what capture saw (the output shape, the operands' dtypes, the constant
arguments), or None where the node is not the plain case, which then replays through
`forward` as before. The compiled kernels are the very ones the eager op calls for these
shapes, so a replay computes the eager bits. Host (NumPy) arrays only; half-precision
arithmetic keeps its float32 compute path through `forward`.

Most of them write their results into arrays the replay hands them after their operands
(`writing_into` says of what shapes): lower.plan_buffers makes those buffers once.

Ops defined above the core (the transformers' fused rotary and head split) register their
kernels next to their definition, with `kernel_for` and the operand checks below.
"""
import math
import operator

import numpy as np

from ..backends import cpu_jit, cpu_kernels
from ..nn.functional.activation import _GatedProduct, _GeluExact, _GeluTanh, _Silu
from ..nn.functional.attention import ScaledDotProductAttention
from ..nn.functional.linear import _Linear
from ..nn.functional.normalization import _LayerNorm
from ..nn.functional.quantized import CODEBOOKS, _QuantizedLinear
from ..ops import conversion, elementwise, inplace, linalg, shape
from ..ops._helpers import HALF_NP
from . import passes
from .graph import SlotRef
from .lower import generic_kernel, kernel_for

_flat_bits = cpu_kernels._flat_bits

_F32 = np.dtype(np.float32)
# Work an eager kernel keeps on the calling thread (cpu_kernels' workers split only more):
# the direct kernels below serve these sizes, where the eager op makes the same single call.
_INLINE = cpu_kernels.BLOCK * cpu_kernels._BLOCKS_PER_THREAD

_HALF = (np.dtype(np.float16),)


def writing_into(kernel, *specs):
    """kernel, marked as writing its outputs into arrays of these (shape, dtype) it takes after
    the arrays it reads (lower.plan_buffers). The arrays are row-ordered, and the results the
    kernel returns must have the layout eager's results had (views of the graph are recorded
    from eager's): a kernel whose eager op may give another layout writes into them only where
    capture saw a row-ordered result (Slot.c_contiguous)."""
    kernel.writes_into = tuple((tuple(shape), np.dtype(dtype)) for shape, dtype in specs)
    return kernel


def host_operands(node, graph):
    """The node's SlotRef operands (distinct, in read order) when every one is a host array."""
    refs = [a for a in node.args if isinstance(a, SlotRef)]
    if node.kwargs or [r.slot for r in refs] != node.reads():
        return None
    if any(getattr(graph.slots[r.slot].device, "type", "cpu") != "cpu" for r in refs):
        return None
    return refs


@kernel_for(shape.Reshape)
def _reshape(node, graph):
    if host_operands(node, graph) is None:
        return None
    out = graph.slots[node.outputs[0]].shape
    return lambda a: a.reshape(out)


@kernel_for(shape.Permute)
def _permute(node, graph):
    if host_operands(node, graph) is None:
        return None
    dims = tuple(node.args[1])
    return lambda a: a.transpose(dims)


@kernel_for(shape.Slice)
def _slice(node, graph):
    if host_operands(node, graph) is None:
        return None
    key = node.args[1]
    return lambda a: a[key]


@kernel_for(inplace.assign)
def _assign(node, graph):
    """A cache write `target[:, :, position] = value` whose position is a one-element index
    array (a static cache's cache_position) writes through a basic slice instead: NumPy's
    indexed assignment costs several times the copy. A position out of the target's range
    takes the indexed path, which wraps or raises as the eager write did."""
    if len(node.args) != 3 or node.kwargs or type(node.args[2]) is not tuple:
        return None
    target, value, key = node.args
    arrays = [(axis, k) for axis, k in enumerate(key) if isinstance(k, SlotRef)]
    if len(arrays) != 1 or any(k != slice(None) for k in key if not isinstance(k, SlotRef)):
        return None
    axis, index = arrays[0]
    slot = graph.slots[index.slot]
    if slot.shape != (1,) or slot.dtype.kind not in "iu" or not isinstance(target, SlotRef) or \
            [target.slot, getattr(value, "slot", None), index.slot] != node.reads():
        return None
    size = graph.slots[target.slot].shape[axis]
    head = (slice(None),) * axis

    def assign_position(t, v, position):
        i = int(position[0])
        if 0 <= i < size:
            t[head + (slice(i, i + 1),)] = v
        else:
            t[head + (position,)] = v
        return t
    return assign_position


_BINARY = {elementwise.Add: np.add, elementwise.Sub: np.subtract, elementwise.Mul: np.multiply,
           elementwise.Div: np.true_divide}


def _binary(node, graph):
    """a op b on arrays (or an array and a Python number), as the op's forward computes it
    for every dtype but the half ones."""
    refs = host_operands(node, graph)
    if refs is None or len(node.args) != 2 or any(graph.slots[r.slot].dtype in _HALF for r in refs) or \
            graph.slots[refs[0].slot].dtype.name == "bfloat16":
        return None
    fn = _BINARY[node.op]
    a, b = node.args
    out = graph.slots[node.outputs[0]]
    # a float32 result written into the (row-ordered) array the replay hands over, where eager's
    # was row-ordered too: NumPy gives the result of transposed operands their layout, and of a
    # 0-d one a scalar, which the kernel keeps doing
    into = out.shape and out.c_contiguous and out.dtype == _F32 and all(graph.slots[r.slot].dtype == _F32 for r in refs)
    if isinstance(a, SlotRef) and isinstance(b, SlotRef):
        return writing_into(lambda x, y, o: fn(x, y, o), (out.shape, _F32)) if into else fn
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return writing_into(lambda x, o: fn(x, b, o), (out.shape, _F32)) if into else lambda x: fn(x, b)
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return writing_into(lambda x, o: fn(a, x, o), (out.shape, _F32)) if into else lambda x: fn(a, x)
    return None


for _op in _BINARY:
    kernel_for(_op)(_binary)


def float32_operands(node, graph):
    """The node's SlotRef operands when all are float32 host arrays, else None."""
    refs = host_operands(node, graph)
    if refs is None or any(graph.slots[r.slot].dtype != _F32 for r in refs):
        return None
    return refs


def _few_rows(node, graph, a_shape, k, n):
    """True where the eager op hands this product of a few rows to cpu_kernels.matmul: float32
    host operands, enough multiply-adds for the fused matmul."""
    rows = math.prod(a_shape[:-1])
    return (cpu_jit.parallel() is not None and float32_operands(node, graph) is not None
            and rows <= cpu_kernels._FEW_ROWS and rows * k * n >= cpu_kernels.MIN_WORK["matmul"])


def _matrix_vector(rows, k, n, out_shape, fallback, stored_transposed):
    """a (rows, k) @ b (k, n) (+ bias) of a few rows into the output it is handed, by the kernel
    cpu_kernels.matmul picks for it: the matrix-vector loops, or for a tiny weight the product
    kernels on this thread; the op's forward where the operands' layout does not suit them.
    The function takes (a, weight, bias, out, *arrays): the weight as the node reads it, b itself
    or, `stored_transposed`, b.T (Linear's (n, k)); out an array of its `writes_into` to write
    the product into."""
    if not cpu_kernels.few_rows_product(rows, k, n):
        products = _tiny_products(rows, [n], [out_shape], stored_transposed, lambda arrays: fallback(*arrays))

        def tiny_product(a, weight, bias, out, *arrays):
            return products(a, ((weight, bias),), arrays, (out,))
        return writing_into(tiny_product, ((rows, n), _F32))

    def product(a, weight, bias, out, *arrays):
        b = weight.T if stored_transposed else weight
        if cpu_kernels._matvec(a.reshape(rows, -1), b, bias, out):
            return out.reshape(out_shape)
        return fallback(*arrays)
    return writing_into(product, ((rows, n), _F32))


def _tiny_products(rows, widths, out_shapes, stored_transposed, fallback):
    """A function (a, ((weight, bias), ...), arrays, outs): a (rows, k) @ each tiny weight (+ its
    bias; cpu_kernels.tiny_weight_plan) written into outs[t] (rows, n_t), by the kernel eager's
    matmul runs it with, the plans made once for the weights' arrays (each weight as
    _matrix_vector takes it); `arrays` go to fallback where a plan declines. One output, or a
    tuple of them for several weights."""
    def make(flat):     # weight, bias, weight, bias, ...
        return [cpu_kernels.tiny_weight_plan(weight.T if stored_transposed else weight, bias)
                for weight, bias in zip(flat[::2], flat[1::2])]
    plans = _PlanFor(make)
    single = len(widths) == 1

    def products(a, pairs, arrays, outs):
        x, results = a.reshape(rows, -1), []
        for plan, out, shape in zip(plans(tuple(v for pair in pairs for v in pair)), outs, out_shapes):
            if plan is None or not plan(x, out):
                return fallback(arrays)
            results.append(out.reshape(shape))
        return results[0] if single else tuple(results)
    return products


@kernel_for(_Linear)
def _linear(node, graph):
    """x @ w.T (+ bias) of a few rows (a decoding step's projections)."""
    x_ref, w_ref = node.args[:2]
    bias = node.args[2] if len(node.args) > 2 else None
    if graph.slots[x_ref.slot].dtype in HALF_NP:
        return _half_linears(node, graph, x_ref, (w_ref,), (bias,), generic_kernel(node, graph))
    x_shape, (n, k) = graph.slots[node.args[0].slot].shape, graph.slots[node.args[1].slot].shape
    if not _few_rows(node, graph, x_shape, k, n):
        return None
    product = _matrix_vector(math.prod(x_shape[:-1]), k, n, graph.slots[node.outputs[0]].shape,
                             generic_kernel(node, graph), stored_transposed=True)

    if len(node.args) < 3 or node.args[2] is None:
        def linear_into(x, w, out):
            return product(x, w, None, out, x, w)
    else:
        def linear_into(x, w, bias, out):
            return product(x, w, bias, out, x, w, bias)
    return writing_into(linear_into, *product.writes_into)


@kernel_for(linalg.MatMul)
def _matmul(node, graph):
    """a @ b of a few rows by a matrix (GPT-2's Conv1D projections)."""
    if graph.slots[node.args[0].slot].dtype in HALF_NP:
        return _half_columns(node, graph, generic_kernel(node, graph))
    a_shape, b_shape = (graph.slots[r.slot].shape for r in node.args)
    if len(a_shape) != 2 or len(b_shape) != 2 or not _few_rows(node, graph, a_shape, *b_shape):
        return None
    product = _matrix_vector(a_shape[0], *b_shape, graph.slots[node.outputs[0]].shape, generic_kernel(node, graph),
                             stored_transposed=False)

    def matmul(a, b, out):
        return product(a, b, None, out, a, b)
    return writing_into(matmul, *product.writes_into)


@kernel_for(passes.matmul_bias, linalg.BiasedMatMul)
def _matmul_bias(node, graph):
    """a @ b + bias of a few rows (GPT-2's Conv1D projections, addmm's one op, or a product
    and an add fused by passes.fuse_bias_add)."""
    if graph.slots[node.args[0].slot].dtype in HALF_NP:
        return _half_columns(node, graph, passes.matmul_bias)
    a_shape, b_shape = (graph.slots[r.slot].shape for r in node.args[:2])
    if not _few_rows(node, graph, a_shape, *b_shape):
        return None
    product = _matrix_vector(a_shape[0], *b_shape, graph.slots[node.outputs[0]].shape, passes.matmul_bias,
                             stored_transposed=False)

    def matmul_bias(a, b, bias, out):
        return product(a, b, bias, out, a, b, bias)
    return writing_into(matmul_bias, *product.writes_into)


@kernel_for(passes.linear_many)
def _linear_many(node, graph):
    """Linears of the same few rows (passes.fuse_shared_input_linears) in one launch of the
    matrix-vector kernel, where each of them would have taken it alone; tiny weights, which
    cpu_kernels.matmul keeps off that kernel, one after the other in one call."""
    x_ref, weights, biases = node.args
    if graph.slots[x_ref.slot].dtype in HALF_NP:
        return _half_linears(node, graph, x_ref, weights, biases,
                             lambda x, *arrays: passes.linear_many(x, *_weights_and_biases(arrays, biases)))
    x_shape = graph.slots[x_ref.slot].shape
    rows, k = math.prod(x_shape[:-1]), x_shape[-1]
    if cpu_jit.parallel() is None or any(rows * k * graph.slots[w.slot].shape[0] < cpu_kernels.MIN_WORK["matmul"]
                                         for w in weights):
        return None
    count, biased = len(weights), [b is not None for b in biases]
    out_shapes = [graph.slots[o].shape for o in node.outputs]
    compiled = cpu_jit.parallel()
    widths = [graph.slots[w.slot].shape[0] for w in weights]
    specs = [((rows, n), _F32) for n in widths]
    if not cpu_kernels.few_rows_product(rows, k, widths[0]):
        products = _tiny_products(rows, widths, out_shapes, True, lambda arrays: passes.linear_many(*arrays))

        def tiny_linears(x, *arrays):       # weights, the biases there are, outputs
            ws, rest = arrays[:count], iter(arrays[count:])
            bs = tuple(next(rest) if has else None for has in biased)
            return products(x, tuple(zip(ws, bs)), (x, ws, bs), arrays[-count:])
        return writing_into(tiny_linears, *specs)

    def linear_many(x, *arrays):            # weights, the biases there are, outputs
        ws, rest = arrays[:count], iter(arrays[count:])
        bs = tuple(next(rest) if has else None for has in biased)
        if not all(w.flags.c_contiguous for w in ws):
            return passes.linear_many(x, ws, bs)
        outs = arrays[-count:]
        compiled.matvec_rows_many(np.ascontiguousarray(x.reshape(rows, k)), ws, bs, outs)
        return tuple(o.reshape(shape) for o, shape in zip(outs, out_shapes))
    return writing_into(linear_many, *specs)


def _weights_and_biases(arrays, biases):
    """The weights and biases (None where the node has none) of a kernel's arrays: the
    weights, then the biases there are."""
    count = len(biases)
    present = iter(arrays[count:])
    return arrays[:count], tuple(None if b is None else next(present) for b in biases)


def _half_linears(node, graph, x_ref, weights, biases, fallback):
    """Linears of a few bfloat16 or float16 rows against weights of their dtype (a half
    model's decoding projections; several of them: passes.fuse_shared_input_linears) in one
    launch of cpu_jit_half's kernel, which widens x, sums in float32 and rounds the outputs
    to the dtype as the eager op does (ops.linalg._matmul_arrays); `fallback` (x, weights,
    biases there are) where the eager op would not take that kernel either."""
    compiled = cpu_jit.half()
    x = graph.slots[x_ref.slot]
    rows, k = math.prod(x.shape[:-1]), x.shape[-1]
    operands = [graph.slots[r.slot] for r in (x_ref,) + tuple(weights) + tuple(b for b in biases if b is not None)]
    if compiled is None or node.kwargs or rows > cpu_kernels._FEW_ROWS or \
            any(s.dtype != x.dtype or getattr(s.device, "type", "cpu") != "cpu" for s in operands):
        return None
    count = len(weights)
    widths = [graph.slots[w.slot].shape[0] for w in weights]
    out_shapes = [graph.slots[o].shape for o in node.outputs]
    x_scratch = np.empty((rows, k), _F32)
    scratch = [np.empty((rows, n), _F32) for n in widths]

    def make(arrays):       # the weights and biases there are: the float32 biases, or None where not served
        ws, bs = _weights_and_biases(arrays, biases)
        if not compiled.serves(k, ws):
            return None
        return tuple(None if b is None else np.ascontiguousarray(b, dtype=_F32).reshape(-1) for b in bs)
    plans = _PlanFor(make)

    def half_linears(x, *arrays):       # weights, the biases there are, outputs
        parameters, outs = arrays[:-count], arrays[-count:]
        float_biases = plans(parameters)
        if float_biases is None:
            return fallback(x, *parameters)
        compiled.half_linears(np.ascontiguousarray(x).reshape(rows, k), x_scratch, parameters[:count], float_biases,
                              scratch, outs)
        results = tuple(out.reshape(shape) for out, shape in zip(outs, out_shapes))
        return results if count > 1 else results[0]
    return writing_into(half_linears, *[((rows, n), x.dtype) for n in widths])


def _half_columns(node, graph, fallback):
    """a @ b (+ bias) of a few half rows by a half weight stored (K, N) (GPT-2's Conv1D in
    bfloat16 or float16): a widened, the column bands reading b's 16-bit values in place, the
    float32 result rounded to the dtype, as the op computes it (cpu_kernels.half_matmul);
    `fallback` (the node's arrays) where b is not laid out that way."""
    refs, parallel, bits = host_operands(node, graph), cpu_jit.parallel(), cpu_jit.half_bits()
    if refs is None or parallel is None or bits is None:
        return None
    a_shape, b_shape = (graph.slots[r.slot].shape for r in node.args[:2])
    if len(a_shape) != 2 or len(b_shape) != 2:
        return None
    (rows, k), (k_b, n) = a_shape, b_shape
    dtype = graph.slots[refs[0].slot].dtype
    if len(refs) != len(node.args) or k_b != k or rows > cpu_kernels._FEW_ROWS or \
            any(graph.slots[r.slot].dtype != dtype for r in refs):
        return None
    kind = bits.kind_of(dtype)
    x32, out32 = np.empty((rows, k), _F32), np.empty((rows, n), _F32)
    float_bias = _PlanFor(lambda arrays: np.ascontiguousarray(arrays[0], dtype=_F32).reshape(-1))

    def half_columns(a, b, *bias_and_out):
        if not b.flags.c_contiguous or b.T.flags.c_contiguous:
            return fallback(a, b, *bias_and_out[:-1])
        bits.widen_into(_flat_bits(a), kind, x32.reshape(-1))
        bias = float_bias(bias_and_out[:1]) if len(bias_and_out) == 2 else None
        parallel.matvec_columns(x32, b.view(np.uint16), bias, out32, half=kind)
        out = bias_and_out[-1]
        bits.narrow_into(out32.reshape(-1), kind, out.reshape(-1).view(np.uint16))
        return out
    return writing_into(half_columns, ((rows, n), dtype))


class _PlanFor:
    """The plan `make(arrays)` made for the arrays of the last call, made again when a call
    brings other array objects (a weight replaced between replays): a replay passes the same
    weights every step, so their checks are made once."""

    def __init__(self, make):
        self.make, self.arrays, self.plan = make, None, None     # no call yet: the first one makes a plan

    def __call__(self, arrays):
        if self.arrays is None or len(arrays) != len(self.arrays) or not all(map(operator.is_, arrays, self.arrays)):
            self.arrays, self.plan = arrays, self.make(arrays)
        return self.plan


def _quantized_product(count, bits, biased, has_offsets, codebook, rows, out_shapes):
    """A replay's kernel for x's `rows` rows times `count` quantized weights of one format:
    a function of (x, the weights' arrays in the node's read order) returning the outputs in
    `out_shapes` (a tuple of them for several weights), by cpu_kernels.quantized_matmul_plan,
    planned once for the weights' arrays and then called straight."""
    table = None if codebook is None else CODEBOOKS[codebook]

    def make(arrays):
        arrays = iter(arrays)
        q_arrays, s_arrays = [next(arrays) for _ in range(count)], [next(arrays) for _ in range(count)]
        b_arrays = [next(arrays) if has else None for has in biased]
        o_arrays = [next(arrays) for _ in range(count)] if has_offsets else None
        return cpu_kernels.quantized_matmul_plan(q_arrays, s_arrays, bits, b_arrays, o_arrays, table)
    plans = _PlanFor(make)
    specs = [((rows, math.prod(shape) // rows), _F32) for shape in out_shapes]
    if count == 1:
        (out_shape,) = out_shapes

        def quantized_linear(xa, *arrays_and_out):
            out = arrays_and_out[-1]
            plans(arrays_and_out[:-1])(np.ascontiguousarray(xa.reshape(rows, -1)), (out,))
            return out.reshape(out_shape)
        return writing_into(quantized_linear, *specs)

    def quantized_linear_many(xa, *arrays_and_outs):
        outs = arrays_and_outs[-count:]
        plans(arrays_and_outs[:-count])(np.ascontiguousarray(xa.reshape(rows, -1)), outs)
        return tuple([out.reshape(shape) for out, shape in zip(outs, out_shapes)])
    return writing_into(quantized_linear_many, *specs)


@kernel_for(_QuantizedLinear)
def _quantized_linear(node, graph):
    """x @ w.T (+ bias) of a few rows against an 8- or 4-bit weight (a decoding step of a
    quantized model): cpu_kernels.quantized_matmul_plan, the path the eager op takes, planned
    once for the node's weight."""
    refs = host_operands(node, graph)
    x, q, scales, bias, bits, offsets, codebook = node.args
    if cpu_jit.quantized() is None or cpu_jit.parallel() is None or refs is None:
        return None
    x_shape = graph.slots[x.slot].shape
    rows = math.prod(x_shape[:-1])
    if rows > cpu_kernels._FEW_ROWS or any(graph.slots[r.slot].dtype != _F32 for r in refs if r is not q):
        return None
    return _quantized_product(1, bits, [bias is not None], offsets is not None, codebook, rows,
                              [graph.slots[node.outputs[0]].shape])


@kernel_for(passes.quantized_linear_many)
def _quantized_linear_many(node, graph):
    """Quantized linears of the same few rows (passes.fuse_shared_input_linears) in one launch
    of the quantized matrix-vector kernels, each output as its own node's kernel computes it."""
    x, qs, scales, biases, offsets, bits, codebook = node.args
    rows = math.prod(graph.slots[x.slot].shape[:-1])
    if cpu_jit.quantized() is None or cpu_jit.parallel() is None or rows > cpu_kernels._FEW_ROWS or \
            graph.slots[x.slot].dtype != _F32:
        return None
    return _quantized_product(len(qs), bits, [b is not None for b in biases], offsets is not None, codebook, rows,
                              [graph.slots[o].shape for o in node.outputs])


def _row_view(kind, rows, cols):
    """The shape a chain's loop reads an input of this broadcast kind in (cpu_jit_chains)."""
    return {"full": (rows, cols), "row": (cols,), "column": (rows,), "one": (1,), "block": (-1, cols)}[kind]


@kernel_for(passes.elementwise_chain)
def _elementwise_chain(node, graph):
    """A chain of elementwise ops (passes.fuse_elementwise) as one compiled loop, its rows
    split over the worker threads when there are enough of them. The loop writes rows; where
    eager's result was column-ordered (the chain of transposed operands), the chain's NumPy
    reference keeps that layout instead, so that a reshape of it copies as eager's did."""
    chains, out_slot = cpu_jit.chains(), graph.slots[node.outputs[0]]
    if chains is None or not out_slot.c_contiguous:
        return None
    program, refs = node.args[0], node.args[1:]
    shape, dtype = out_slot.shape, out_slot.dtype
    rows, cols = math.prod(shape[:-1]), shape[-1]
    kinds = tuple(passes.broadcast_kind(graph.slots[r.slot].shape, shape) for r in refs)
    views = [_row_view(kind, rows, cols) for kind in kinds]
    half = None if dtype == _F32 else cpu_jit.half_bits().kind_of(dtype)
    loop = chains.loop(program, kinds, half)
    min_rows = -(-_INLINE // max(cols, 1))
    workers = cpu_kernels.workers

    def elementwise_chain(*arrays_and_out):
        inputs = [a.reshape(view) for a, view in zip(arrays_and_out, views)]
        out = arrays_and_out[-1]
        if half is not None:        # the loop reads and writes the bits
            inputs, loop_out = [a.view(np.uint16) for a in inputs], out.view(np.uint16)
        else:
            loop_out = out
        if rows < 2 * min_rows:         # one part: on the calling thread, without the hand-off
            loop(0, rows, loop_out, *inputs)
        else:
            workers.run(lambda lo, hi: loop(lo, hi, loop_out, *inputs), rows, min_items=min_rows)
        return out.reshape(shape)
    return writing_into(elementwise_chain, ((rows, cols), dtype))


@kernel_for(_LayerNorm)
def _layer_norm(node, graph):
    """Layer or RMS norm over the last dims of a few rows: the compiled row loop, once; for a
    half x, the loop over its 16-bit values the op runs (cpu_jit_bits.layer_norm_half), the
    weight and bias widened once."""
    compiled = cpu_jit.load()
    refs = host_operands(node, graph)
    x_shape = graph.slots[node.args[0].slot].shape
    if compiled is None or refs is None or math.prod(x_shape) > _INLINE:
        return None
    dtype, bits = graph.slots[refs[0].slot].dtype, cpu_jit.half_bits()
    half = dtype in HALF_NP and bits is not None
    if not (dtype == _F32 or half) or any(graph.slots[r.slot].dtype not in (_F32, dtype) for r in refs):
        return None
    _, weight, bias, dims, eps, centered = node.args
    width = math.prod(x_shape[len(x_shape) - len(dims):])
    rows = math.prod(x_shape) // max(width, 1)
    ones, zeros = np.ones(width, _F32), np.zeros(width, _F32)
    mean, rstd = np.zeros(rows, _F32), np.empty(rows, _F32)     # scratch: the replay keeps no statistics
    eps, has_weight, has_bias = np.float32(eps), weight is not None, bias is not None
    # a prompt's rows split over numba's pool; a decoding step's row, the loop itself
    split = cpu_kernels._norm_pool(rows, width) is not None
    norm = cpu_kernels.layer_norm_into if split else compiled.layer_norm
    if not half:
        def layer_norm(x, *arrays):      # (weight,) (bias,) out
            w = arrays[0].reshape(width) if has_weight else ones
            b = arrays[has_weight].reshape(width) if has_bias else zeros
            out = arrays[-1]
            norm(np.ascontiguousarray(x).reshape(rows, width), w, b, eps, centered, out, mean, rstd)
            return out.reshape(x_shape)
        return writing_into(layer_norm, ((rows, width), _F32))
    kind, norm_half = bits.kind_of(dtype), bits.layer_norm_half
    if split:
        def norm_half(x, kind, w, b, eps, centered, out, mean, rstd):
            cpu_kernels.layer_norm_into(x, w, b, eps, centered, out, mean, rstd, kind)
    widened = _PlanFor(lambda arrays: [np.ascontiguousarray(a, dtype=_F32).reshape(width) for a in arrays])

    def layer_norm_half_dtype(x, *arrays):      # (weight,) (bias,) out
        parameters = widened(arrays[:-1])
        w = parameters[0] if has_weight else ones
        b = parameters[has_weight] if has_bias else zeros
        out = arrays[-1]
        norm_half(_flat_bits(x).reshape(rows, width), kind, w, b, eps, centered, out.view(np.uint16), mean, rstd)
        return out.reshape(x_shape)
    return writing_into(layer_norm_half_dtype, ((rows, width), dtype))


@kernel_for(passes.residual_norm)
def _residual_norm(node, graph):
    """A residual add and its norm (passes.fuse_residual_norms) in one compiled loop: the sum
    and the norm's float32 loop as the Add and _LayerNorm kernels compute them (for half rows,
    cpu_jit_bits' widening and rounding, and the weight product rounded on its own); the
    parameters widened to float32 once."""
    compiled, bits = cpu_jit.load(), cpu_jit.half_bits()
    refs = host_operands(node, graph)
    a_ref, _, weight, bias, dims, eps, centered, scale = node.args
    shape, dtype = graph.slots[a_ref.slot].shape, graph.slots[a_ref.slot].dtype
    half = dtype in HALF_NP
    if compiled is None or bits is None or refs is None or math.prod(shape) > _INLINE:
        return None
    width = math.prod(shape[len(shape) - len(dims):])
    rows = math.prod(shape) // max(width, 1)
    present = [p is not None for p in (weight, bias, scale)]
    ones, zeros = np.ones(width, _F32), np.zeros(width, _F32)
    mean, rstd = np.zeros(rows, _F32), np.empty(rows, _F32)     # scratch: the replay keeps no statistics
    wide, normed = np.empty((rows, width), _F32), np.empty((rows, width), _F32)
    eps = np.float32(eps)
    kind = bits.kind_of(dtype) if half else None

    def widen(arrays):
        given = iter([np.ascontiguousarray(a, dtype=_F32).reshape(width) for a in arrays])
        w, b, s = (next(given) if p else None for p in present)
        return (ones if w is None else w), (zeros if b is None else b), s
    parameters = _PlanFor(widen)       # (weight, bias, scale), made once for the replay's parameter arrays

    def residual_norm(a, b, *arrays):       # (weight,) (bias,) (scale,) total out
        w, bb, s = parameters(arrays[:-2])
        total, out = arrays[-2:]
        if half:
            bits.residual_norm_half(_flat_bits(a).reshape(rows, width), _flat_bits(b).reshape(rows, width), kind, w, bb,
                                    eps, centered, s, total.view(np.uint16), out.view(np.uint16), wide, normed, mean,
                                    rstd)
        else:
            bits.residual_norm_float32(np.ascontiguousarray(a).reshape(rows, width),
                                       np.ascontiguousarray(b).reshape(rows, width), w, bb, eps, centered, total, out,
                                       mean, rstd)
        return total.reshape(shape), out.reshape(shape)
    return writing_into(residual_norm, ((rows, width), dtype), ((rows, width), dtype))


@kernel_for(_GatedProduct)
def _gated_product(node, graph):
    """act(gate) * up of a few rows: the compiled loop over the flat arrays, once; for half
    arrays the loop over their 16-bit values that the op's forward runs (cpu_jit_bits)."""
    compiled = cpu_jit.load()
    refs = host_operands(node, graph)
    if compiled is None or refs is None or len(refs) != 2:
        return None
    (gate, up), dtype = (graph.slots[r.slot].shape for r in refs), graph.slots[refs[0].slot].dtype
    if gate != up or math.prod(gate) > _INLINE or graph.slots[refs[1].slot].dtype != dtype:
        return None
    if dtype == _F32:
        loop = getattr(compiled, "gated_" + node.args[2])
        if cpu_kernels._pool_for(math.prod(gate)) is not None:       # a prompt's rows: split over numba's pool
            tanh_gelu = node.args[2] == "gelu_tanh"

            def loop(x, up, out):
                cpu_kernels.activation_into(x, up, tanh_gelu, out)

        def gated(g, u, out):
            loop(np.ascontiguousarray(g).reshape(-1), np.ascontiguousarray(u).reshape(-1), out.reshape(-1))
            return out
        return writing_into(gated, (gate, _F32))
    return _half_activation(node.args[2] == "gelu_tanh", True, gate, dtype)


def _half_activation(tanh_gelu, gated, shape, dtype):
    """The replay's kernel of SiLU or tanh-GELU (times up where `gated`) on half arrays:
    cpu_jit_bits.activation_half, the loop the eager op runs on these sizes; None where the
    half loops are not here or the dtype is not a half one."""
    bits = cpu_jit.half_bits()
    if dtype not in HALF_NP or bits is None:
        return None
    kind = bits.kind_of(dtype)
    loop = bits.activation_half
    if cpu_kernels._pool_for(math.prod(shape)) is not None:     # a prompt's rows: split over numba's pool
        def loop(x, up, kind, tanh_gelu, out):
            cpu_kernels.activation_into(x, up, tanh_gelu, out, kind)

    def activation_half(x, *up_and_out):
        out = up_and_out[-1]
        loop(_flat_bits(x), _flat_bits(up_and_out[0]) if gated else None, kind, tanh_gelu, out.reshape(-1).view(np.uint16))
        return out
    return writing_into(activation_half, (shape, dtype))


def _on_float32_values(loop, shape, dtype):
    """The replay's kernel of a half op whose forward computes in float32 (compute_float): its
    half input of this shape widened into float32 scratch, loop(input, out) over the flat
    float32 arrays, and the result rounded into the half output; None where the half loops are
    not here or the dtype is not a half one."""
    bits = cpu_jit.half_bits()
    if dtype not in HALF_NP or bits is None:
        return None
    kind, size = bits.kind_of(dtype), math.prod(shape)
    widened, out32 = np.empty(size, _F32), np.empty(size, _F32)

    def on_float32_values(x, out):
        bits.widen_into(_flat_bits(x), kind, widened)
        loop(widened, out32)
        bits.narrow_into(out32, kind, out.reshape(-1).view(np.uint16))
        return out
    return writing_into(on_float32_values, (shape, dtype))


@kernel_for(conversion.Cast)
def _cast(node, graph):
    """A half array widened to float32, or a float32 one rounded to a half dtype, as Cast's
    forward does (ops._helpers.narrow), by one compiled loop over the flat arrays (a half
    model's norms cast to float32 and back, twice a layer)."""
    refs, bits = host_operands(node, graph), cpu_jit.half_bits()
    out = graph.slots[node.outputs[0]]
    if refs is None or bits is None or len(refs) != 1 or not out.c_contiguous:
        return None
    source = graph.slots[refs[0].slot].dtype
    if source in HALF_NP and out.dtype == _F32:
        kind, loop = bits.kind_of(source), bits.widen_into

        def widen(x, o):
            loop(_flat_bits(x), kind, o.reshape(-1))
            return o
        return writing_into(widen, (out.shape, _F32))
    if source == _F32 and out.dtype in HALF_NP:
        kind, loop = bits.kind_of(out.dtype), bits.narrow_into

        def narrow(x, o):
            loop(np.ascontiguousarray(x).reshape(-1), kind, o.reshape(-1).view(np.uint16))
            return o
        return writing_into(narrow, (out.shape, out.dtype))
    return None


# op -> how its eager forward calls the compiled loop on a flat float32 array.
_ACTIVATIONS = {_GeluTanh: lambda c: lambda x, out: c.gated_gelu_tanh(x, None, out),
                _Silu: lambda c: lambda x, out: c.gated_silu(x, None, out),
                _GeluExact: lambda c: lambda x, out: c.gelu(x, out)}


@kernel_for(*_ACTIVATIONS)
def _activation(node, graph):
    """GELU or SiLU of a few rows: the compiled loop once, without the forward's dispatch
    through the backend's kernel table and work splitting (tens of microseconds on a
    3072-wide row, ten times the loop); for a half x, over its float32 values, the result
    rounded to its dtype (the op's compute_float)."""
    compiled, refs = cpu_jit.load(), host_operands(node, graph)
    if compiled is None or refs is None or len(refs) != 1:
        return None
    shape, dtype = graph.slots[node.args[0].slot].shape, graph.slots[refs[0].slot].dtype
    if math.prod(shape) > _INLINE:
        return None
    loop = _ACTIVATIONS[node.op](compiled)
    if dtype == _F32:
        if node.op is not _GeluExact and cpu_kernels._pool_for(math.prod(shape)) is not None:
            tanh_gelu = node.op is _GeluTanh        # a prompt's rows: split over numba's pool

            def loop(x, out):
                cpu_kernels.activation_into(x, None, tanh_gelu, out)

        def activation(x, out):
            loop(np.ascontiguousarray(x).reshape(-1), out.reshape(-1))
            return out
        return writing_into(activation, (shape, _F32))
    if node.op is not _GeluExact:
        return _half_activation(node.op is _GeluTanh, False, shape, dtype)
    return _on_float32_values(loop, shape, dtype)


@kernel_for(ScaledDotProductAttention)
def _attention(node, graph):
    """Attention without dropout (a replay saves no probabilities): cpu_kernels'
    small_attention, as the op's forward picks it when it need not save them; a decoding
    step's one query per head, its path planned once for the shapes
    (cpu_kernels.decode_attention_plan)."""
    refs = host_operands(node, graph)
    if refs is None or cpu_jit.load() is None:
        return None
    q, k, v, mask, keep, scale, groups = node.args
    q_shape, k_shape = graph.slots[q.slot].shape, graph.slots[k.slot].shape
    if keep is not None or len(q_shape) != 4 or len(k_shape) != 4 or not (mask is None or isinstance(mask, SlotRef)):
        return None
    dtype = graph.slots[q.slot].dtype
    if any(graph.slots[r.slot].dtype != dtype for r in refs):
        return None
    if dtype in HALF_NP:
        return _half_attention(node, graph, dtype)
    if dtype != _F32:
        return None
    step = cpu_kernels.decode_attention_plan(q_shape, k_shape, graph.slots[v.slot].shape,
                                             None if mask is None else graph.slots[mask.slot].shape, scale)
    if step is not None:
        return writing_into(step, (graph.slots[node.outputs[0]].shape, _F32))
    fallback = generic_kernel(node, graph)
    small = cpu_kernels.small_attention

    def attention(qa, ka, va, mask_a=None):
        out = small(qa, ka, va, mask_a, scale, groups)
        if out is None:
            return fallback(qa, ka, va) if mask_a is None else fallback(qa, ka, va, mask_a)
        return out
    return attention


def _half_attention(node, graph, dtype):
    """A half model's decoding attention: its query (and mask) widened, its static cache read
    in place (cpu_kernels.decode_attention_plan with the dtype's kind), the float32 output
    rounded to the dtype, as the op's forward computes it through small_attention; the forward
    where the cache is not C-contiguous."""
    bits = cpu_jit.half_bits()
    q, k, v, mask = node.args[:4]
    q_shape, out_shape = graph.slots[q.slot].shape, graph.slots[node.outputs[0]].shape
    kind = None if bits is None else bits.kind_of(dtype)
    step = None if bits is None else cpu_kernels.decode_attention_plan(
        q_shape, graph.slots[k.slot].shape, graph.slots[v.slot].shape,
        None if mask is None else graph.slots[mask.slot].shape, node.args[5], half=kind)
    if step is None:
        return None
    fallback = generic_kernel(node, graph)
    q32, out32 = np.empty(q_shape, _F32), np.empty(out_shape, _F32)
    mask32 = None if mask is None else np.empty(graph.slots[mask.slot].shape, _F32)

    def attention_half_dtype(qa, ka, va, *mask_and_out):
        if not (ka.flags.c_contiguous and va.flags.c_contiguous):
            return fallback(qa, ka, va, *mask_and_out[:-1])
        bits.widen_into(_flat_bits(qa), kind, q32.reshape(-1))
        if mask32 is not None:
            bits.widen_into(_flat_bits(mask_and_out[0]), kind, mask32.reshape(-1))
            step(q32, ka, va, mask32, out32)
        else:
            step(q32, ka, va, out32)
        out = mask_and_out[-1]
        bits.narrow_into(out32.reshape(-1), kind, out.reshape(-1).view(np.uint16))
        return out
    return writing_into(attention_half_dtype, (out_shape, dtype))
