# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled backward: an eager step's backward pass captured once per structure, then replayed.

MindSpore's division of labour: the forward runs eagerly, where users debug; the backward,
which they never see, runs as a graph. With `mindnlp.set_context(backward="compiled")`,
`loss.backward()` looks at the autograd graph the forward recorded and computes its
structure key: the op of every node in walk order, how nodes and leaves are connected, and
what each node's ctx holds (the shapes and dtypes of its saved tensors and arrays, the
values of its Python attributes). The first backward with a new key runs the ordinary
engine under capture (every backward formula is made of core ops, so it is recorded like
a forward); later ones with the same key bind the new step's saved tensors and arrays to
the graph's inputs and replay it, then accumulate the leaf gradients into `.grad`.

Anything the graph cannot stand for runs the eager engine: create_graph, retain_graph,
`autograd.grad`, hooks on nodes or leaves, ctx attributes of other kinds, and any key whose
capture broke (a backward formula reading a value into Python is guarded like a forward).
"""
import numpy as np

from .. import _tensor
from ..autograd import engine
from ..autograd.function import Node, _SavedOutput
from . import passes
from .capture import Tracer
from .compile import _log, config
from .lower import CompiledGraph, GuardFailure

# Engine bookkeeping on a Node; everything else in its __dict__ is what forward stored for backward.
_BOOKKEEPING = {"_fn", "next_functions", "_input_meta", "_output_meta", "_n_outputs", "needs_input_grad",
                "_saved_versions", "_released", "_non_differentiable", "_dirty", "_pre_hooks", "_retained",
                "materialize_grads"}
_SCALARS = (bool, int, float, str, bytes, type(None), np.dtype, type)


class _Unsupported(Exception):
    pass


class BackwardCache:
    """Compiled backward graphs keyed by the structure of the autograd graph."""

    def __init__(self):
        self.graphs = {}        # key -> CompiledGraph, or a reason string (that key runs eagerly)
        self.replays = 0

    def reset(self):
        self.graphs.clear()
        self.replays = 0

    def run(self, tensors, grad_tensors):
        """Backpropagate like `engine.run_backward` (accumulating); False when it must run eagerly."""
        try:
            leaves, arrays, key = _describe(tensors, grad_tensors)
        except _Unsupported as err:
            _log("graph_breaks", f"backward runs eagerly: {err}")
            return False
        entry = self.graphs.get(key)
        if isinstance(entry, str):
            return False
        if entry is None:
            if len(self.graphs) >= config.recompile_limit * 4:
                return False
            return self._capture(key, tensors, grad_tensors, leaves, arrays)
        try:
            grads = entry.run(arrays)
        except GuardFailure:
            return False
        self.replays += 1
        _release(tensors)
        _accumulate(leaves, [None if g is None else _tensor._wrap(g) for g in _expand(entry, grads)])
        return True

    def _capture(self, key, tensors, grad_tensors, leaves, arrays):
        """Run the eager engine while recording; its gradients are this step's result."""
        tracer = Tracer()
        tracer.add_inputs(arrays)
        with tracer:
            grads = engine.run_backward(tensors, grad_tensors, False, False, inputs=leaves, accumulate=False,
                                        compiled=False)
        graph = tracer.finish(tuple(grads))
        if graph is None:
            self.graphs[key] = tracer.breaks[0]
            _log("graph_breaks", f"backward graph break: {tracer.breaks[0]}")
        else:
            passes.optimize(graph, tracer.arrays)
            compiled = CompiledGraph(graph)
            replayed = list(_expand(compiled, compiled.run(arrays)))
            same = all((a is None) == (b is None) and (a is None or np.array_equal(a._data, b))
                       for a, b in zip(grads, replayed))
            self.graphs[key] = compiled if same else "the replayed backward differs from the eager one"
            _log("graphs", f"backward captured\n{graph}")
        _accumulate(leaves, grads)
        return True


def _expand(compiled, arrays):
    """The graph's outputs in the leaves' order, None where a leaf got no gradient."""
    it = iter(arrays)
    return [None if out is None else next(it) for out in compiled.graph.output.items]


def _accumulate(leaves, grads):
    for leaf, grad in zip(leaves, grads):
        if grad is None:
            continue
        grad = grad.detach()
        leaf.grad = grad if leaf.grad is None else leaf.grad + grad


def _release(tensors):
    """Free the saved state of the graph's nodes, as the eager engine does without retain_graph."""
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        node._release()
        stack.extend(e[0] for e in node.next_functions if e is not None and isinstance(e[0], Node))


def _describe(tensors, grad_tensors):
    """(leaf tensors, the graph's input tensors, structure key) of a backward from `tensors`.

    Nodes are numbered in depth-first discovery order from the roots; each contributes its
    op, its edges (node numbers or leaf numbers) and its ctx; every tensor or array the
    ctx holds becomes a graph input (wrapped as a tensor) described by shape and dtype.
    """
    nodes, order = [], {}
    stack = [t.grad_fn for t in reversed(tensors)]
    while stack:
        node = stack.pop()
        if node in order:
            continue
        if node._released:
            raise _Unsupported("the graph was already freed")
        if node._pre_hooks or node._retained:
            raise _Unsupported("a tensor inside the graph has hooks or retains its grad")
        order[node] = len(nodes)
        nodes.append(node)
        stack.extend(e[0] for e in reversed(node.next_functions) if e is not None and isinstance(e[0], Node))
    inputs, key, leaves = [], [], {}
    for g in grad_tensors:
        if g is not None:
            inputs.append(g)
        key.append(None if g is None else (g.shape, g._data.dtype))
    for node in nodes:
        edges = []
        for edge in node.next_functions:
            if edge is None:
                edges.append(None)
            elif isinstance(edge[0], Node):
                edges.append((order[edge[0]], edge[1]))
            else:
                leaf = edge[0]
                if leaf._hooks or leaf.__dict__.get("_post_accumulate_grad_hooks"):
                    raise _Unsupported("a leaf has gradient hooks")
                edges.append(("leaf", leaves.setdefault(id(leaf), (len(leaves), leaf))[0]))
        ctx = tuple((name, _leaf_key(value, inputs)) for name, value in node.__dict__.items()
                    if name not in _BOOKKEEPING)
        key.append((node._fn, node.materialize_grads, node._input_meta, node._output_meta, tuple(edges), ctx))
    return [leaf for _, leaf in sorted(leaves.values(), key=lambda p: p[0])], inputs, tuple(key)


def _leaf_key(value, inputs):
    """A hashable description of one ctx attribute; tensors and arrays go to `inputs`."""
    if isinstance(value, _tensor.Tensor):
        inputs.append(value)
        return ("t", value.shape, value._data.dtype)
    if isinstance(value, _SavedOutput):
        inputs.append(_tensor._wrap(value.data))
        return ("o", value.data.shape, value.data.dtype, value.output_nr, value.requires_grad)
    if isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        inputs.append(_tensor._wrap(value))
        return ("a", value.shape, value.dtype)
    if isinstance(value, (tuple, list)):
        return (type(value),) + tuple(_leaf_key(v, inputs) for v in value)
    if isinstance(value, _SCALARS) or isinstance(value, np.generic):
        return value
    if isinstance(value, slice):
        return ("s", value.start, value.stop, value.step)
    if isinstance(value, dict):
        return ("d",) + tuple((k, _leaf_key(v, inputs)) for k, v in value.items())
    if value is Ellipsis:
        return value
    from .._device import device
    from .._dtype import dtype
    if isinstance(value, (device, dtype)):
        return value
    if type(value).__module__.startswith("mindnlp.core.") and hasattr(value, "__dict__"):
        # A plain holder of what forward computed for backward (the loss's class targets).
        return (type(value),) + tuple((k, _leaf_key(v, inputs)) for k, v in vars(value).items())
    raise _Unsupported(f"a backward ctx holds a {type(value).__name__}")


CACHE = BackwardCache()
