# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Whether operations are recorded for backward: no_grad, enable_grad, set_grad_enabled,
inference_mode.

The flags are per thread, as in torch, so a DataLoader worker thread never flips them for
the training loop. Each context manager is also a decorator, used bare (`@no_grad`) or
called (`@no_grad()`, `@inference_mode(False)`); a decorated generator function runs every
step of the generator inside the context, as torch's decorators do.
"""
import functools
import inspect
import sys
import threading


class _GradState(threading.local):
    enabled = True
    inference = False


_state = _GradState()


def is_grad_enabled():
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _GradModeContext:
    """Base for the context managers: `_apply()` sets the flags; exiting restores them."""

    def _apply(self):
        raise NotImplementedError

    def clone(self):
        """A fresh manager with the same setting (each decorated call enters its own)."""
        return self.__class__()

    def __enter__(self):
        self.__dict__.setdefault("_saved", []).append((_state.enabled, _state.inference))
        self._apply()

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self._saved.pop()
        return False

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return self._wrap_generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException:
                        with self.clone():
                            response = gen.throw(*sys.exc_info())
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


class _NoArgumentContext(_GradModeContext):
    """A manager without arguments, which `@manager` (not called) also decorates."""

    def __new__(cls, fn=None):
        if fn is None:
            return super().__new__(cls)
        return cls()(fn)


class no_grad(_NoArgumentContext):
    def _apply(self):
        _state.enabled = False


class enable_grad(_NoArgumentContext):
    def _apply(self):
        _state.enabled = True


class inference_mode(_GradModeContext):
    """inference_mode(True) turns recording off; inference_mode(False) turns it back on (and
    inference mode off), also inside no_grad, as torch does.

    torch also marks tensors made in inference mode and refuses them in later autograd;
    mindnlp keeps no such mark: its tensors made here behave as ones made under no_grad.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return self.__class__(self.mode)

    def _apply(self):
        _state.enabled = not self.mode
        _state.inference = self.mode


class set_grad_enabled(_GradModeContext):
    """Set the mode immediately (usable as a plain call) and restore it on exit."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def clone(self):
        return self.__class__(self.mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def __call__(self, fn):
        _state.enabled = self.prev
        return super().__call__(fn)
