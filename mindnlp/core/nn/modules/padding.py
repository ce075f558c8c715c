# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Padding layers: constant, zero, reflection, replication and circular, in 1 and 2 dims."""
from .. import functional as F
from .module import Module


def _pads(padding, n):
    """torch's padding argument: an int (all sides) or the 2n-tuple given to F.pad."""
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n:
        raise ValueError(f"expected padding of {2 * n} values, got {padding}")
    return padding


class _PadNd(Module):
    mode = "constant"
    n_dims = 1

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _pads(padding, self.n_dims)
        self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}" if self.mode == "constant" else f"{self.padding}"


class ConstantPad1d(_PadNd):
    pass


class ConstantPad2d(_PadNd):
    n_dims = 2


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    mode = "reflect"

    def __init__(self, padding):
        super().__init__(padding)


class ReflectionPad2d(ReflectionPad1d):
    n_dims = 2


class ReplicationPad1d(ReflectionPad1d):
    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    n_dims = 2


class CircularPad1d(ReflectionPad1d):
    mode = "circular"


class CircularPad2d(CircularPad1d):
    n_dims = 2
