"""`Function`: an operation with a forward and a backward, recorded as a graph node.

Every core op and every user-defined autograd function is a `Function` subclass. `apply`
runs `forward(ctx, *args)` with recording off, and, when grad mode is on and some tensor
input requires grad, keeps `ctx` as the node that the outputs' `grad_fn` points to. The
ctx contract is PyTorch's: `ctx.save_for_backward(*tensors)`, `ctx.saved_tensors`,
`ctx.needs_input_grad`, `ctx.mark_non_differentiable`, `ctx.set_materialize_grads`, and
`backward(ctx, *grad_outputs)` returns one gradient (or None) per forward argument.

Core ops may return backend arrays from forward; `apply` wraps them into tensors.
Backward formulas are written with core ops, so with `create_graph=True` the backward
pass records its own graph and can be differentiated again.
"""
from . import grad_mode


class Node:
    """A recorded call: the ctx given to forward/backward and the autograd graph node."""

    def __init__(self, fn):
        self._fn = fn
        self._saved = ()
        self._saved_versions = ()
        self._released = False
        self._non_differentiable = ()
        self.materialize_grads = True
        self.next_functions = ()
        self.needs_input_grad = ()
        self._input_meta = ()
        self._n_outputs = 1
        self._output_meta = ()
        self._pre_hooks = None  # output_nr -> list of hooks on that output's gradient
        self._retained = None  # output_nr -> weakref of a non-leaf tensor that retains grad

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
        """Accepted for compatibility: in-place user functions are recorded like any other."""

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


class Function:
    """Base class of differentiable operations; subclass and define forward and backward."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(f"backward is not implemented for this Function")

    _is_view = False  # outputs share storage (and so the version counter) with input 0

    @classmethod
    def apply(cls, *args, **kwargs):
        from .._tensor import Tensor, _wrap

        state = grad_mode._state
        record = state.enabled and any(type(a) is not bool and isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = Node(cls)
        if record:
            ctx.next_functions = tuple(_edge(a) for a in args)
            ctx.needs_input_grad = tuple(e is not None for e in ctx.next_functions)
        else:
            ctx.needs_input_grad = (False,) * len(args)
        prev, state.enabled = state.enabled, False
        try:
            result = cls.forward(ctx, *args, **kwargs)
        finally:
            state.enabled = prev
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        version = args[0]._version if cls._is_view else None
        wrapped = []
        for out in outputs:
            if isinstance(out, Tensor):
                if any(out is a for a in args):
                    out = _wrap(out._data, version=out._version)
            elif out is not None and hasattr(out, "dtype") and hasattr(out, "shape"):
                out = _wrap(out, version=version)
            wrapped.append(out)
        if record:
            ctx._input_meta = tuple(
                (a.shape, a._data.dtype) if e is not None else None for a, e in zip(args, ctx.next_functions)
            )
            ctx._n_outputs = len(wrapped)
            metas = []
            for nr, out in enumerate(wrapped):
                if isinstance(out, Tensor) and _is_float(out._data) and id(out) not in ctx._non_differentiable:
                    out.grad_fn = ctx
                    out._output_nr = nr
                    out.requires_grad = True
                    metas.append((out.shape, out._data.dtype, out.device))
                else:
                    metas.append((out.shape, out._data.dtype, out.device) if isinstance(out, Tensor) else None)
            ctx._output_meta = tuple(metas)
            ctx._store_outputs_weakly(wrapped)
        else:
            ctx._release()
        return wrapped[0] if single else tuple(wrapped)


def _is_float(array):
    """Only floating outputs can carry gradients (bfloat16 reports NumPy kind 'V')."""
    return array.dtype.kind == "f" or array.dtype.name == "bfloat16"


def _edge(arg):
    """Where a gradient for `arg` goes: its grad_fn output slot, or the leaf tensor itself."""
    from .._tensor import Tensor

    if not isinstance(arg, Tensor) or not arg.requires_grad:
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
