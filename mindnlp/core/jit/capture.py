# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Capture: run a function eagerly once while recording every core op into a `Graph`.

Recording hooks sit where every op passes: `Function.apply` (the dispatch of every core
op) and `_wrap` (every tensor made outside it), plus the few raw writes into a tensor's
memory that bypass `Function.apply` (in-place results, `x[key] = v`, `out=`). Each hook
costs one global test when nothing is being captured. While an op runs, the hooks are
off, so the ops it calls internally are part of that one node.

The capture run is an ordinary eager run: its results are returned to the caller as they
are. Wherever the graph could not reproduce what happened (a tensor value leaving for
Python through `.item()`, `bool()`, `.tolist()` or NumPy; an op computed outside the
dispatch path; a random draw; an array or callable argument of unknown origin) the capture
records a graph break with its reason instead of a graph: the caller then runs that call
signature eagerly. Python side effects other than tensor writes (attributes set on
objects, hooks) are not replayed, as with any tracing compiler.
"""
import contextlib
import os
import sys
import types
from dataclasses import fields, is_dataclass

import numpy as np

from .. import _tensor
from ..autograd import function as _function
from ..random import default_generator
from ..ops.indexing import Index
from ..ops._helpers import wrap_result
from .graph import Graph, Node, SlotRef, iter_refs

_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CREATION_FILE = os.path.join("ops", "creation.py")
_RANDOM_FILE = os.path.join("core", "random.py")
_FROM_DATA = {"tensor", "as_tensor", "from_numpy", "asarray", "new_tensor_like"}
_LEAF_SCALARS = (bool, int, float, str, type(None))


class GraphBreak(RuntimeError):
    """Raised with `fullgraph=True` where capture cannot follow the program."""


class Unsupported(Exception):
    """An argument or result the graph cannot carry; the call runs eagerly."""


class NotYetCapturable(Unsupported):
    """An argument is not in its steady state yet (a static KV cache whose storage this very
    call allocates): the call runs eagerly and is not cached or counted as a graph break."""


class ObjectRef:
    """An output that is one of the call's stateful arguments (a KV cache): the replay
    returns the object passed to that call, in the i-th place of `flatten_inputs`' objects."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<argument object {self.index}>"


def active():
    """The capture in progress, or None."""
    return _function._tracer


@contextlib.contextmanager
def paused():
    """Run eagerly and unrecorded inside a capture (a no-op outside one): for a value computed
    once and cached, such as a lookup table, which every later call reads as a constant. Had
    the first computation been recorded, the capture on the first call would differ from
    all later ones (an ONNX export traces twice and refuses graphs that differ)."""
    tracer = _function._tracer
    if tracer is None:
        yield
        return
    tracer._uninstall()
    try:
        yield
    finally:
        tracer._install()


class Tracer:
    """Records the ops of one eager run into a Graph (see the module docstring)."""

    def __init__(self, fullgraph=False, objects=(), training=False):
        self.objects = {id(o): i for i, o in enumerate(objects)}
        # training: the call runs with grad mode on, so ops may record autograd history and
        # draw random numbers; such a graph replays through Function.apply (jit.training).
        self.training = training
        self.recorded_grad = False
        self.random = None
        self.graph = Graph()
        self.fullgraph = fullgraph
        self.breaks = []
        self.slot_of = {}        # id(array) -> slot index
        self.arrays = {}         # slot index -> array (keeps ids unique while capturing)
        self.foreign = {}        # id(array) -> (array, why it cannot be replayed)
        self.externals = {}      # id(tensor) -> slot index
        self.input_tensors = []

    # --- installing the hooks ---
    def __enter__(self):
        if _function._tracer is not None:
            raise RuntimeError("a capture is already in progress")
        self._install()
        return self

    def __exit__(self, *exc):
        self._uninstall()

    def _install(self):
        _function._tracer = self
        _tensor._tracer = self

    def _uninstall(self):
        _function._tracer = None
        _tensor._tracer = None

    # --- graph breaks ---
    def graph_break(self, reason):
        """Stop recording: this call signature will run eagerly; fullgraph raises."""
        reason = f"{reason} (from {_caller()})"
        self.breaks.append(reason)
        self._uninstall()
        if self.fullgraph:
            raise GraphBreak(f"graph break: {reason}")

    @property
    def broken(self):
        return bool(self.breaks)

    # --- slots ---
    def _register(self, slot, array):
        self.slot_of[id(array)] = slot.index
        self.arrays[slot.index] = array

    def add_inputs(self, tensors):
        """Give each input tensor a slot (a tensor passed twice shares one)."""
        for t in tensors:
            slot = self.slot_of.get(id(t._data))
            if slot is None:
                new = self.graph.new_slot("input", t._data, device=t._device)
                self._register(new, t._data)
                slot = new.index
            self.graph.inputs.append(slot)
            self.input_tensors.append(t)

    def slot_of_tensor(self, t):
        """The slot holding t's array; a tensor made before the capture is an external."""
        array = t._data
        slot = self.slot_of.get(id(array))
        if slot is not None:
            return slot
        foreign = self.foreign.get(id(array))
        if foreign is not None:
            self.graph_break(foreign[1])
            return None
        if id(t) in self.externals:
            self.graph_break("a tensor's array was replaced outside the core's ops")
            return None
        new = self.graph.new_slot("external", array, tensor=t, device=t._device)
        self._register(new, array)
        self.externals[id(t)] = new.index
        return new.index

    def _is_constant(self, slot):
        slots = self.graph.slots
        return slots[slot].constant and not slots[slots[slot].root].mutated

    # --- hooks ---
    def on_wrap(self, t):
        """A tensor made outside Function.apply: an alias, a constant, or foreign."""
        array = t._data
        if id(array) in self.slot_of or id(array) in self.foreign:
            return
        frame = sys._getframe(2)
        reason = self._constant_or_reason(frame)
        if reason is None:
            slot = self.graph.new_slot("const", array, value=array.copy(), device=t._device)
            self._register(slot, array)
        else:
            self.foreign[id(array)] = (array, reason)

    def mark_constant(self, t):
        """t's array depends on no tensor's values (ops/_helpers.wrap_constant)."""
        array = t._data
        self.foreign.pop(id(array), None)
        if id(array) not in self.slot_of:
            slot = self.graph.new_slot("const", array, value=array.copy(), device=t._device)
            self._register(slot, array)

    def _constant_or_reason(self, frame):
        """None when the tensor was made by a creation op from Python values (or shapes)."""
        code = frame.f_code
        if code.co_filename.endswith(_RANDOM_FILE):
            return f"random op {code.co_name}() (random draws are not captured yet)"
        if not code.co_filename.endswith(_CREATION_FILE):
            return f"{code.co_name}() at {os.path.basename(code.co_filename)}:{frame.f_lineno} computes " \
                   "a tensor outside Function.apply"
        while frame is not None and frame.f_code.co_filename.endswith(_CREATION_FILE):
            if frame.f_code.co_name in _FROM_DATA:
                data = frame.f_locals.get("data", frame.f_locals.get("array"))
                if isinstance(data, np.ndarray) or (
                        isinstance(data, _tensor.Tensor) and not self._known_constant(data)):
                    return f"{frame.f_code.co_name}() of a NumPy array or traced tensor (its value is not a constant)"
            frame = frame.f_back
        return None

    def _known_constant(self, t):
        slot = self.slot_of.get(id(t._data))
        return slot is not None and self._is_constant(slot)

    def escape(self, t, what):
        """A tensor's value leaves for Python (`.tolist()`, NumPy): a break unless constant."""
        if not self._known_constant(t):
            self.graph_break(f"{what} reads a tensor's value into Python (data-dependent control flow)")

    def value_guard(self, t):
        """`.item()` (and so `bool()`, `int()`, `float()`): the graph continues, guarded on the value.

        A guard node re-reads the value at replay and sends the call to eager execution when
        it differs, so the Python code that used the value always sees what capture saw.
        """
        if self._known_constant(t):
            return
        slot = self.slot_of.get(id(t._data))
        if slot is None or self.broken:
            self.graph_break("Tensor.item() of a tensor made outside the core's ops")
            return
        graph = self.graph
        if any(graph.slots[graph.slots[w].root].kind in ("input", "external")
               for node in graph.nodes if node.writes for w in node.writes):
            self.graph_break("Tensor.item() after an in-place write to an input or external tensor")
            return
        self._uninstall()
        try:
            value = t.item()
        finally:
            self._install()
        graph.nodes.append(Node(read_scalar, (SlotRef(slot, array=True),), {}, (), False, expect=value))

    def record_raw(self, kernel, operands):
        """A non-differentiable op computed on arrays outside Function.apply (ops/_helpers.array_op)."""
        self._uninstall()
        try:
            out = wrap_result(kernel(*[o._data if isinstance(o, _tensor.Tensor) else o for o in operands]))
        finally:
            self._install()
        self._add_node(kernel, tuple(operands), {}, out, [], raw=True)
        return out

    def record(self, cls, args, kwargs):
        """Run one op with the hooks off, then add it to the graph."""
        versions = [a._version[0] if isinstance(a, _tensor.Tensor) else None for a in args]
        rng = default_generator._rng.bit_generator.state["state"]
        self._uninstall()
        try:
            out = cls.apply(*args, **kwargs)
        finally:
            self._install()
        random = default_generator._rng.bit_generator.state["state"] != rng
        if random and not self.training:
            self.graph_break(f"{cls.__name__} draws random numbers (not captured yet)")
        else:
            if random and self.random is None:
                self.random = cls.__name__
            written = [a for a, v in zip(args, versions) if v is not None and a._version[0] != v]
            self._add_node(cls, args, kwargs, out, written, random=random)
        return out

    def write(self, kernel, target, args):
        """A raw write into `target`'s memory (`kernel(target, *args)` on arrays)."""
        self._add_node(kernel, (target,) + tuple(args), {}, target, [target], raw=True)

    # --- nodes ---
    def _template(self, value, raw):
        """value with SlotRefs for tensors (and, in index keys, arrays); None on a break."""
        if isinstance(value, _tensor.Tensor):
            slot = self.slot_of_tensor(value)
            return None if slot is None else SlotRef(slot, array=raw)
        if isinstance(value, np.ndarray) or (hasattr(value, "__cuda_array_interface__")):
            slot = self.slot_of.get(id(value))
            if slot is None:
                self.graph_break("an array of unknown origin is an op argument")
                return None
            return SlotRef(slot, array=True)
        if isinstance(value, (tuple, list)):
            items = [self._template(v, raw) for v in value]
            return type(value)(items) if type(value) in (tuple, list) else value
        if isinstance(value, dict):
            return {k: self._template(v, raw) for k, v in value.items()}
        if isinstance(value, (types.FunctionType, types.MethodType, types.LambdaType)):
            self.graph_break("a Python function is an op argument")
        return value

    def _add_node(self, op, args, kwargs, out, written, raw=False, random=False):
        if self.broken:
            return
        targs = self._template(args, raw)
        tkwargs = self._template(kwargs, raw)
        if self.broken:
            return
        tuple_out = type(out) is tuple
        results = out if tuple_out else (out,)
        graph = self.graph
        if op is Index and any(ref.array and graph.slots[ref.slot].dtype == np.bool_ for ref in iter_refs(targs)):
            self.graph_break("boolean-mask indexing (the output's shape depends on the mask's values)")
            return
        reads = Node(op, targs, tkwargs, (), tuple_out).reads()
        constant = not random and all(self._is_constant(s) for s in reads)
        writes = []
        for t in written:
            slot = self.slot_of[id(t._data)] if id(t._data) in self.slot_of else self.slot_of_tensor(t)
            if slot is None:
                return
            root = graph.slots[graph.slots[slot].root]
            root.mutated = True
            writes.append(slot)
        outputs = []
        for r in results:
            if r is None:
                outputs.append(None)
                continue
            if not isinstance(r, _tensor.Tensor):
                self.graph_break(f"{getattr(op, '__name__', op)} returned a {type(r).__name__}")
                return
            if r.requires_grad:
                if not self.training:
                    self.graph_break("an op's output requires grad in a capture made without grad mode")
                    return
                if written and not raw:
                    self.graph_break(f"in-place {getattr(op, '__name__', op)} on a tensor with autograd history "
                                     "(a training graph replays out-of-place ops only)")
                    return
                self.recorded_grad = True
            known = self.slot_of.get(id(r._data))
            if known is not None:
                outputs.append(known)
                continue
            slot = graph.new_slot("op", r._data, device=r._device)
            slot.constant = constant and not writes
            for s in reads:
                if np.may_share_memory(r._data, self.arrays[s]):
                    slot.root = graph.slots[s].root
                    break
            self._register(slot, r._data)
            outputs.append(slot.index)
        graph.nodes.append(Node(op, targs, tkwargs, tuple(outputs), tuple_out, tuple(writes) or None))

    # --- the call's boundary ---
    def finish(self, result):
        """Describe the outputs and the rebinding of input/external tensors; None on a break."""
        if self.broken:
            return None
        graph = self.graph
        graph.output = self._output_template(result)
        for t, slot in list(zip(self.input_tensors, graph.inputs)) + [
                (graph.slots[s].tensor, s) for s in self.externals.values()]:
            now = self.slot_of.get(id(t._data))
            if now is None:
                self.graph_break("an input's array was replaced outside the core's ops")
            elif now != slot:
                graph.rebinds[slot] = now
        if self.random is not None and not self.recorded_grad:
            self.graph_break(f"{self.random} draws random numbers (replayed only in graphs that record autograd)")
        if self.recorded_grad and graph.rebinds:
            self.graph_break("an input or external tensor was replaced in a call that records autograd")
        return None if self.broken else graph

    def _output_template(self, value):
        if isinstance(value, _tensor.Tensor):
            slot = self.slot_of_tensor(value)
            return None if slot is None else SlotRef(slot)
        if isinstance(value, _LEAF_SCALARS):
            return value
        if id(value) in self.objects:
            return ObjectRef(self.objects[id(value)])
        if isinstance(value, (tuple, list, dict)):
            return OutputTree.of(value, self._output_template)
        self.graph_break(f"the function returns a {type(value).__name__}, which a graph cannot rebuild")
        return None


def read_scalar(array):
    """What `.item()` returns for a one-element array (a value guard's read)."""
    return _tensor._wrap(array)._host().reshape(-1)[0].item()


def _caller():
    """file:line of the innermost frame outside mindnlp.core: where the user's code was."""
    frame = sys._getframe(2)
    while frame is not None and _CORE_DIR in frame.f_code.co_filename:
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


class OutputTree:
    """A container of the outputs (tuple, list, dict, dataclass ModelOutput) to rebuild."""

    __slots__ = ("kind", "cls", "keys", "items")

    def __init__(self, kind, cls, keys, items):
        self.kind, self.cls, self.keys, self.items = kind, cls, keys, items

    @classmethod
    def of(cls, value, leaf):
        if isinstance(value, dict):
            keys = list(value.keys())
            kind = "dataclass" if is_dataclass(value) else "dict"
            return cls(kind, type(value), keys, [leaf(value[k]) for k in keys])
        kind = "namedtuple" if hasattr(value, "_fields") else "seq"
        return cls(kind, type(value), None, [leaf(v) for v in value])

    def build(self, leaf):
        items = [leaf(v) for v in self.items]
        if self.kind == "dataclass":
            names = {f.name for f in fields(self.cls)}
            obj = self.cls(**{k: v for k, v in zip(self.keys, items) if k in names})
            for k, v in zip(self.keys, items):
                if k not in names:
                    obj[k] = v
            return obj
        if self.kind == "dict":
            return self.cls(zip(self.keys, items))
        if self.kind == "namedtuple":
            return self.cls(*items)
        return self.cls(items)

    def refs(self):
        for v in self.items:
            if isinstance(v, SlotRef):
                yield v
            elif isinstance(v, OutputTree):
                yield from v.refs()

    def __repr__(self):
        if self.keys is not None:
            return f"{self.cls.__name__}(" + ", ".join(f"{k}={v!r}" for k, v in zip(self.keys, self.items)) + ")"
        return f"{self.cls.__name__}({self.items!r})"


def flatten_inputs(args, kwargs, objects=None):
    """The tensor leaves of a call's arguments and a hashable guard key describing them.

    The key holds each tensor's shape, dtype, device and requires_grad, the value of each
    Python scalar, and which leaves are the same tensor. An object with `compile_leaves()`
    (a static KV cache) stands for the tensors that method returns and is appended to
    `objects`. Raises Unsupported for any other kind of argument.
    """
    tensors = []
    key = []
    _flatten((args, kwargs), tensors, key, [] if objects is None else objects)
    if len(tensors) > 1:
        ids = [id(t._data) for t in tensors]
        if len(set(ids)) != len(ids):
            key.append(tuple(ids.index(i) for i in ids))
    return tensors, tuple(key)


def _flatten(value, tensors, key, objects):
    if isinstance(value, _tensor.Tensor):
        tensors.append(value)
        data = value._data
        key.append((data.shape, data.dtype, value._device, value.requires_grad))
    elif isinstance(value, _LEAF_SCALARS):
        key.append((type(value), value))
    elif isinstance(value, (tuple, list)):
        key.append((type(value), len(value)))
        for v in value:
            _flatten(v, tensors, key, objects)
    elif isinstance(value, dict):
        key.append((type(value), tuple(value)))
        for v in value.values():
            _flatten(v, tensors, key, objects)
    elif hasattr(value, "compile_leaves"):
        leaves = value.compile_leaves()
        if leaves is None:
            raise NotYetCapturable(f"the {type(value).__name__} argument allocates its storage in this call")
        if isinstance(leaves, str):
            raise Unsupported(f"a {type(value).__name__} argument cannot be captured: {leaves}")
        key.append((type(value), len(leaves)))
        objects.append(value)
        for t in leaves:
            _flatten(t, tensors, key, objects)
    else:
        raise Unsupported(f"an argument of type {type(value).__name__} (only tensors, Python scalars, strings, "
                          "None and tuples/lists/dicts of them are captured)")
