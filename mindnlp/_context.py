# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""MindSpore's execution-mode switch: `mindnlp.set_context(mode=mindnlp.GRAPH_MODE)`.

PYNATIVE_MODE (the default) runs every op eagerly. Under GRAPH_MODE a top-level
PreTrainedModel call runs through `core.compile`: captured once per guard key, replayed
afterwards, eagerly wherever capture cannot follow. The values are MindSpore's.
"""
GRAPH_MODE = 0
PYNATIVE_MODE = 1

_settings = {"mode": PYNATIVE_MODE, "backward": "eager"}
_backward_chosen = False     # set_context(backward=...) was called


def set_context(mode=None, backward=None):
    """Set the execution mode (GRAPH_MODE or PYNATIVE_MODE) and how `.backward()` runs.

    backward="compiled": forward stays eager (where users debug) while each backward pass
    is captured the first time a step of its structure runs and replayed afterwards
    (core.jit.backward); "eager" (the default) walks the autograd graph op by op. Without
    this setting, the backward of a `core.compile`d training forward runs compiled.
    """
    if mode is not None:
        if mode not in (GRAPH_MODE, PYNATIVE_MODE):
            raise ValueError(f"mode must be mindnlp.GRAPH_MODE ({GRAPH_MODE}) or mindnlp.PYNATIVE_MODE "
                             f"({PYNATIVE_MODE}), got {mode!r}")
        _settings["mode"] = mode
    if backward is not None:
        if backward not in ("eager", "compiled"):
            raise ValueError(f'backward must be "eager" or "compiled", got {backward!r}')
        global _backward_chosen
        from .core.autograd import engine
        from .core.jit import backward as compiled_backward

        engine.compiled_backward = compiled_backward.CACHE if backward == "compiled" else None
        _settings["backward"] = backward
        _backward_chosen = True


def backward_chosen():
    """Whether set_context(backward=...) was called (a compiled training forward then leaves
    the backward as chosen; otherwise the backward after it runs compiled, core.jit.training)."""
    return _backward_chosen


def get_context(key):
    """The value of a context setting ("mode")."""
    if key not in _settings:
        raise ValueError(f"unknown context key {key!r}; known: {sorted(_settings)}")
    return _settings[key]


def graph_mode():
    return _settings["mode"] == GRAPH_MODE
