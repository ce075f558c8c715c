# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Capture a model for export, once per size the dynamic axes take, and merge the captures.

The graph is core.jit's (capture.py): each op with its non-tensor arguments as constants.
Export also records where each op was called (the module and the source line, for error
messages) and captures again at other sizes of the dynamic axes (symbolic.py) so that the
integers which follow those sizes become polynomials of them: `SymbolicGraph` is the
example's graph with such polynomials in the op arguments and slot shapes.
"""
import functools
import os
import sys
import warnings

import numpy as np

from .. import _tensor
from ..autograd import grad_mode
from ..jit import passes
from ..jit.capture import Tracer, Unsupported, flatten_inputs
from ..jit.graph import NO_GUARD, SlotRef
from .errors import OnnxExporterError
from .symbolic import Poly, assignments, fit

_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_in_onnx_export():
    """True while export captures a model (code may choose a graph-friendly form then)."""
    from ..jit.capture import active

    return isinstance(active(), ExportTracer)


class ExportTracer(Tracer):
    """A Tracer that remembers, for each node, the module and source line that called it."""

    def __init__(self, module_names):
        super().__init__(fullgraph=False)
        self.module_names = module_names
        self.sites = {}

    def _add_node(self, *args, **kwargs):
        count = len(self.graph.nodes)
        super()._add_node(*args, **kwargs)
        if len(self.graph.nodes) > count:
            self.sites[id(self.graph.nodes[-1])] = self._site()

    def value_guard(self, t):
        count = len(self.graph.nodes)
        super().value_guard(t)
        if len(self.graph.nodes) > count:
            self.sites[id(self.graph.nodes[-1])] = self._site()

    def _site(self):
        """'module.path (file:line in function)' of the innermost caller outside mindnlp.core."""
        frame = sys._getframe(2)
        line = module = None
        while frame is not None and module is None:
            code = frame.f_code
            if line is None and _CORE_DIR not in code.co_filename:
                line = f"{code.co_filename}:{frame.f_lineno} in {code.co_name}"
            owner = frame.f_locals.get("self")
            if line is not None and owner is not None:
                module = self.module_names.get(id(owner))
            frame = frame.f_back
        where = line or "?"
        return f"{module or '<model>'} ({where})"


class Capture:
    """One capture: the graph, the sites of its nodes, and its outputs' structure."""

    def __init__(self, graph, sites, arrays):
        self.graph = graph
        self.sites = sites
        self.arrays = arrays


def capture(fn, args, kwargs, module_names):
    """Run fn(*args, **kwargs) once under an ExportTracer; a break raises OnnxExporterError."""
    try:
        tensors, _ = flatten_inputs(args, kwargs)
    except Unsupported as err:
        raise OnnxExporterError(f"export cannot take {err}") from None
    tracer = ExportTracer(module_names)
    tracer.add_inputs(tensors)
    with grad_mode.no_grad(), tracer:
        result = fn(*args, **kwargs)
    graph = tracer.finish(result)
    if graph is None:
        raise OnnxExporterError("the model cannot be exported as one graph: " + "; ".join(tracer.breaks))
    if graph.rebinds:
        raise OnnxExporterError("the model writes into its inputs or parameters in place, which ONNX cannot express")
    return Capture(graph, tracer.sites, tracer.arrays)


def op_name(op):
    """The name converters are registered under: the class name, or a raw kernel's name."""
    if isinstance(op, functools.partial):
        return op.func.__name__
    return getattr(op, "__name__", type(op).__name__)


def resized(array, axis, size):
    """array with `axis` made `size` long by repeating its entries cyclically."""
    return np.take(array, np.arange(size) % array.shape[axis], axis=axis)


def map_tensors(value, fn):
    """value with each tensor leaf t replaced by fn(t) (tuples, lists and dicts rebuilt)."""
    if isinstance(value, _tensor.Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


class SymbolicGraph:
    """The example's graph with sizes as Polys: `args`/`kwargs` by id(node), `shapes` per slot,
    `const_values[slot]` the constant's value at every capture (the first is the example's),
    `arrays` the example capture's arrays by slot."""

    def __init__(self, base, args, kwargs, shapes, const_values, sizes):
        self.graph = base.graph
        self.sites = base.sites
        self.arrays = base.arrays
        self.args = args
        self.kwargs = kwargs
        self.shapes = shapes
        self.const_values = const_values
        self.sizes = sizes

    def site(self, node):
        return self.sites.get(id(node), "<model>")


def trace(fn, args, kwargs, axes, module_names):
    """Capture fn at the example and, for the dynamic `axes` ({leaf index: {axis: symbol}}),
    at the other sizes symbolic.assignments asks for; merge them into a SymbolicGraph."""
    leaves = []
    map_tensors((args, kwargs), leaves.append)
    base_sizes, sums = {}, []
    for leaf, dims in axes.items():
        for axis, name in dims.items():
            size = leaves[leaf].shape[axis]
            symbols, constant = axis_terms(name)
            if len(symbols) != 1 or constant:
                sums.append((name, symbols, constant, size))
            elif base_sizes.setdefault(name, size) != size:
                raise OnnxExporterError(f"dynamic axis '{name}' has sizes {base_sizes[name]} and {size} in the example")
    for name, symbols, constant, size in sums:
        unknown = [s for s in symbols if s not in base_sizes]
        if unknown:
            raise OnnxExporterError(f"dynamic axis '{name}' adds {unknown}, which name no axis of their own")
        if sum(base_sizes[s] for s in symbols) + constant != size:
            raise OnnxExporterError(f"dynamic axis '{name}' is {size} long in the example, not the sum of its terms")
    base = capture(fn, args, kwargs, module_names)
    if not base_sizes:
        sizes = [{}]
        captures = [base]
    else:
        points, check = assignments(base_sizes)
        sizes = points + [check]
        captures = [base] + [capture(fn, *_at_sizes(args, kwargs, axes, s), module_names) for s in sizes[1:]]
    return _merge(captures, sizes)


def axis_terms(name):
    """A dynamic axis name as (symbols, constant). A name with `+` is a sum of other axes
    (and integers): a decoder's attention mask spans "past_sequence + sequence"."""
    symbols, constant = [], 0
    for term in (t.strip() for t in name.split("+")):
        if term.lstrip("-").isdigit():
            constant += int(term)
        elif term:
            symbols.append(term)
    return symbols, constant


def _at_sizes(args, kwargs, axes, sizes):
    counter = iter(range(1 << 30))

    def grow(t):
        dims = axes.get(next(counter), {})
        array = t.numpy()
        for axis, name in dims.items():
            symbols, constant = axis_terms(name)
            array = resized(array, axis, sum(sizes[s] for s in symbols) + constant)
        return _tensor._wrap(np.ascontiguousarray(array)) if dims else t

    return map_tensors((args, kwargs), grow)


def _merge(captures, sizes):
    base = captures[0]
    graphs = [c.graph for c in captures]
    g0 = base.graph
    for c, s in zip(captures[1:], sizes[1:]):
        g = c.graph
        for n0, n in zip(g0.nodes, g.nodes):
            if op_name(n0.op) != op_name(n.op):
                raise OnnxExporterError(
                    f"the model runs different ops when the dynamic axes are {s}: {op_name(n0.op)} at "
                    f"{base.sites.get(id(n0), '<model>')} became {op_name(n.op)} (control flow that depends "
                    "on the input size)")
        if len(g.nodes) != len(g0.nodes) or len(g.slots) != len(g0.slots):
            raise OnnxExporterError(f"the model runs a different number of ops when the dynamic axes are {s} "
                                    "(control flow that depends on the input size)")
    merged_args, merged_kwargs = {}, {}
    for i, node in enumerate(g0.nodes):
        where = f"{op_name(node.op)} at {base.sites.get(id(node), '<model>')}"
        merged_args[id(node)] = _merge_values([g.nodes[i].args for g in graphs], sizes, where)
        merged_kwargs[id(node)] = _merge_values([g.nodes[i].kwargs for g in graphs], sizes, where)
    shapes = [_merge_values([g.slots[i].shape for g in graphs], sizes, f"the shape of %{i}")
              for i in range(len(g0.slots))]
    const_values = {s.index: [g.slots[s.index].value for g in graphs] for s in g0.slots if s.kind == "const"}
    return SymbolicGraph(base, merged_args, merged_kwargs, shapes, const_values, sizes)


def _merge_values(values, sizes, where):
    """values (one per capture) as one, with Polys where integers differ."""
    first = values[0]
    if isinstance(first, bool) or first is None or isinstance(first, (str, SlotRef)) or first is Ellipsis:
        return first
    if isinstance(first, (int, np.integer)):
        ints = [int(v) for v in values]
        if len(set(ints)) == 1:
            return ints[0]
        poly = fit(ints, sizes)
        if poly is None:
            raise OnnxExporterError(f"a size in {where} takes values {ints} at dynamic sizes {sizes}, which is not "
                                    "a polynomial of them of degree two or less")
        return poly
    if isinstance(first, slice):
        parts = [_merge_values([getattr(v, a) for v in values], sizes, where) for a in ("start", "stop", "step")]
        return slice(*parts)
    if isinstance(first, (tuple, list)):
        if any(len(v) != len(first) for v in values):
            raise OnnxExporterError(f"the arguments of {where} change length with the dynamic axes")
        return type(first)(_merge_values([v[i] for v in values], sizes, where) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: _merge_values([v[k] for v in values], sizes, where) for k in first}
    if isinstance(first, float):
        if any(v != first and not (np.isnan(v) and np.isnan(first)) for v in values):
            raise OnnxExporterError(f"a number in {where} changes with the dynamic axes ({values})")
    return first


def drop_guards(sgraph):
    """Remove value guards (the exported graph follows the branch the example took), warning
    where each was; then drop the nodes no output needs."""
    graph = sgraph.graph
    kept = []
    for node in graph.nodes:
        if node.expect is not NO_GUARD:
            warnings.warn(f"the exported graph follows the branch the example took at {sgraph.site(node)} "
                          f"(a tensor's value was read in Python: {node.expect!r}); inputs that would take "
                          "the other branch get the example's branch", stacklevel=3)
        else:
            kept.append(node)
    graph.nodes = kept
    passes.eliminate_dead_code(graph)


__all__ = ["Poly", "SymbolicGraph", "trace", "drop_guards", "op_name", "map_tensors"]
