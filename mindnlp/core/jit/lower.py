# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Lowering: a Graph becomes one generated Python function of straight-line kernel calls.

Each node becomes one call `s7 = k3(s2, s5)` on the slots' arrays: no Tensor objects, no
argument parsing, no dtype promotion, no autograd bookkeeping. A node's kernel is a
direct array expression where one is registered for its op in `KERNELS` (specialised on
the dtypes and constants seen at capture), and otherwise the op's own `forward` called on
reused tensor shells, which is always right because it is the code the eager run ran.
The generated source is kept (`CompiledGraph.source`) for `explain`.

Buffer planning: a kernel that can write its results into arrays it is handed says so
(`writes_into`, the (shape, dtype) of each array it takes after the ones it reads). The
intermediates such kernels make, those nothing outside the replay can hold on to (not an
output, nor a rebound input, nor viewed by one), get buffers made once and shared by
intermediates whose lives do not overlap, as a static memory plan does: a replay of a
decoding step then allocates almost nothing and writes its few hundred small results into a
dozen arrays it wrote a layer before, where each node used to allocate and write fresh memory
(a SmolLM-sized decoding step 0.24-0.39 ms faster in int4, ~10 ms a token, and ~0.6 ms in
float32). Each thread replaying a graph has buffers of its own.
"""
import collections
import math
import threading

import numpy as np

from .. import _tensor
from .._fp_errors import quiet, restore
from ..autograd import function as _function
from ..autograd import grad_mode
from .graph import NO_GUARD, SlotRef, iter_refs

# op -> builder(node, graph) returning an array kernel or None (None: use the generic one)
KERNELS = {}

# CPython (3.11 and later) keeps frames on a stack of chunks, the first of 16 KiB, and unmaps
# a chunk as soon as the last frame in it returns. replay's frame holds every slot, 8 bytes
# each: a frame that just fits the first chunk leaves the kernels it calls to start a chunk
# of their own, mapped on every call and unmapped on every return, an mmap/munmap pair per
# kernel (a SmolLM-sized int4 decoding step spent 10 of its 24 ms in them). A frame larger
# than a chunk gets a new chunk with a thousand words to spare, where the kernels' calls fit:
# replay's frame is padded with unused locals to this many words at least.
_FRAME_CHUNK_WORDS = 16 * 1024 // 8 + 16
_PAD_NAMES_PER_LINE = 16


def kernel_for(*ops):
    """Register a kernel builder for ops (Function subclasses)."""
    def register(builder):
        for op in ops:
            KERNELS[op] = builder
        return builder
    return register


def _slot_value(ref):
    slot = ref.slot
    return lambda values: values[slot]


def _binder(template, bind_ref=_slot_value):
    """A function of `values` giving template with each SlotRef replaced by `bind_ref(ref)`'s
    value (values[slot] by default); the parts holding no SlotRef are built once, here, not
    at every replay."""
    if isinstance(template, SlotRef):
        return bind_ref(template)
    if type(template) in (tuple, list, dict) and next(iter_refs(template), None) is not None:
        if type(template) is dict:
            items = [(k, _binder(v, bind_ref)) for k, v in template.items()]
            return lambda values: {k: bind(values) for k, bind in items}
        parts, kind = [_binder(v, bind_ref) for v in template], type(template)
        return lambda values: kind([bind(values) for bind in parts])
    return lambda values: template


def generic_kernel(node, graph):
    """Run the op's forward (or raw write) on arrays, through reused tensor shells."""
    reads = node.reads()
    is_function = isinstance(node.op, type) and issubclass(node.op, _function.Function)
    if not is_function:
        op, args, kwargs = node.op, node.args, node.kwargs
        if not kwargs and [getattr(a, "slot", None) for a in args] == reads:
            return op                       # op(*arrays) exactly: call it directly

        bind_args, bind_kwargs = _binder(args), _binder(kwargs)

        def raw(*arrays):
            values = dict(zip(reads, arrays))
            return op(*bind_args(values), **bind_kwargs(values))
        return raw
    shells = {}
    for ref in iter_refs((node.args, node.kwargs)):
        if not ref.array and ref.slot not in shells:
            slot = graph.slots[ref.slot]
            shell = _tensor._wrap(np.empty(0, dtype=slot.dtype))
            shell._device = slot.device
            shells[ref.slot] = shell
    ctx = _function.Node(node.op)
    ctx.needs_input_grad = (False,) * len(node.args)
    forward, args, kwargs, tuple_out = node.op.forward, node.args, node.kwargs, node.tuple_out
    flat = all(type(a) is SlotRef or not isinstance(a, (tuple, list, dict)) for a in args) and not kwargs
    Tensor = _tensor.Tensor

    def bind(arrays):
        values = {}
        for slot, array in zip(reads, arrays):
            shell = shells.get(slot)
            if shell is None:
                values[slot] = array
            else:
                shell._data = array
                values[slot] = shell
        return values

    def unwrap(result):
        if tuple_out:
            return tuple(r._data if isinstance(r, Tensor) else r for r in result)
        return result._data if isinstance(result, Tensor) else result

    if flat:
        plan = [(a.slot if type(a) is SlotRef else None, a) for a in args]

        def run_flat(*arrays):
            values = bind(arrays)
            return unwrap(forward(ctx, *[a if s is None else values[s] for s, a in plan]))
        return run_flat

    bind_args, bind_kwargs = _binder(args), _binder(kwargs)

    def run(*arrays):
        values = bind(arrays)
        return unwrap(forward(ctx, *bind_args(values), **bind_kwargs(values)))
    return run


def _frame_padding(code):
    """Source lines that make the function of `code` a frame of _FRAME_CHUNK_WORDS words at
    least: assignments the compiler drops, to names that still count as locals."""
    missing = _FRAME_CHUNK_WORDS - code.co_nlocals - code.co_stacksize
    if missing <= 0:
        return []
    names = [f"pad{i}" for i in range(missing)]
    lines = ["    if False:  # frame padding, see _FRAME_CHUNK_WORDS"]
    for start in range(0, missing, _PAD_NAMES_PER_LINE):
        lines.append("        " + " = ".join(names[start:start + _PAD_NAMES_PER_LINE]) + " = None")
    return lines


def _releases(graph):
    """For each node, the slots of node outputs that nothing after it reads (nor the output
    or a rebind), dropped right after it: the memory of an intermediate goes back to the
    allocator as soon as it is dead, as it does in an eager run, and the next array of its size
    reuses it while it is still in cache, instead of every intermediate of the graph living
    until replay returns (fresh, cold memory for each)."""
    kept = set(graph.output_slots()) | set(graph.rebinds.values())
    last = {}
    for i, node in enumerate(graph.nodes):
        for slot in node.reads():
            last[slot] = i
        if node.expect is NO_GUARD:
            for slot in node.outputs:
                if slot is not None:
                    last.setdefault(slot, i)
    released = [[] for _ in graph.nodes]
    for slot, i in last.items():
        if graph.slots[slot].kind == "op" and slot not in kept:
            released[i].append(slot)
    return released


# Intermediates up to this size are planned into buffers: allocating them costs a replay
# more than their work, and a graph's buffers stay allocated between its replays.
_PLANNED_BYTES = 1 << 18


def plan_buffers(graph, writes_into):
    """Buffers for the outputs of the nodes that can write into them (`writes_into`: node
    position -> (shape tuple, NumPy dtype) of each output's array, as kernels.writing_into
    gives them): (slot -> buffer index, the buffers' (shape, dtype)).

    An output gets one when it owns its memory at capture, was C-ordered there (a buffer is:
    eager's result of another layout, such as an elementwise op's of transposed operands,
    would make a later reshape a copy in eager and a view of the buffer in a replay, invisible
    to the views' roots), is at most _PLANNED_BYTES and nothing escaping the replay views it;
    a buffer is free again after the last node that reads or writes its slot or a view of it,
    for a later output of its shape and dtype."""
    slots = graph.slots
    held = {slots[s].root for s in graph.escaping_slots()}
    last = {}
    for i, node in enumerate(graph.nodes):
        for s in node.reads() + list(node.writes or ()):
            last[slots[s].root] = i
    free, released, assigned, specs = collections.defaultdict(list), collections.defaultdict(list), {}, []
    for i, node in enumerate(graph.nodes):
        for buffer in released.pop(i - 1, ()):
            free[specs[buffer]].append(buffer)
        for slot, spec in zip(node.outputs, writes_into.get(i, ())):
            shape, dtype = spec
            if slot is None or slot in held or slots[slot].root != slot or not slots[slot].c_contiguous or not shape or \
                    math.prod(shape) * dtype.itemsize > _PLANNED_BYTES:
                continue
            if free[spec]:
                buffer = free[spec].pop()
            else:
                buffer = len(specs)
                specs.append(spec)
            assigned[slot] = buffer
            released[max(last.get(slot, i), i)].append(buffer)
    return assigned, specs


class GuardFailure(Exception):
    """A value guard failed during replay: this call must run eagerly."""


class CompiledGraph:
    """A Graph lowered to `run(input_tensors) -> output arrays`."""

    def __init__(self, graph):
        self.graph = graph
        self.externals = [s for s in graph.slots if s.kind == "external"]
        env = {"GuardFailure": GuardFailure, "empty": np.empty}
        kernels = []
        for node in graph.nodes:
            builder = KERNELS.get(node.op)
            kernel = builder(node, graph) if builder is not None else None
            kernels.append(kernel or generic_kernel(node, graph))
        writes_into = {i: k.writes_into for i, k in enumerate(kernels) if getattr(k, "writes_into", None)}
        buffer_of, self.buffer_specs = plan_buffers(graph, writes_into)
        lines = ["def replay(inputs, buffers):"]
        if self.buffer_specs:
            lines.append("    " + "".join(f"b{b}, " for b in range(len(self.buffer_specs))) + "= buffers")
        seen = set()
        for pos, slot in enumerate(graph.inputs):
            if slot not in seen:
                seen.add(slot)
                lines.append(f"    s{slot} = inputs[{pos}]._data")
        for slot in graph.slots:
            if slot.kind == "external":
                env[f"e{slot.index}"] = slot.tensor
                lines.append(f"    s{slot.index} = e{slot.index}._data")
            elif slot.kind == "const":
                env[f"c{slot.index}"] = slot.value
                copy = ".copy()" if graph.slots[slot.root].mutated else ""
                lines.append(f"    s{slot.index} = c{slot.index}{copy}")
        released = _releases(graph)
        for i, node in enumerate(graph.nodes):
            env[f"k{i}"] = kernels[i]
            operands = [f"s{s}" for s in node.reads()]
            for j, (slot, spec) in enumerate(zip(node.outputs, writes_into.get(i, ()))):
                if slot in buffer_of:
                    operands.append(f"b{buffer_of[slot]}")
                else:
                    env[f"o{i}_{j}"] = spec
                    operands.append(f"empty(*o{i}_{j})")
            call = f"k{i}(" + ", ".join(operands) + ")"
            if node.expect is not NO_GUARD:
                env[f"g{i}"] = node.expect
                lines.append(f"    if {call} != g{i}:")
                lines.append(f"        raise GuardFailure({i})")
            elif node.tuple_out:
                targets = ", ".join(f"s{o}" if o is not None else "_" for o in node.outputs)
                lines.append(f"    {targets}, = {call}" if len(node.outputs) == 1 else f"    {targets} = {call}")
            elif node.outputs[0] is not None:
                lines.append(f"    s{node.outputs[0]} = {call}")
            else:
                lines.append(f"    {call}")
            if released[i]:
                lines.append("    del " + ", ".join(f"s{slot}" for slot in released[i]))
        for old, new in graph.rebinds.items():
            slot = graph.slots[old]
            owner = f"e{old}" if slot.kind == "external" else f"inputs[{graph.inputs.index(old)}]"
            lines.append(f"    {owner}._data = s{new}")
        outs = []
        for s in graph.output_slots():
            # A constant's array is shared by every replay: hand out a copy.
            shared = graph.slots[graph.slots[s].root].kind == "const"
            outs.append(f"s{s}.copy()" if shared else f"s{s}")
        lines.append("    return (" + "".join(o + ", " for o in outs) + ")")
        code = compile("\n".join(lines), "<mindnlp graph>", "exec")
        lines += _frame_padding(next(c for c in code.co_consts if hasattr(c, "co_nlocals")))
        self.source = "\n".join(lines)
        exec(compile(self.source, "<mindnlp graph>", "exec"), env)
        self._replay = env["replay"]
        self._local = threading.local()

    def run(self, inputs):
        """The output arrays (in Graph.output_slots order) for these input tensors."""
        buffers = getattr(self._local, "buffers", None)
        if buffers is None:
            buffers = self._local.buffers = [np.empty(shape, dtype) for shape, dtype in self.buffer_specs]
        state = grad_mode._state
        enabled = state.enabled
        state.enabled = False
        fp = quiet()
        try:
            return self._replay(inputs, buffers)
        finally:
            restore(fp)
            state.enabled = enabled
