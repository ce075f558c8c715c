# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Function`: an operation with a forward and a backward, recorded as a graph node.

Every core op and every user-defined autograd function is a `Function` subclass. `apply`
runs `forward(ctx, *args)` with recording off, and, when grad mode is on and some tensor
input requires grad, keeps `ctx` as the node that the outputs' `grad_fn` points to. The
ctx contract is PyTorch's: `ctx.save_for_backward(*tensors)`, `ctx.saved_tensors`,
`ctx.needs_input_grad`, `ctx.mark_non_differentiable`, `ctx.mark_dirty`,
`ctx.set_materialize_grads`, and `backward(ctx, *grad_outputs)` returns one gradient (or
None) per forward argument.

Core ops may return backend arrays from forward; `apply` wraps them into tensors.
Backward formulas are written with core ops, so with `create_graph=True` the backward
pass records its own graph and can be differentiated again.
"""
import warnings

from .._fp_errors import quiet, restore
from ..backends import get_backend
from . import grad_mode

# Bound by mindnlp.core._tensor once Tensor exists (importing it here would be circular).
_Tensor = None
_wrap = None
# The graph capture in progress (core.jit.capture.Tracer), or None: the one test that
# every op call pays for graph mode.
_tracer = None


class Node:
    """A recorded call: the ctx given to forward/backward and the autograd graph node.

    Defaults live on the class so that creating a ctx (once per op call, recorded or not)
    costs a single attribute write.
    """

    _saved = ()
    _saved_versions = ()
    _released = False
    _non_differentiable = ()
    _dirty = ()
    materialize_grads = True
    next_functions = ()
    needs_input_grad = ()
    _input_meta = ()
    _n_outputs = 1
    _output_meta = ()
    _pre_hooks = None  # output_nr -> list of hooks on that output's gradient
    _retained = None  # output_nr -> weakref of a non-leaf tensor that retains grad

    def __init__(self, fn):
        self._fn = fn

    def name(self):
        """torch's node names: `MulBackward0` for built-in ops, `MyFnBackward` for user Functions."""
        if self._fn.__module__.startswith("mindnlp.core."):
            return f"{self._fn.__name__}Backward0"
        return f"{self._fn.__name__}Backward"

    def __repr__(self):
        return f"<{self.name()}>"

    # --- the ctx API ---
    def save_for_backward(self, *tensors):
        self._saved = tensors
        self._saved_versions = tuple(t._version[0] if t is not None else 0 for t in tensors)

    @property
    def saved_tensors(self):
        """The saved tensors, checked against in-place modification since they were saved."""
        if self._released:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors "
                "after they have already been freed). Specify retain_graph=True on the first backward call "
                "if you need to backward through the graph a second time."
            )
        for i, (t, v) in enumerate(zip(self._saved, self._saved_versions)):
            if t is not None and t._version[0] != v:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of {self.name()} with shape {tuple(t.shape)} is at version "
                    f"{t._version[0]}; expected version {v} instead."
                )
        return tuple(t.unpack(self) if isinstance(t, _SavedOutput) else t for t in self._saved)

    def _store_outputs_weakly(self, outputs):
        """Replace saved outputs of this node by their arrays: a node holding its own output
        tensor would form a reference cycle that keeps activations alive until the GC runs."""
        ids = {id(o): nr for nr, o in enumerate(outputs) if o is not None}
        if any(id(t) in ids for t in self._saved):
            self._saved = tuple(
                _SavedOutput(t, ids[id(t)]) if id(t) in ids else t for t in self._saved
            )

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tuple(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        """Declare inputs that forward modified in place; forward must return them.

        As in torch, each is returned as the same tensor object, its version counter is
        bumped, and (when recording) its history becomes this node: the old history feeds
        the node, so backward flows through the in-place operation. A view's base is given
        the in-place history too.
        """
        self._dirty = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)

    def _release(self):
        self._saved = ()
        self._released = True

    def register_hook(self, output_nr, hook):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        self._pre_hooks.setdefault(output_nr, []).append(hook)


class _SavedOutput:
    """An output saved for backward, kept as its array; unpacked with grad_fn = its node."""

    __slots__ = ("data", "output_nr", "version", "requires_grad")

    def __init__(self, tensor, output_nr):
        self.data = tensor._data
        self.output_nr = output_nr
        self.version = tensor._version
        self.requires_grad = tensor.requires_grad

    @property
    def _version(self):
        return self.version

    @property
    def shape(self):
        return self.data.shape

    def unpack(self, node):
        from .._tensor import _wrap

        t = _wrap(self.data, version=self.version)
        if self.requires_grad:
            t.requires_grad = True
            t.grad_fn = node
            t._output_nr = self.output_nr
        return t


def _raise_if_devices_differ(args, kwargs, err):
    """torch's error for an op given tensors on two devices, in place of the array library's
    (found only once the op has failed, so that the usual call pays nothing for the check)."""
    devices = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, _Tensor) and a._device not in devices:
            devices.append(a._device)
    if len(devices) > 1:
        from ..ops._helpers import devices_differ  # ops import this module

        raise devices_differ(devices[0], devices[1]) from err


class Function:
    """Base class of differentiable operations; subclass and define forward and backward."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("backward is not implemented for this Function")

    _is_view = False  # outputs share storage (and so the version counter) with input 0

    @classmethod
    def apply(cls, *args, **kwargs):
        if _tracer is not None:
            return _tracer.record(cls, args, kwargs)
        state = grad_mode._state
        enabled = state.enabled
        record = False
        if enabled:
            for a in args:
                if isinstance(a, _Tensor) and a.requires_grad:
                    record = True
                    break
        ctx = Node(cls)
        if record:
            edges = ctx.next_functions = tuple(_edge(a) for a in args)
            ctx.needs_input_grad = tuple(e is not None for e in edges)
        else:
            ctx.needs_input_grad = (False,) * len(args)
        state.enabled = False
        fp_state = quiet()
        try:
            result = cls.forward(ctx, *args, **kwargs)
        except TypeError as err:  # NumPy and CuPy refuse each other's arrays with a TypeError
            _raise_if_devices_differ(args, kwargs, err)
            raise
        finally:
            state.enabled = enabled
            restore(fp_state)
        if ctx._dirty:
            return _outputs_with_dirty(ctx, args, result, record)
        version = args[0]._version if cls._is_view else None
        if type(result) is not tuple:
            out = _as_output(result, args, version)
            if record:
                _record(ctx, args, (out,))
            if enabled and cls._is_view:
                _note_view(out, cls, args, kwargs)
            return out
        outputs = tuple(_as_output(r, args, version) for r in result)
        if record:
            _record(ctx, args, outputs)
        return outputs


def _outputs_with_dirty(ctx, args, result, record):
    """Function.apply's ending for a forward that called ctx.mark_dirty (torch's rules)."""
    single = type(result) is not tuple
    results = (result,) if single else result
    dirty = ctx._dirty
    for t in dirty:
        if not any(t is a for a in args):
            warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a Tensor is not an input, there "
                          "is no need to pass it to mark_dirty().", stacklevel=3)
        if not any(t is r for r in results):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                               "The inputs that are modified inplace must all be outputs of the Function.")
        t._version[0] += 1
    if record:
        for t in dirty:
            if t.requires_grad and t.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
            view = t.__dict__.get("_view")
            if view is not None:
                if len(results) > 1:
                    raise RuntimeError(
                        "If your Function modifies inplace an input that is a view of another Tensor, your Function "
                        "cannot return more than one Tensor. This is not supported by the current autograd engine. "
                        "You should either make sure the input is not a view (using .clone() for example) or make "
                        "your Function only return one Tensor.")
                if view[0].requires_grad and view[0].grad_fn is None:
                    raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                       "operation.")
        # What forward saved of a dirty tensor was saved after its modification.
        ctx._saved_versions = tuple(
            t._version[0] if t is not None and any(t is d for d in dirty) else v
            for t, v in zip(ctx._saved, ctx._saved_versions))

    def output(r):
        if any(r is d for d in dirty) and (record or not r.requires_grad):
            return r
        return _as_output(r, args, None)

    outputs = tuple(output(r) for r in results)
    if record:
        _record(ctx, args, outputs)
        for t in dirty:
            view = t.__dict__.get("_view")
            if view is not None:
                from ..ops.inplace import _rebase_view

                _rebase_view(t, *view, t)
    return outputs[0] if single else outputs


def _note_view(out, cls, args, kwargs):
    """Remember that `out` is a view of a base tensor, and how to make it again from the base.

    An in-place op on the view then rewrites the base's history too (ops.inplace), as torch
    does: the base's later uses must see the op. Only views made while grad mode is on are
    noted (under no_grad nothing is recorded, and decoding makes many views).
    """
    source = args[0]
    if not isinstance(out, _Tensor) or not isinstance(source, _Tensor) or out is source:
        return
    xp = get_backend(source._device).xp
    if not xp.may_share_memory(out._data, source._data):
        return                                     # e.g. a reshape that had to copy
    rest = args[1:]

    def remake(base):
        return cls.apply(base, *rest, **kwargs)

    parent = source.__dict__.get("_view")
    if parent is None:
        out._view = (source, remake)
    else:
        base, remake_source = parent
        out._view = (base, lambda b: remake(remake_source(b)))


def _as_output(result, args, version):
    """Wrap an array result; alias a tensor result that is one of the inputs."""
    if isinstance(result, _Tensor):
        for a in args:
            if result is a:
                return _wrap(result._data, version=result._version)
        return result
    if result is None or not hasattr(result, "shape"):
        return result
    return _wrap(result, version=version)


def _record(ctx, args, outputs):
    """Make ctx the grad_fn of the floating outputs and remember what backward needs."""
    ctx._input_meta = tuple(
        (a.shape, a._data.dtype) if e is not None else None for a, e in zip(args, ctx.next_functions)
    )
    ctx._n_outputs = len(outputs)
    metas = []
    for nr, out in enumerate(outputs):
        if isinstance(out, _Tensor):
            if _is_float(out._data) and id(out) not in ctx._non_differentiable:
                out.grad_fn = ctx
                out._output_nr = nr
                out.requires_grad = True
            metas.append((out.shape, out._data.dtype, out.device))
        else:
            metas.append(None)
    ctx._output_meta = tuple(metas)
    ctx._store_outputs_weakly(outputs)


def _is_float(array):
    """Only floating outputs can carry gradients (bfloat16 reports NumPy kind 'V')."""
    return array.dtype.kind == "f" or array.dtype.name == "bfloat16"


def _edge(arg):
    """Where a gradient for `arg` goes: its grad_fn output slot, or the leaf tensor itself."""
    if not isinstance(arg, _Tensor) or not arg.requires_grad:
        return None
    if arg.grad_fn is not None:
        return (arg.grad_fn, arg._output_nr)
    return (arg, 0)


class once_differentiable:
    """Decorator kept for API compatibility: the wrapped backward runs without recording."""

    def __new__(cls, fn):
        def wrapper(ctx, *grads):
            with grad_mode.no_grad():
                return fn(ctx, *grads)

        wrapper.__name__ = fn.__name__
        wrapper.__doc__ = fn.__doc__
        return wrapper
