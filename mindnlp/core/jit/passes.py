"""Passes on a captured Graph, run before lowering.

Constant folding: a node that reads only constants (slots made from Python values and
shapes, never written in place) computed the same arrays at capture as it would at every
replay, so its outputs become constants holding the captured values. Masks, position
ranges and rotary tables built from shapes vanish from the replay this way.

Dead-code elimination: a node none of whose outputs reaches the graph's outputs, a value
guard or an in-place write is dropped (a model computes hidden states, attention masks or
caches its caller did not ask for).
"""
from .graph import NO_GUARD


def optimize(graph, arrays):
    """Fold constants, then drop dead nodes. `arrays` maps slots to their captured arrays."""
    fold_constants(graph, arrays)
    eliminate_dead_code(graph)


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
