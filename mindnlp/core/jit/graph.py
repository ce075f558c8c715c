# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The captured computation: slots holding arrays, and nodes of the core's own ops.

A `Graph` is straight-line code. Every array the computation touches lives in a numbered
slot: an input of the call, an external tensor it read (a parameter or buffer, read again
at each replay so that weight updates are seen), a constant made during capture (a mask,
an `arange`), or the output of a node. A node is one call of a core op (a `Function`
subclass, or one of the few raw writes that bypass `Function.apply`) with its non-tensor
arguments kept as constants; `SlotRef`s stand where tensors (or index arrays) were.
"""


NO_GUARD = object()


class SlotRef:
    """Where a tensor (or its array inside an index key) stood in a node's arguments."""

    __slots__ = ("slot", "array")

    def __init__(self, slot, array=False):
        self.slot = slot
        self.array = array      # passed to the op as a raw array (an index key), not a tensor

    def __repr__(self):
        return f"%{self.slot}"


class Slot:
    """One array of the computation and where it comes from.

    kind is "input", "external", "const" or "op". `root` is the slot whose memory this one
    views (itself when it owns its memory); `mutated` is set on a root written in place.
    `c_contiguous` is the captured array's layout: whether a reshape of it was a view depends
    on it, so a replay's kernel may write its result into a planned (C-ordered) buffer only
    where eager's result was C-ordered too (lower.plan_buffers).
    """

    __slots__ = ("index", "kind", "shape", "dtype", "root", "mutated", "value", "tensor", "constant", "device",
                 "c_contiguous")

    def __init__(self, index, kind, array, value=None, tensor=None, device=None):
        self.index = index
        self.kind = kind
        self.shape = tuple(array.shape)
        self.dtype = array.dtype
        self.root = index
        self.mutated = False
        self.value = value          # const: the array's value when it was made
        self.tensor = tensor        # external: the tensor read at each replay
        self.constant = kind == "const"
        self.device = device
        self.c_contiguous = bool(getattr(getattr(array, "flags", None), "c_contiguous", False))

    def describe(self):
        return f"%{self.index}: {self.dtype}{list(self.shape)} {self.kind}"


class Node:
    """One op call: `outputs = op(*args, **kwargs)` with SlotRefs for the tensor operands.

    `inplace` marks a node that writes into the memory of its first operand (`writes` is
    that slot); such a node is never removed or folded.
    """

    __slots__ = ("op", "args", "kwargs", "outputs", "tuple_out", "writes", "name", "expect")

    def __init__(self, op, args, kwargs, outputs, tuple_out, writes=None, name=None, expect=NO_GUARD):
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs
        self.tuple_out = tuple_out
        self.writes = writes
        self.name = name or getattr(op, "__name__", str(op))
        self.expect = expect        # a value guard: replay checks op(*args) == expect

    def reads(self):
        """The slots this node reads, in argument order (each once)."""
        seen = []
        for ref in iter_refs((self.args, self.kwargs)):
            if ref.slot not in seen:
                seen.append(ref.slot)
        return seen

    def __repr__(self):
        outs = ", ".join(f"%{o}" for o in self.outputs)
        args = ", ".join(_short(a) for a in self.args)
        kwargs = "".join(f", {k}={_short(v)}" for k, v in self.kwargs.items())
        mark = " (in place)" if self.writes is not None else ""
        if self.expect is not NO_GUARD:
            return f"guard {self.name}({args}) == {self.expect!r}"
        return f"{outs} = {self.name}({args}{kwargs}){mark}"


def iter_refs(value):
    """Every SlotRef inside nested tuples, lists and dicts."""
    if isinstance(value, SlotRef):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from iter_refs(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from iter_refs(v)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Graph:
    """Slots, nodes, and where the call's inputs and outputs sit.

    `inputs` lists the slot of each tensor leaf of the call's arguments (in flattening
    order); `output` is the output structure with SlotRefs at its tensor leaves;
    `rebinds` maps an input/external slot to the slot its tensor's array was replaced by.
    """

    def __init__(self):
        self.slots = []
        self.nodes = []
        self.inputs = []
        self.output = None
        self.rebinds = {}

    def new_slot(self, kind, array, **extra):
        slot = Slot(len(self.slots), kind, array, **extra)
        self.slots.append(slot)
        return slot

    def output_slots(self):
        """The output's slots, in the order the output structure is rebuilt."""
        out = self.output
        refs = out.refs() if hasattr(out, "refs") else iter_refs(out)
        return [ref.slot for ref in refs]

    def escaping_slots(self):
        """The slots the caller receives or whose arrays replace an input's or external's."""
        return set(self.output_slots()) | set(self.rebinds) | set(self.rebinds.values())

    def __str__(self):
        lines = ["graph(" + ", ".join(self.slots[i].describe() for i in self.inputs) + "):"]
        for slot in self.slots:
            if slot.kind in ("external", "const"):
                lines.append(f"  {slot.describe()}")
        lines += [f"  {node!r}" for node in self.nodes]
        lines.append(f"  return {self.output!r}")
        return "\n".join(lines)
