# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""NumPy's argument names that torch's functions accept too: `axis` for `dim`, `keepdims` for
`keepdim` (torch.sum(x, axis=0), torch.cat(ts, axis=1), x.mean(axis=0, keepdims=True))."""
import functools
import inspect

_ALIASES = (("dim", "axis"), ("keepdim", "keepdims"))


def accept_numpy_names(fn):
    """fn, taking `axis`/`keepdims` for its `dim`/`keepdim` parameters (fn itself if it has none)."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    renames = {alias: name for name, alias in _ALIASES if name in parameters and alias not in parameters}
    if not renames:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            for alias, name in renames.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{fn.__name__}() got multiple values for argument '{name}'")
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    return wrapper
