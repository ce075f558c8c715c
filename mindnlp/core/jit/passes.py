# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Passes on a captured Graph, run before lowering.

Constant folding: a node that reads only constants (slots made from Python values and
shapes, never written in place) computed the same arrays at capture as it would at every
replay, so its outputs become constants holding the captured values. Masks, position
ranges and rotary tables built from shapes vanish from the replay this way.

Dead-code elimination: a node none of whose outputs reaches the graph's outputs, a value
guard or an in-place write is dropped (a model computes hidden states, attention masks or
caches its caller did not ask for).

Bias fusion: a float32 matrix product whose only reader adds a bias vector to it (GPT-2's
Conv1D, x @ W + b) becomes one `matmul_bias` node; the product's kernels add the bias as
they write each output, which rounds each sum as the separate add did.

Norm casts: a half array cast to float32, normalised and cast back (HF's RMSNorm on a half
model: `norm(x.float()).to(dtype)`, twice a layer) becomes one norm of the half array, which
computes in float32 and rounds its result once itself: the same bits, two nodes fewer.

Residual norms: a residual add whose sum is normalised (a decoder layer's two `x = x + h;
norm(x)`), and, for a half norm without weight, the multiplication by the weight that HF's
half RMSNorm rounds on its own (`weight * norm(x).to(dtype)`), become one `residual_norm`
node giving both the sum (the residual stream, read on) and the normed rows, for a decoding
step's rows: one compiled loop where two or three nodes each paid a kernel call, each result
rounded as its op rounded it.

Shared-input linears: the linear layers of a decoding step that read the same few rows
(Llama's query/key/value projections, its gate and up projections) become one `linear_many`
node, whose matrix-vector kernel streams all their weights in one launch: one wake-up of the
threads instead of several, and each thread's memory streams kept going from one weight to
the next (a SmolLM-sized step's projections run about 1.2x faster). Each output is computed
as its own linear computed it. Quantized linears of one format (bits, codebook, offsets and
bias or not) that share an input become one `quantized_linear_many` node the same way.

Elementwise chains: float32 or half elementwise ops that feed one another, each result read
only by the next (a hand-written norm's `x * rsqrt(var + eps) * w`, a residual scaled and added,
attention scores scaled and masked), become one `elementwise_chain` node: one compiled loop
reading each input once and writing only the chain's result (backends.cpu_jit_chains, which
also says which ops qualify: those rounded exactly, so the loop gives the eager bits). The
blocks of the model families are already single ops (norms, rotary, gated activations,
attention); this serves the code users write against the core, and what a compiled
backward's graph chains. Half ops (a bfloat16 model's residual adds and norm weights) become
chains even alone: NumPy's half arithmetic is a slow per-element call, where the loop widens,
computes in float32 and rounds as the op does.
"""
import collections
import math

import numpy as np

from .. import _tensor
from ..autograd import function as _function
from ..backends import cpu_jit, cpu_kernels
from ..nn.functional.linear import _Linear
from ..nn.functional.normalization import _LayerNorm
from ..nn.functional.quantized import _QuantizedLinear, quantized_product
from ..ops import conversion, elementwise, linalg
from ..ops._helpers import HALF_NP, narrow
from .graph import NO_GUARD, Node, SlotRef

_F32 = np.dtype(np.float32)


# Fusions registered by the owners of ops outside the core (register): the transformers'
# decoding attention fuses its split-heads and rotary ops, which live there.
_REGISTERED = []


def register(fuse):
    """Run `fuse(graph)` in every optimize(), after the core's own fusions of norms and
    linears (whose nodes it may read) and before elementwise chains. Returns `fuse`."""
    if fuse not in _REGISTERED:
        _REGISTERED.append(fuse)
    return fuse


def optimize(graph, arrays):
    """Fold constants, drop dead nodes, fuse bias adds, residual norms, shared-input linears,
    the registered fusions and elementwise chains. `arrays` maps slots to their captured arrays."""
    fold_constants(graph, arrays)
    eliminate_dead_code(graph)
    fuse_bias_add(graph)
    fold_norm_casts(graph)
    if cpu_jit.load() is not None:
        fuse_residual_norms(graph)
    fuse_shared_input_linears(graph)
    for fuse in _REGISTERED:
        fuse(graph)
    if cpu_jit.chains() is not None:
        fuse_elementwise(graph)


def matmul_bias(a, b, bias):
    """a @ b + bias for float32 host arrays, a (m, k), b (k, n) and bias (n,): MatMul then Add."""
    return linalg._matmul_arrays(np, a, b, bias)


def linear_many(x, weights, biases):
    """x @ w.T (+ b) for each weight and bias (None: no bias) of host arrays of one dtype
    (float32, bfloat16 or float16), as each separate linear layer computed it; a tuple of
    outputs."""
    rows = x.reshape(-1, x.shape[-1])
    return tuple(linalg._matmul_arrays(np, rows, w.T, b).reshape(x.shape[:-1] + (w.shape[0],))
                 for w, b in zip(weights, biases))


def quantized_linear_many(x, qs, scales, biases, offsets, bits, codebook):
    """Each quantized linear of x (weights qs[t], scales[t], biases[t] or None, offsets None or
    offsets[t], of one format) as its own node computed it; a tuple of outputs."""
    rows = x.reshape(-1, x.shape[-1])
    return tuple(quantized_product(rows, q, s, bits, b, None if offsets is None else offsets[t], codebook)
                 .reshape(x.shape[:-1] + (s.shape[0],)) for t, (q, s, b) in enumerate(zip(qs, scales, biases)))


def fold_constants(graph, arrays):
    slots = graph.slots
    kept = []
    for node in graph.nodes:
        if node.writes is not None or node.expect is not NO_GUARD or not _foldable(node, slots):
            kept.append(node)
            continue
        for out in node.outputs:
            if out is not None:
                slot = slots[out]
                slot.kind = "const"
                slot.value = arrays[out].copy()   # the capture's own result may reach the caller
                slot.root = out
    graph.nodes = kept


def _foldable(node, slots):
    reads = node.reads()
    if not reads:
        return False          # an op of no tensors (a creation Function): keep it honest
    for s in reads:
        slot = slots[s]
        if not slot.constant or slots[slot.root].mutated:
            return False
    return all(o is None or (slots[o].constant and not slots[slots[o].root].mutated) for o in node.outputs)


def viewed_roots(slots):
    """The slots some other slot is a view of."""
    return {slot.root for slot in slots if slot.root != slot.index}


def written_between(graph, first, last, roots):
    """Whether a node in graph.nodes[first:last] writes into the memory of one of `roots`."""
    slots = graph.slots
    return any(slots[w].root in roots for n in graph.nodes[first:last] if n.writes for w in n.writes)


def eliminate_dead_code(graph):
    live = graph.escaping_slots()
    kept = []
    for node in reversed(graph.nodes):
        needed = node.writes is not None or node.expect is not NO_GUARD or any(
            o in live for o in node.outputs if o is not None)
        if needed:
            kept.append(node)
            live.update(node.reads())
    kept.reverse()
    graph.nodes = kept
    for slot in graph.slots:
        if slot.kind in ("const", "external") and slot.index not in live:
            slot.kind = "dead"


def fuse_bias_add(graph):
    """Replace each MatMul + Add(bias) pair the module docstring describes by one matmul_bias
    node, at the Add's place (its operands are all computed by then)."""
    slots, readers = graph.slots, slot_readers(graph)
    kept_out, viewed = graph.escaping_slots(), viewed_roots(slots)
    fused = {}
    for node in graph.nodes:
        if node.op is not linalg.MatMul or node.kwargs or not all(type(a) is SlotRef for a in node.args):
            continue
        product = node.outputs[0]
        users = readers.get(product, [])
        if product in kept_out or product in viewed or len(users) != 1:
            continue
        add = users[0]
        bias = _bias_operand(add, product, slots)
        a, b = (slots[r.slot] for r in node.args)
        if bias is None or len(a.shape) != 2 or len(b.shape) != 2 or bias.shape != (b.shape[1],) or any(
                s.dtype != _F32 or getattr(s.device, "type", "cpu") != "cpu" for s in (a, b, bias)):
            continue
        fused[id(add)] = Node(matmul_bias, (*node.args, SlotRef(bias.index)), {}, add.outputs, False)
        fused[id(node)] = None
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


def fold_norm_casts(graph):
    """Replace each half array cast to float32, normalised and cast back to its dtype (the
    norm of the module docstring) by one _LayerNorm node of the half array, at the norm's
    place: the norm's forward widens a half input and rounds its float32 result once, which
    is what the two casts did."""
    slots, readers = graph.slots, slot_readers(graph)
    kept_out, viewed = graph.escaping_slots(), viewed_roots(slots)

    def only_reader(slot):
        users = readers.get(slot, [])
        return users[0] if len(users) == 1 and slot not in kept_out and slot not in viewed else None

    fused = {}
    for widen in graph.nodes:
        if not _plain_cast(widen) or slots[widen.args[0].slot].dtype not in HALF_NP or \
                slots[widen.outputs[0]].dtype != _F32:
            continue
        norm = only_reader(widen.outputs[0])
        if norm is None or norm.op is not _LayerNorm or norm.kwargs or norm.writes is not None or \
                norm.expect is not NO_GUARD or type(norm.args[0]) is not SlotRef or \
                norm.args[0].slot != widen.outputs[0] or norm.reads().count(widen.outputs[0]) != 1 or \
                widen.outputs[0] in [getattr(a, "slot", None) for a in norm.args[1:]]:
            continue
        narrow_back = only_reader(norm.outputs[0])
        if narrow_back is None or not _plain_cast(narrow_back) or \
                slots[narrow_back.outputs[0]].dtype != slots[widen.args[0].slot].dtype:
            continue
        fused[id(norm)] = Node(_LayerNorm, (widen.args[0],) + tuple(norm.args[1:]), {}, narrow_back.outputs, False)
        fused[id(widen)] = fused[id(narrow_back)] = None
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


_ADD, _MUL = (("add", ("in", 0), ("in", 1)),), (("mul", ("in", 0), ("in", 1)),)


def residual_norm(a, b, weight, bias, dims, eps, centered, scale):
    """(a + b, the norm of a + b, times `scale` where given) for host arrays of one dtype
    (float32 or half), as the Add, _LayerNorm and Mul nodes fuse_residual_norms replaced
    computed them, each result rounded to the dtype."""
    total = elementwise_chain(_ADD, a, b)
    wrap = _tensor._wrap
    normed = _LayerNorm.forward(_function.Node(_LayerNorm), wrap(total), None if weight is None else wrap(weight),
                                None if bias is None else wrap(bias), dims, eps, centered)
    return total, normed if scale is None else elementwise_chain(_MUL, normed, scale)


def fuse_residual_norms(graph):
    """Replace each residual add and norm (and half weight multiplication) the module
    docstring describes by one residual_norm node at the add's place, for a decoding step's
    rows (a prompt's norm runs split over numba's pool, which the fused loop would not); the
    add's sum stays an output, the norm's (or the multiplication's) result the other."""
    slots, readers = graph.slots, slot_readers(graph)
    kept_out, viewed = graph.escaping_slots(), viewed_roots(slots)
    position = {id(node): i for i, node in enumerate(graph.nodes)}
    producer = {o: node for node in graph.nodes for o in node.outputs if o is not None}
    fused = {}
    for norm in graph.nodes:
        add = _residual_add(norm, producer, slots, viewed)
        if add is None or id(add) in fused or written_between(graph, position[id(add)], position[id(norm)],
                                                                {slots[add.outputs[0]].root}):
            continue
        weight, bias, dims, eps, centered = norm.args[1:]
        scale, last = None, norm
        if slots[add.outputs[0]].dtype in HALF_NP and weight is None and bias is None:
            mul = _weight_product(norm, readers, slots, kept_out, viewed)
            if mul is not None and not written_between(graph, position[id(norm)], position[id(mul)],
                                                        {slots[norm.outputs[0]].root}):
                scale, last = next(a for a in mul.args if a.slot != norm.outputs[0]), mul
        fused[id(add)] = Node(residual_norm, (*add.args, weight, bias, dims, eps, centered, scale), {},
                              [add.outputs[0], last.outputs[0]], True)
        fused[id(norm)] = fused[id(last)] = None
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


def _residual_add(norm, producer, slots, viewed):
    """The Add node whose sum `norm` normalises, when both are the plain case: a _LayerNorm
    over the last dimension of host float32 or half rows with parameters (not computed in the
    graph), of the sum of two arrays of its shape and dtype, rows the norm normalises on the
    calling thread (a decoding step's; a prompt's split over numba's pool); else None."""
    if norm.op is not _LayerNorm or norm.kwargs or norm.writes is not None or norm.expect is not NO_GUARD or \
            type(norm.args[0]) is not SlotRef or norm.args[0].array:
        return None
    x = slots[norm.args[0].slot]
    if len(norm.args[3]) != 1:      # over the last dimension alone, the width a scale vector has
        return None
    parameters = [a for a in norm.args[1:3] if a is not None]
    if any(type(p) is not SlotRef or p.array or slots[p.slot].kind not in ("external", "const") or
           slots[p.slot].dtype not in (_F32, x.dtype) for p in parameters):
        return None
    add = producer.get(x.index)
    if add is None or add.op is not elementwise.Add or add.kwargs or add.writes is not None or \
            add.expect is not NO_GUARD or len(add.args) != 2 or x.index in viewed:
        return None
    if not all(type(a) is SlotRef and not a.array for a in add.args) or add.args[0].slot == add.args[1].slot:
        return None
    operands = [slots[a.slot] for a in add.args]
    if x.dtype not in _CHAIN_DTYPES or getattr(x.device, "type", "cpu") != "cpu" or not x.shape or \
            cpu_kernels._norm_pool(math.prod(x.shape[:-1]), x.shape[-1]) is not None or \
            any(o.shape != x.shape or o.dtype != x.dtype or getattr(o.device, "type", "cpu") != "cpu" for o in operands):
        return None
    return add


def _weight_product(norm, readers, slots, kept_out, viewed):
    """The Mul node that is the only reader of a half norm's result, multiplying it by a
    parameter vector of its dtype along the last dimension (HF's half RMSNorm); else None."""
    out = norm.outputs[0]
    users = readers.get(out, [])
    if len(users) != 1 or out in kept_out or out in viewed:
        return None
    mul = users[0]
    if mul.op is not elementwise.Mul or mul.kwargs or mul.writes is not None or mul.expect is not NO_GUARD or \
            len(mul.args) != 2 or not all(type(a) is SlotRef and not a.array for a in mul.args):
        return None
    others = [slots[a.slot] for a in mul.args if a.slot != out]
    if len(others) != 1 or slots[mul.outputs[0]].shape != slots[out].shape:
        return None
    scale, width = others[0], slots[out].shape[-1]
    if scale.kind not in ("external", "const") or scale.dtype != slots[out].dtype or not scale.shape or \
            scale.shape[-1] != width or math.prod(scale.shape) != width:
        return None
    return mul


def _plain_cast(node):
    """Whether the node is a Cast of one array (no in-place write, no guard)."""
    return node.op is conversion.Cast and not node.kwargs and node.writes is None and node.expect is NO_GUARD \
        and len(node.args) == 2 and type(node.args[0]) is SlotRef and not node.args[0].array


def slot_readers(graph):
    """slot -> the nodes reading it, in graph order."""
    readers = {}
    for node in graph.nodes:
        for s in node.reads():
            readers.setdefault(s, []).append(node)
    return readers


def _bias_operand(add, product, slots):
    """The slot `add` adds to `product` when add is a plain product + vector, else None."""
    if add.op is not elementwise.Add or add.kwargs or len(add.args) != 2 or add.writes is not None:
        return None
    if not all(type(a) is SlotRef and not a.array for a in add.args):
        return None
    others = [a.slot for a in add.args if a.slot != product]
    return slots[others[0]] if len(others) == 1 else None


def fuse_shared_input_linears(graph):
    """Replace the linear nodes (float32 or half, or quantized of one format) reading the same
    few rows by one `linear_many` or `quantized_linear_many` node at the first one's place,
    provided their parameters exist there and nothing writes into the input in between."""
    slots = graph.slots
    groups, order = {}, []
    for position, node in enumerate(graph.nodes):
        key = _shared_input_key(node, slots)
        if key is None:
            continue
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append((position, node))
    fused = {}
    for key in order:
        members = groups[key]
        if len(members) < 2:
            continue
        first, last = members[0][0], members[-1][0]
        if written_between(graph, first, last, {slots[key[0]].root}):
            continue
        nodes = [node for _, node in members]
        parameters = [r.slot for n in nodes for r in n.args[1:] if type(r) is SlotRef]
        if len(set(parameters)) != len(parameters):
            continue  # a parameter shared by two of them: keep the arguments one slot each
        fused[id(nodes[0])] = _fused_linears(nodes)
        for node in nodes[1:]:
            fused[id(node)] = None
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


def _fused_linears(nodes):
    x, outputs = nodes[0].args[0], [node.outputs[0] for node in nodes]
    if nodes[0].op is _Linear:
        weights = tuple(node.args[1] for node in nodes)
        biases = tuple(node.args[2] if len(node.args) > 2 else None for node in nodes)
        return Node(linear_many, (x, weights, biases), {}, outputs, True)
    qs, scales, biases, offsets = (tuple(node.args[k] for node in nodes) for k in (1, 2, 3, 5))
    bits, codebook = nodes[0].args[4], nodes[0].args[6]
    return Node(quantized_linear_many, (x, qs, scales, biases, None if offsets[0] is None else offsets, bits, codebook),
                {}, outputs, True)


def _shared_input_key(node, slots):
    """What a linear node must share with others to join them in one launch: its input slot,
    whether it has a bias, and for a quantized one its format; None for any other node, or a
    linear that is not a plain product of a few float32 host rows with parameters (or
    constants) for its weight, bias, scales and offsets."""
    if node.op not in (_Linear, _QuantizedLinear) or node.kwargs or node.writes is not None or \
            node.expect is not NO_GUARD:
        return None
    if node.op is _Linear:
        args = node.args[:2] if len(node.args) == 3 and node.args[2] is None else node.args
        x, parameters, fmt = args[0], args[1:], (len(args) == 3,)
    else:
        x, q, scales, bias, bits, offsets, codebook = node.args
        parameters = tuple(a for a in (q, scales, bias, offsets) if a is not None)
        fmt = ("quantized", bits, codebook, bias is not None, offsets is not None)
    if not all(type(a) is SlotRef and not a.array for a in (x,) + tuple(parameters)):
        return None
    xs, params = slots[x.slot], [slots[a.slot] for a in parameters]
    rows = int(np.prod(xs.shape[:-1]))
    if node.op is _Linear:
        if len(params[0].shape) != 2:
            return None
        # the matrix-vector kernel's weights and the tiny ones (see cpu_kernels.matmul) apart
        out_features, in_features = params[0].shape
        fmt += (cpu_kernels.few_rows_product(rows, in_features, out_features),)
    if any(p.kind not in ("external", "const") for p in params) or rows > cpu_kernels._FEW_ROWS:
        return None
    floats = [xs] + (params if node.op is _Linear else params[1:])   # a quantized weight is integers
    # float32, or (unquantized) one half dtype throughout: cpu_jit_half's kernel
    dtypes = (_F32,) + (HALF_NP if node.op is _Linear else ())
    if xs.dtype not in dtypes or any(s.dtype != xs.dtype for s in floats) or \
            any(getattr(s.device, "type", "cpu") != "cpu" for s in [xs] + params):
        return None
    return (x.slot,) + fmt


# Elementwise ops chained by fuse_elementwise: op -> (instruction, arity); and how each
# instruction is computed eagerly (the ops' own NumPy calls, Python numbers included).
_CHAINED = {
    elementwise.Add: ("add", 2), elementwise.Sub: ("sub", 2), elementwise.Mul: ("mul", 2),
    elementwise.Div: ("div", 2), elementwise.Neg: ("neg", 1), elementwise.abs.function: ("abs", 1),
    elementwise.sqrt.function: ("sqrt", 1), elementwise.rsqrt.function: ("rsqrt", 1),
    elementwise.reciprocal.function: ("reciprocal", 1), elementwise.square.function: ("square", 1),
}
_NUMPY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "neg": np.negative,
    "abs": np.abs, "sqrt": np.sqrt, "rsqrt": lambda a: 1 / np.sqrt(a), "reciprocal": lambda a: 1 / a,
    "square": lambda a: a * a,
}
_F32_MAX = float(np.finfo(np.float32).max)
_CHAIN_DTYPES = (_F32,) + HALF_NP


def elementwise_chain(program, *arrays):
    """A chain's result computed instruction by instruction, as its ops computed it (see
    backends.cpu_jit_chains for the program's form): half arrays in float32, each result
    rounded to their dtype."""
    dtype = arrays[0].dtype
    if dtype in HALF_NP:
        arrays = [a.astype(_F32) for a in arrays]
    results = []
    for name, *operands in program:
        values = [arrays[v] if kind == "in" else results[v] if kind == "tmp" else v for kind, v in operands]
        result = _NUMPY[name](*values)
        results.append(narrow(result, dtype).astype(_F32) if dtype in HALF_NP else result)
    return narrow(results[-1], dtype) if dtype in HALF_NP else results[-1]


def broadcast_kind(shape, out_shape):
    """How an input of this shape is read for a result of out_shape, seen as rows (R, C): the
    "full" array, a "row" (C,), a "column" (R,), "one" element, or a "block" of the last rows
    repeated over the leading dimensions (an attention mask (T, T) over (B, H, T, T)); None
    for other broadcasts."""
    if len(shape) > len(out_shape):
        return None
    out_shape = tuple(out_shape)
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    if padded == out_shape:
        return "full"
    if all(d == 1 for d in padded):
        return "one"
    if all(d == 1 for d in padded[:-1]) and padded[-1] == out_shape[-1]:
        return "row"
    if padded[-1] == 1 and padded[:-1] == out_shape[:-1]:
        return "column"
    leading = next(j for j, d in enumerate(padded) if d != 1)
    if padded[leading:] == out_shape[leading:]:
        return "block"
    return None


def fuse_elementwise(graph):
    """Replace each chain the module docstring describes (two ops or more, or one of half
    dtype; one result shape) by one `elementwise_chain` node at the place of its last op, provided nothing writes into
    the chain's inputs between its first op and its last."""
    slots = graph.slots
    instructions = {id(node): _chain_instruction(node, slots) for node in graph.nodes}
    chainable = [node for node in graph.nodes if instructions[id(node)] is not None]
    by_output = {node.outputs[0]: node for node in chainable}
    readers = collections.Counter(s for node in graph.nodes for s in node.reads())
    escaping, viewed = graph.escaping_slots(), viewed_roots(slots)
    consumer = {}
    for node in chainable:
        for s in node.reads():
            producer = by_output.get(s)
            if producer is not None and readers[s] == 1 and s not in escaping and s not in viewed and \
                    slots[s].shape == slots[node.outputs[0]].shape:
                consumer[id(producer)] = node
    chains = {}
    for node in chainable:
        last = node
        while id(last) in consumer:
            last = consumer[id(last)]
        chains.setdefault(id(last), []).append(node)
    position = {id(node): i for i, node in enumerate(graph.nodes)}
    fused = {}
    for members in chains.values():
        if len(members) < 2 and slots[members[0].outputs[0]].dtype == _F32:
            continue        # one float32 op: its own kernel serves it (half ops have none)
        program, inputs = _chain_program(members, instructions)
        if written_between(graph, position[id(members[0])], position[id(members[-1])],
                            {slots[s].root for s in inputs}):
            continue
        fused[id(members[-1])] = Node(elementwise_chain, (program, *[SlotRef(s) for s in inputs]), {},
                                      [members[-1].outputs[0]], False)
        for node in members[:-1]:
            fused[id(node)] = None
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


def _chain_instruction(node, slots):
    """(instruction, operands) for a node fuse_elementwise may chain: one of _CHAINED's ops on
    host arrays of its result's dtype, float32 or half (read as broadcast_kind allows), and
    Python numbers within float32's range, giving an array of at least one dimension and one
    element; else None."""
    chained = _CHAINED.get(node.op)
    if chained is None or node.kwargs or node.writes is not None or node.expect is not NO_GUARD or \
            node.tuple_out or len(node.args) != chained[1] or node.outputs[0] is None:
        return None
    out = slots[node.outputs[0]]
    if out.dtype not in _CHAIN_DTYPES or not out.shape or 0 in out.shape or \
            getattr(out.device, "type", "cpu") != "cpu":
        return None
    for arg in node.args:
        if type(arg) is SlotRef:
            slot = slots[arg.slot]
            if arg.array or slot.dtype != out.dtype or getattr(slot.device, "type", "cpu") != "cpu" or \
                    broadcast_kind(slot.shape, out.shape) is None:
                return None
        elif type(arg) not in (int, float) or not abs(arg) <= _F32_MAX:
            return None
    return chained[0], node.args


def _chain_program(members, instructions):
    """The program of a chain's nodes (in graph order, each node's _chain_instruction in
    `instructions` by id) and the slots of its inputs."""
    program, inputs, results = [], [], {}
    for node in members:
        name, args = instructions[id(node)]
        operands = []
        for arg in args:
            if type(arg) is not SlotRef:
                operands.append(("const", arg))
            elif arg.slot in results:
                operands.append(("tmp", results[arg.slot]))
            else:
                if arg.slot not in inputs:
                    inputs.append(arg.slot)
                operands.append(("in", inputs.index(arg.slot)))
        results[node.outputs[0]] = len(program)
        program.append((name, *operands))
    return tuple(program), inputs
