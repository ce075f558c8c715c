"""Whether operations are recorded for backward: no_grad, enable_grad, set_grad_enabled.

The flag is per thread, as in torch, so a DataLoader worker thread never flips it for the
training loop.
"""
import functools
import threading


class _GradState(threading.local):
    enabled = True


_state = _GradState()


def is_grad_enabled():
    return _state.enabled


class _GradModeContext:
    """Base for the context managers; each also works as a decorator."""

    mode = True

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc):
        _state.enabled = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradModeContext):
    mode = False


class enable_grad(_GradModeContext):
    mode = True


class inference_mode(_GradModeContext):
    """Like no_grad (mindnlp keeps no separate inference tensors)."""

    def __init__(self, mode=True):
        self.mode = not mode


class set_grad_enabled(_GradModeContext):
    """Set the mode immediately (usable as a plain call) and restore it on exit."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def __call__(self, fn):
        _state.enabled = self.prev
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper
