# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compiled forward for calls that record autograd history (training steps).

An array replay (`lower.CompiledGraph`) cannot serve a call whose outputs need a backward:
backward reads what each op's forward saved in its ctx. A `TrainingReplay` runs the same
captured op list through each op's own `Function.apply` on tensors instead: the model's
Python code (module calls, attribute look-ups, argument handling, mask and shape
arithmetic) is gone, while autograd records exactly the nodes the eager run recorded,
and random ops (dropout) draw from the generator in the eager order. The backward of
those nodes runs as a replayed graph too (core.jit.backward), which a compiled training
forward turns on unless `set_context(backward="eager")` was asked for.

Capture refuses what this replay could not reproduce: in-place ops on tensors with
autograd history (their history rewrites views' bases) and replaced input arrays.
"""
from .. import _tensor
from ..ops._helpers import wrap_result
from .graph import NO_GUARD
from .lower import GuardFailure, _binder


def _tensor_or_array(ref):
    """A SlotRef's tensor, or its array where the op took a raw array (an index key)."""
    slot = ref.slot
    if ref.array:
        return lambda values: values[slot]._data
    return lambda values: values[slot]


class TrainingReplay:
    """A captured Graph run op by op through Function.apply: `run(inputs)` gives every slot's tensor."""

    def __init__(self, graph):
        self.graph = graph
        self.externals = [s for s in graph.slots if s.kind == "external"]
        self._constants = [(s.index, s.value, graph.slots[s.root].mutated) for s in graph.slots if s.kind == "const"]
        self._steps = [(node, _binder(node.args, _tensor_or_array), _binder(node.kwargs, _tensor_or_array))
                       for node in graph.nodes]

    def run(self, inputs):
        values = dict(zip(self.graph.inputs, inputs))
        for slot in self.externals:
            values[slot.index] = slot.tensor
        for index, value, mutated in self._constants:
            values[index] = _tensor._wrap(value.copy() if mutated else value)
        for node, bind_args, bind_kwargs in self._steps:
            op, args, kwargs = node.op, bind_args(values), bind_kwargs(values)
            if node.expect is not NO_GUARD:
                if op(*args, **kwargs) != node.expect:
                    raise GuardFailure(node.name)
                continue
            if isinstance(op, type):
                out = op.apply(*args, **kwargs)
            else:                           # a raw array kernel, or a raw write into a tensor
                out = op(*args, **kwargs)
                if node.writes:
                    for slot in node.writes:
                        values[slot]._version[0] += 1
                    continue
                out = wrap_result(out)
            for slot, result in zip(node.outputs, out if node.tuple_out else (out,)):
                if slot is not None:
                    values[slot] = result
        return values
