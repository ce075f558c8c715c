# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch.testing: `assert_close`, the deprecated `assert_allclose`, and `make_tensor`.

`assert_close` follows torch's rules. Inputs are compared pairwise after recursing into
sequences and mappings: None with None, bools by identity, Python and NumPy numbers with
tolerances chosen by their type (int exact, float as float64), tensor-likes of directly
related types as tensors. Tensors must agree in shape, and (unless the check is turned off)
device, dtype and stride; values are close when |actual - expected| <= atol + rtol * |expected|
with default tolerances chosen by dtype, the loosest of the two. Meta tensors are compared
by their attributes only. Failures raise AssertionError with torch's message.
"""
import cmath
import collections.abc
import math
import warnings

import numpy as np

from . import _dtype
from ._tensor import Tensor

# {dtype name: (rtol, atol)}; every other dtype (integers, bool) compares exactly.
_PRECISIONS = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),  # Python complex numbers (there are no complex tensors)
}
# The dtype each Python number type stands for when choosing tolerances.
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, its message and where it occurred."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.kind(msg)
        message = self.message
        if self.path:
            message += f"\n\nThe failure occurred for item {''.join(str([key]) for key in self.path)}"
        return self.kind(msg(message) if callable(msg) else message)


class _Unsupported(Exception):
    """A pair type cannot handle the given inputs; the next one is tried."""


def _default_tolerances(*dtype_names, table=_PRECISIONS):
    rtols, atols = zip(*[table.get(name, (0.0, 0.0)) for name in dtype_names])
    return max(rtols), max(atols)


def _tolerances(*dtype_names, rtol, atol, path):
    if (rtol is None) != (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                    f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    return _default_tolerances(*dtype_names)


def _mismatch_message(identifier, extra, abs_diff, abs_index, atol, rel_diff, rel_index, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, index, tol):
        text = f"{kind.title()} difference: {diff}" if index is None else f"Greatest {kind} difference: {diff} at index {index}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    text = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        text += f"{extra.strip()}\n"
    text += line("absolute", abs_diff, abs_index, atol)
    text += line("relative", rel_diff, rel_index, rtol)
    return text.strip()


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff,
                             None, rtol)


# --- pairs: each takes (actual, expected), raises _Unsupported if it cannot handle them --------------


class _NonePair:
    def __init__(self, actual, expected, path, **options):
        if not (actual is None or expected is None):
            raise _Unsupported
        self.actual, self.expected, self.path = actual, expected, path

    def compare(self):
        if not (self.actual is None and self.expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {self.actual} is not {self.expected}", self.path)


class _BooleanPair:
    def __init__(self, actual, expected, path, **options):
        if not all(isinstance(value, (bool, np.bool_)) for value in (actual, expected)):
            raise _Unsupported
        self.actual, self.expected, self.path = bool(actual), bool(expected), path

    def compare(self):
        if self.actual is not self.expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}", self.path)


class _NumberPair:
    def __init__(self, actual, expected, path, rtol=None, atol=None, equal_nan=False, check_dtype=False, **options):
        if not all(isinstance(value, (int, float, complex, np.number)) for value in (actual, expected)):
            raise _Unsupported
        actual, expected = (value.item() if isinstance(value, np.number) else value for value in (actual, expected))
        self.actual, self.expected, self.path = actual, expected, path
        try:
            names = [_NUMBER_DTYPES[type(value)] for value in (actual, expected)]
        except KeyError as err:  # a bool against a number: torch has no pair for it either
            raise _Mismatch(TypeError, f"Unknown number type {err.args[0]}.", path) from None
        self.rtol, self.atol = _tolerances(*names, rtol=rtol, atol=atol, path=path)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.",
                            self.path)
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        raise _Mismatch(AssertionError, _scalar_message(actual, expected, self.rtol, self.atol), self.path)


class _TensorPair:
    def __init__(self, actual, expected, path, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, **options):
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        self.actual, self.expected = (self._as_tensor(value) for value in (actual, expected))
        self.path = path
        self.rtol, self.atol = _tolerances(self.actual.dtype.name, self.expected.dtype.name, rtol=rtol, atol=atol,
                                           path=path)
        self.equal_nan = equal_nan
        self.check_device, self.check_dtype, self.check_stride = check_device, check_dtype, check_stride

    @staticmethod
    def _as_tensor(value):
        if isinstance(value, Tensor):
            return value
        from .ops import as_tensor

        try:
            return as_tensor(value)
        except Exception:  # anything as_tensor cannot build is simply not a tensor-like
            raise _Unsupported from None

    def _attribute_mismatch(self, name, actual, expected):
        return _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {actual} != {expected}.",
                         self.path)

    def compare(self):
        actual, expected = self.actual, self.expected
        if actual.shape != expected.shape:
            raise self._attribute_mismatch("shape", actual.shape, expected.shape)
        if self.check_stride and actual.stride() != expected.stride():
            raise self._attribute_mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            raise self._attribute_mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            raise self._attribute_mismatch("dtype", actual.dtype, expected.dtype)
        if actual.device.type == "meta" or expected.device.type == "meta":
            return
        a = actual.detach()._host()
        b = expected.detach()._host()
        common = _dtype.promote_types(actual.dtype, expected.dtype)
        if actual.dtype != expected.dtype:
            a, b = a.astype(common.np_dtype), b.astype(common.np_dtype)
        self._compare_values(a, b, common.is_floating_point)

    def _compare_values(self, a, b, floating):
        rtol, atol = self.rtol, self.atol
        matches = _isclose(a, b, rtol, atol, self.equal_nan, floating)
        if matches.all():
            return
        if a.ndim == 0:
            message = _scalar_message(a.item(), b.item(), rtol, atol)
        else:
            message = _tensor_message(a, b, matches, rtol, atol, floating)
        raise _Mismatch(AssertionError, message, self.path)


def _isclose(a, b, rtol, atol, equal_nan, floating):
    """torch.isclose: equal, or finite and within atol + rtol * |b| (computed in the inputs' dtype)."""
    if not floating:
        if rtol == 0 and atol == 0:
            return a == b
        a, b = a.astype(np.float64), b.astype(np.float64)
    half = a.dtype == np.float16 or a.dtype == _dtype.bfloat16.np_dtype
    if half:
        a, b = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == b
        if equal_nan:
            close |= np.isnan(a) & np.isnan(b)
        if rtol or atol:
            diff = np.abs(a - b)
            close |= np.isfinite(diff) & (diff <= atol + rtol * np.abs(b))
    return close


def _tensor_message(a, b, matches, rtol, atol, floating):
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    a, b, matched = a.reshape(-1), b.reshape(-1), matches.reshape(-1)
    if not floating:
        a, b = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = np.abs(a - b)
        abs_diff[matched] = 0
        abs_index = _first_max(abs_diff)
        if floating:
            rel_diff = abs_diff / np.abs(b)
        else:  # torch divides integer tensors into the default float dtype
            rel_diff = abs_diff.astype(np.float32) / np.abs(b).astype(np.float32)
        rel_diff[matched] = 0
        rel_index = _first_max(rel_diff)
    shape = matches.shape
    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_index].item(),
                             tuple(int(i) for i in np.unravel_index(abs_index, shape)), atol,
                             rel_diff[rel_index].item(), tuple(int(i) for i in np.unravel_index(rel_index, shape)),
                             rtol)


def _first_max(values):
    """Index of the largest value, NaN counting as largest (torch.max propagates NaN)."""
    if values.dtype.kind == "f":
        nans = np.flatnonzero(np.isnan(values))
        if nans.size:
            return int(nans[0])
    return int(np.argmax(values))


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorPair)


def _pairs(actual, expected, path, options):
    sequence = collections.abc.Sequence
    if isinstance(actual, sequence) and not isinstance(actual, str) and isinstance(expected, sequence) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                            path)
        return [pair for i in range(len(actual)) for pair in _pairs(actual[i], expected[i], (*path, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Mismatch(AssertionError,
                            "The keys of the mappings do not match:\n"
                            f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                            f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}", path)
        try:
            keys = sorted(actual_keys)
        except TypeError:
            keys = list(actual_keys)
        return [pair for key in keys for pair in _pairs(actual[key], expected[key], (*path, key), options)]
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, path, **options)]
        except _Unsupported:
            continue
    raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                               f"{type(expected)}.", path)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected are close (see the module docstring).

    `msg` replaces the generated message, or, when callable, is called with it and returns
    the message to use. Every tensor here is strided, so `check_layout` never fails.
    """
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                   check_stride=check_stride)
    try:
        pairs = _pairs(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.to_error() from None
    for pair in pairs:
        try:
            pair.compare()
        except _Mismatch as mismatch:
            raise mismatch.to_error(msg) from None


_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in torch since 1.12: assert_close with looser tolerances, NaN == NaN and no dtype check."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
                  "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
                  "instructions in https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from .ops import tensor

    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _default_tolerances(actual.dtype.name, expected.dtype.name, table=_ALLCLOSE_PRECISIONS)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of `shape` with values drawn uniformly from [low, high), torch's defaults per dtype:
    bool [0, 2), unsigned [0, 10), signed integers [-9, 10), floats [-9, 9)."""
    from . import ops, random

    dtype = _dtype.as_dtype(dtype)
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got noncontiguous={noncontiguous} and memory_format={memory_format}")
    integral = not dtype.is_floating_point
    if requires_grad and integral:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dtype.bool_:
        low, high = _modify_low_high(low, high, dtype, 0, 2, 0, 2)
        result = random.randint(low, high, shape, dtype=dtype, device=device)
    elif integral:
        info = _dtype.iinfo(dtype)
        low, high = _modify_low_high(low, high, dtype, info.min, info.max + (dtype is not _dtype.int64), -9, 10)
        result = random.randint(low, high, shape, dtype=dtype, device=device)
    else:
        info = _dtype.finfo(dtype)
        low, high = _modify_low_high(low, high, dtype, info.min, info.max, -9, 9)
        result = ops.empty(shape, dtype=dtype, device=device)
        if high - low >= info.max:
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        result[result == 0] = 1 if integral else _dtype.finfo(dtype).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result


def _modify_low_high(low, high, dtype, lowest, highest, default_low, default_high):
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(value, float) and math.isnan(value) for value in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.is_floating_point:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is "
                      "deprecated since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.",
                      FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not dtype.is_floating_point:
        return math.ceil(low), math.ceil(high)
    return low, high


__all__ = ["assert_allclose", "assert_close", "make_tensor"]
