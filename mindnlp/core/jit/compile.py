# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`compile`: torch.compile's contract on capture-and-replay graphs.

A compiled callable keeps a cache of graphs keyed by guards: the shape, dtype, device and
requires_grad of each tensor argument, the value of each Python scalar argument, which
arguments are the same tensor, grad mode, the default dtype, and the training flag of
every submodule of a compiled module. The first call with a new key captures (an eager
run that records); a later call with the same key replays the graph. A key whose capture
broke runs eagerly from then on; past `config.recompile_limit` keys, new keys run eagerly.
A call that records autograd history (grad mode on and an input or parameter that
requires grad: a training step) is captured the same way and replayed through each op's
`Function.apply` (jit.training), so that its backward has every ctx the eager run would
have made; that backward then runs compiled too (jit.backward).

Each new graph is replayed once on the capture's own inputs and compared with what the
eager run produced; a difference (an op the capture misread) turns the key eager, so a
capture mistake costs speed, never a wrong answer.

Set MINDNLP_LOGS=graph_breaks (and/or graphs, guards, recompiles; comma-separated) to log
what happens, or call `explain(fn, *args)`.
"""
import logging
import os
import weakref

import numpy as np

from ... import _context
from .. import _dtype, _tensor
from ..autograd import engine, grad_mode
from ..backends import backend_for_array
from ..random import default_generator
from ..nn import Module
from ..nn.modules.module import structure_version
from . import capture, passes
from .capture import GraphBreak, NotYetCapturable, ObjectRef, Tracer, Unsupported, flatten_inputs
from .graph import SlotRef
from .lower import CompiledGraph, GuardFailure
from .training import TrainingReplay

logger = logging.getLogger("mindnlp.core.jit")
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_COMPILED = weakref.WeakSet()


class config:
    """Settings shared by every compiled callable."""

    recompile_limit = 8          # graphs per callable before new guard keys run eagerly
    validate = True              # replay each new graph once against its eager run


def _log_topics():
    return {t.strip() for t in os.environ.get("MINDNLP_LOGS", "").split(",") if t.strip()}


def _log(topic, message):
    if topic in _log_topics():
        if not logger.handlers and not logging.getLogger().handlers:
            logging.basicConfig(format="[%(name)s] %(message)s")
        logger.warning(message)


class _Entry:
    """One guard key's outcome: a compiled graph, or the reason it runs eagerly."""

    __slots__ = ("compiled", "reason", "output", "externals", "training")

    def __init__(self, compiled=None, reason=None):
        self.compiled = compiled
        self.reason = reason
        self.output = compiled.graph.output if compiled is not None else None
        self.externals = [s.tensor for s in compiled.externals] if compiled is not None else ()
        self.training = isinstance(compiled, TrainingReplay)


class CompiledFunction:
    """fn compiled: call it as fn. `graphs`, `breaks` and `guards()` describe the cache."""

    def __init__(self, fn, module=None, fullgraph=False):
        self._fn = fn
        self._module = module
        self._state_version = self._state = None
        self._states = {}       # module state -> its number in guard keys
        self.fullgraph = fullgraph
        self._cache = {}
        self.breaks = []
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        _COMPILED.add(self)

    @property
    def graphs(self):
        return [e.compiled.graph for e in self._cache.values() if e.compiled is not None]

    def guards(self):
        return list(self._cache)

    def reset(self):
        self._cache.clear()
        self.breaks.clear()

    def _module_state(self):
        """What the module's graphs depend on beyond their inputs, as a small number: each
        submodule's class, training flag and parameter and buffer objects (a graph reads
        the parameters it was captured with; one assigned since needs a new capture). None
        when a forward hook would not be replayed. Walked again only when structure_version
        says something changed: a walk costs about a microsecond per submodule, a third of a
        millisecond for a model whose weights, streamed by the last call, pushed the modules
        out of cache."""
        if self._module is None:
            return ()
        version = structure_version()
        if version != self._state_version:
            mods = list(self._module.modules())
            if any(m._forward_hooks or m._forward_pre_hooks for m in mods):
                self._state = None
            else:
                state = tuple((type(m), m.training, tuple(map(id, m._parameters.values())),
                               tuple(map(id, m._buffers.values()))) for m in mods)
                self._state = self._states.setdefault(state, len(self._states))
            self._state_version = version
        return self._state

    def _eager(self, args, kwargs, reason, key=None):
        self.breaks.append(reason)
        _log("graph_breaks", f"{self.__name__}: runs eagerly: {reason}")
        if self.fullgraph:
            raise GraphBreak(f"graph break in {self.__name__}: {reason}")
        if key is not None:
            self._cache[key] = _Entry(reason=reason)
        return self._fn(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        if capture.active() is not None:    # inside another capture: part of its graph
            return self._fn(*args, **kwargs)
        objects = []
        try:
            tensors, key = flatten_inputs(args, kwargs, objects)
        except NotYetCapturable as err:
            _log("recompiles", f"{self.__name__}: runs eagerly once: {err}")
            return self._fn(*args, **kwargs)
        except Unsupported as err:
            return self._eager(args, kwargs, str(err))
        state = self._module_state()
        if state is None:
            return self._eager(args, kwargs, "a module has forward hooks (hooks are not replayed)")
        enabled = grad_mode._state.enabled
        key = (key, enabled, _dtype.get_default_dtype(), state)
        entry = self._cache.get(key)
        if entry is None:
            if len(self._cache) >= config.recompile_limit:
                return self._eager(args, kwargs, f"recompile limit ({config.recompile_limit}) reached", key)
            return self._capture(key, tensors, objects, args, kwargs, training=enabled)
        if entry.compiled is None:
            return self._fn(*args, **kwargs)
        if enabled and not entry.training and any(t.requires_grad for t in entry.externals):
            return self._eager(args, kwargs, "a parameter requires grad since this graph was captured without it")
        try:
            if entry.training:
                values = entry.compiled.run(tensors)
                engine.next_backward_compiled = not _context.backward_chosen()
                return _rebuild_with(entry.output, lambda ref: _own(values, entry.compiled.graph, ref.slot), objects)
            arrays = entry.compiled.run(tensors)
        except GuardFailure:
            _log("recompiles", f"{self.__name__}: a value guard failed; this call runs eagerly")
            return self._fn(*args, **kwargs)
        return _rebuild(entry.output, iter(arrays), objects)

    def _capture(self, key, tensors, objects, args, kwargs, training=False):
        if self._cache:
            _log("recompiles", f"{self.__name__}: new guard key, capture #{len(self._cache) + 1}: {key}")
        tracer = Tracer(fullgraph=self.fullgraph, objects=objects, training=training)
        tracer.add_inputs(tensors)
        rng = default_generator._rng.bit_generator.state
        with tracer:
            result = self._fn(*args, **kwargs)
        graph = tracer.finish(result)
        if graph is None:
            return self._eager_recorded(key, tracer.breaks[0], result)
        if tracer.recorded_grad:
            compiled = TrainingReplay(graph)
            mismatch = _validate_training(compiled, tracer, tensors, rng) if config.validate else None
        else:
            passes.optimize(graph, tracer.arrays)
            compiled = CompiledGraph(graph)
            mismatch = _validate(compiled, tracer, tensors) if config.validate else None
        if mismatch is not None:
            return self._eager_recorded(key, mismatch, result)
        self._cache[key] = _Entry(compiled)
        _log("graphs", f"{self.__name__}: captured{' (training)' if tracer.recorded_grad else ''}\n{graph}")
        _log("guards", f"{self.__name__}: guard key {key}")
        return result

    def _eager_recorded(self, key, reason, result):
        """The capture run already produced the eager result: keep it, remember the break."""
        self.breaks.append(reason)
        self._cache[key] = _Entry(reason=reason)
        _log("graph_breaks", f"{self.__name__}: graph break: {reason}")
        if self.fullgraph:
            raise GraphBreak(f"graph break in {self.__name__}: {reason}")
        return result


def _validate(compiled, tracer, tensors):
    """Replay on the capture's inputs and compare with the eager arrays; a reason or None.

    Skipped for graphs that write into inputs or externals (a second run would repeat the
    writes)."""
    graph = compiled.graph
    if graph.rebinds or _writes_inputs(graph):
        return None
    return _compare(graph, tracer, compiled.run(tensors))


def _writes_inputs(graph):
    """Whether the graph writes into an input's or external's memory (a second run would repeat it)."""
    return any(graph.slots[graph.slots[w].root].kind in ("input", "external")
               for node in graph.nodes if node.writes for w in node.writes)


def _compare(graph, tracer, replayed):
    """A reason when the replayed output arrays differ from the capture's eager ones, else None."""
    for slot, array in zip(graph.output_slots(), replayed):
        eager = tracer.arrays[slot]
        if eager.shape != array.shape or eager.dtype != array.dtype or not np.array_equal(
                _on_host(eager), _on_host(array), equal_nan=eager.dtype.kind in "fc"):
            return f"the replayed graph differs from the eager run at output %{slot} (a capture error)"
    return None


def _on_host(array):
    return backend_for_array(array).to_host(array)


def _validate_training(replay, tracer, tensors, rng):
    """`_validate` for a training replay: run it once more on the capture's inputs, the random
    generator set back to where the capture started (so dropout draws the same masks)."""
    graph = replay.graph
    if _writes_inputs(graph):
        return None
    after = default_generator._rng.bit_generator.state
    default_generator._rng.bit_generator.state = rng
    try:
        values = replay.run(tensors)
    except GuardFailure:
        return "a value guard failed when the graph replayed its capture's own inputs"
    finally:
        default_generator._rng.bit_generator.state = after
    return _compare(graph, tracer, [values[slot]._data for slot in graph.output_slots()])


def _rebuild(template, arrays, objects):
    return _rebuild_with(template, lambda ref: _tensor._wrap(next(arrays)), objects)


def _own(values, graph, slot):
    """A training replay's output tensor; a constant's is copied (the graph keeps the original)."""
    tensor = values[slot]
    if graph.slots[graph.slots[slot].root].kind == "const":
        return _tensor._wrap(tensor._data.copy())
    return tensor


def _rebuild_with(template, leaf, objects):
    """The call's output structure, `leaf(ref)` standing at each SlotRef."""
    if isinstance(template, SlotRef):
        return leaf(template)
    if isinstance(template, capture.OutputTree):
        return template.build(lambda v: _rebuild_with(v, leaf, objects))
    if isinstance(template, ObjectRef):
        return objects[template.index]
    return template


def compile(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None, options=None, disable=False):
    """Compile a function or module for capture-and-replay, with torch.compile's signature.

    Returns a callable computing what `model` computes (a module is wrapped in an
    `OptimizedModule` whose parameters are the original's). `fullgraph=True` raises
    `GraphBreak` where capture cannot follow instead of running that call eagerly. Shapes
    are specialised whatever `dynamic` says; `mode` and `backend` are accepted for
    compatibility (one replay strategy serves all modes). Used as `@compile(...)` without
    a function, it returns the decorator.
    """
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode!r}, should be one of: {', '.join(str(m) for m in _MODES[1:])}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph=fullgraph)
    if not callable(model):
        raise TypeError(f"compile() expects a function or a Module, got {type(model).__name__}")
    owner = getattr(model, "__self__", None)
    return CompiledFunction(model, module=owner if isinstance(owner, Module) else None, fullgraph=fullgraph)


class OptimizedModule(Module):
    """A module whose calls run compiled; `_orig_mod` is the module itself (torch's name)."""

    def __init__(self, mod, fullgraph=False):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled_call"] = CompiledFunction(mod.__call__, module=mod, fullgraph=fullgraph)

    def forward(self, *args, **kwargs):
        return self.__dict__["_compiled_call"](*args, **kwargs)


def reset():
    """Forget every compiled graph (torch.compiler.reset)."""
    for fn in list(_COMPILED):
        fn.reset()


class ExplainOutput:
    """What `explain` found: graphs, breaks and their reasons, guards, op counts."""

    def __init__(self, compiled):
        self.graphs = compiled.graphs
        self.graph_count = len(self.graphs)
        self.break_reasons = list(compiled.breaks)
        self.graph_break_count = len(self.break_reasons)
        self.op_count = sum(len(g.nodes) for g in self.graphs)
        self.guards = compiled.guards()

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        lines += [f"Break Reason: {r}" for r in self.break_reasons]
        lines += [f"Guard: {g}" for g in self.guards]
        lines += [str(g) for g in self.graphs]
        return "\n".join(lines)


def explain(fn, *args, **kwargs):
    """Capture fn on these arguments and report graphs, breaks and guards (torch._dynamo.explain)."""
    compiled = compile(fn)
    call = compiled.__dict__["_compiled_call"] if not isinstance(compiled, CompiledFunction) else compiled
    call(*args, **kwargs)
    return ExplainOutput(call)
