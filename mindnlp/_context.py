"""MindSpore's execution-mode switch: `mindnlp.set_context(mode=mindnlp.GRAPH_MODE)`.

PYNATIVE_MODE (the default) runs every op eagerly. Under GRAPH_MODE a top-level
PreTrainedModel call runs through `core.compile`: captured once per guard key, replayed
afterwards, eagerly wherever capture cannot follow. The values are MindSpore's.
"""
GRAPH_MODE = 0
PYNATIVE_MODE = 1

_settings = {"mode": PYNATIVE_MODE}


def set_context(mode=None):
    """Set the execution mode (GRAPH_MODE or PYNATIVE_MODE)."""
    if mode is not None:
        if mode not in (GRAPH_MODE, PYNATIVE_MODE):
            raise ValueError(f"mode must be mindnlp.GRAPH_MODE ({GRAPH_MODE}) or mindnlp.PYNATIVE_MODE "
                             f"({PYNATIVE_MODE}), got {mode!r}")
        _settings["mode"] = mode


def get_context(key):
    """The value of a context setting ("mode")."""
    if key not in _settings:
        raise ValueError(f"unknown context key {key!r}; known: {sorted(_settings)}")
    return _settings[key]


def graph_mode():
    return _settings["mode"] == GRAPH_MODE
