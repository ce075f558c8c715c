# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""NumPy's floating-point warnings, silenced while an op computes.

torch returns inf or NaN for log(0), 0/0, sqrt(-1), inf - inf or an overflow without a
word; NumPy warns (and raises under `-W error`). Every op runs inside `quiet()`: NumPy keeps
its error settings in a context variable, and setting a prepared "ignore all" value costs
a fraction of `np.errstate`, which matters at a few microseconds per op. The user's own
NumPy calls outside ops keep their settings.
"""
import numpy as np

try:
    from numpy._core._ufunc_config import _extobj_contextvar
except ImportError:                     # another NumPy layout: the public, slower context manager
    _extobj_contextvar = None

if _extobj_contextvar is not None:
    with np.errstate(all="ignore"):
        _IGNORE_ALL = _extobj_contextvar.get()

    def quiet():
        """Silence floating-point warnings in this context; returns what `restore` needs."""
        return _extobj_contextvar.set(_IGNORE_ALL)

    def restore(token):
        _extobj_contextvar.reset(token)
else:
    def quiet():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore(token):
        token.__exit__(None, None, None)
