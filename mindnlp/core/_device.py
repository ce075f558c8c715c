# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`core.device`: where a tensor's array lives ("cpu", "cuda:0", "meta"), and the default
device of the factory functions.

As in torch, factories (`empty`, `zeros`, `tensor`, `arange`, `rand`, ...; not the `*_like`
ones, which follow their input) called without a device use the default device:
`set_default_device(d)` sets it for the thread, and `with core.device(d):` sets it inside the
block (innermost wins), which is how `with core.device("meta"): model = Model(config)` builds
a model whose parameters have shapes and no data.
"""
import threading


class _DefaultDevice(threading.local):
    def __init__(self):
        self.entered = []   # devices of the `with device(...)` blocks, innermost last
        self.global_ = None  # set_default_device's, None for cpu


_default = _DefaultDevice()


class device:
    """A device type and optional index, compared and printed as torch.device; also a context
    manager making itself the default device of factory functions."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"invalid device string {type}:{idx!r}")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"unknown device type {type!r}: expected 'cpu', 'cuda' or 'meta'")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self._normal_index() == other._normal_index()

    def _normal_index(self):
        return 0 if self.type == "cuda" and self.index is None else self.index

    def __hash__(self):
        return hash((self.type, self._normal_index()))

    def __enter__(self):
        _default.entered.append(self)
        return self

    def __exit__(self, *exc):
        _default.entered.pop()
        return False


def as_device(value):
    if value is None or isinstance(value, device):
        return value
    return device(value)


CPU = device("cpu")


def default_device():
    """The device factories use when given none; None stands for cpu (their fast path)."""
    if _default.entered:
        chosen = _default.entered[-1]
    else:
        chosen = _default.global_
    return None if chosen is None or chosen.type == "cpu" else chosen


def get_default_device():
    """The default device of factory functions (a cuda device with its index, as torch's)."""
    chosen = default_device()
    if chosen is None:
        return CPU
    if chosen.type == "cuda" and chosen.index is None:
        return device("cuda", 0)
    return chosen


def set_default_device(dev):
    """Make `dev` the default device of factory functions in this thread (None: cpu again)."""
    _default.global_ = None if dev is None else device(dev)
