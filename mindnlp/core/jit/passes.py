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
"""
import numpy as np

from ..ops import elementwise, linalg
from .graph import NO_GUARD, Node, SlotRef

_F32 = np.dtype(np.float32)


def optimize(graph, arrays):
    """Fold constants, drop dead nodes, fuse bias adds. `arrays` maps slots to their captured arrays."""
    fold_constants(graph, arrays)
    eliminate_dead_code(graph)
    fuse_bias_add(graph)


def matmul_bias(a, b, bias):
    """a @ b + bias for float32 host arrays, a (m, k), b (k, n) and bias (n,): MatMul then Add."""
    return linalg._matmul_arrays(np, a, b, bias)


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


def eliminate_dead_code(graph):
    live = set(graph.output_slots()) | set(graph.rebinds) | set(graph.rebinds.values())
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
    slots = graph.slots
    readers = {}
    for node in graph.nodes:
        for s in node.reads():
            readers.setdefault(s, []).append(node)
    kept_out = set(graph.output_slots()) | set(graph.rebinds) | set(graph.rebinds.values())
    viewed = {slot.root for slot in slots if slot.root != slot.index}
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


def _bias_operand(add, product, slots):
    """The slot `add` adds to `product` when add is a plain product + vector, else None."""
    if add.op is not elementwise.Add or add.kwargs or len(add.args) != 2 or add.writes is not None:
        return None
    if not all(type(a) is SlotRef and not a.array for a in add.args):
        return None
    others = [a.slot for a in add.args if a.slot != product]
    return slots[others[0]] if len(others) == 1 else None
