# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Tensor repr in torch's format: `tensor([[1.0000, 2.5000]], requires_grad=True)`.

Follows torch's printing rules (precision 4, 80 columns, summarised with 3 edge items above
1000 elements): one formatter is chosen for the whole tensor from its non-zero finite values
(of the summarised part only), integers-valued floats print as `1.`, and scientific notation
is used when the magnitudes span more than 1000x or leave [1e-4, 1e8].
"""
import math

import numpy as np

from . import _dtype

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    def __init__(self, values, floating):
        """values: a flat float64 (floating) or Python-scalar-convertible array."""
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        low, high = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8
        else:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        for v in finite.tolist():
            if self.sci_mode:
                width = len(f"{v:.{PRECISION}e}")
            elif self.int_mode:
                width = len(f"{v:.0f}") + 1
            else:
                width = len(f"{v:.{PRECISION}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value):
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.max_width - len(text)) + text


def _summarized(data):
    """The edge items torch prints of a large array (used to choose the formatter)."""
    if data.ndim == 0:
        return data.reshape(-1)
    if data.shape[0] > 2 * EDGEITEMS:
        parts = [data[:EDGEITEMS], data[-EDGEITEMS:]] if data.ndim == 1 else \
            [_summarized(data[i]) for i in list(range(EDGEITEMS)) + list(range(len(data) - EDGEITEMS, len(data)))]
    else:
        parts = [data] if data.ndim == 1 else [_summarized(row) for row in data]
    return np.concatenate([p.reshape(-1) for p in parts])


def _vector(data, indent, summarize, fmt):
    per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
    values = data.tolist()
    if summarize and len(values) > 2 * EDGEITEMS:
        items = [fmt.format(v) for v in values[:EDGEITEMS]] + [" ..."] + \
                [fmt.format(v) for v in values[-EDGEITEMS:]]
    else:
        items = [fmt.format(v) for v in values]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(data, indent, summarize, fmt):
    if data.ndim == 0:
        return fmt.format(data.item())
    if data.ndim == 1:
        return _vector(data, indent, summarize, fmt)
    if summarize and data.shape[0] > 2 * EDGEITEMS:
        rows = [_nested(data[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)] + ["..."] + \
               [_nested(data[i], indent + 1, summarize, fmt) for i in range(len(data) - EDGEITEMS, len(data))]
    else:
        rows = [_nested(row, indent + 1, summarize, fmt) for row in data]
    return "[" + ("," + "\n" * (data.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _add_suffixes(text, suffixes, indent):
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > LINEWIDTH:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t):
    prefix = "tensor("
    indent = len(prefix)
    dt = t.dtype
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.device.type == "meta":  # no values: torch prints `...`, the size and any non-default dtype
        suffixes.append(f"size={tuple(t.shape)}")
        if dt is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={dt}")
        body = "..."
        data = None
    else:
        data = t._host()
    if data is None:
        pass
    elif data.size == 0:
        if data.ndim != 1:
            suffixes.append(f"size={tuple(data.shape)}")
        if dt is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={dt}")
        body = "[]"
    else:
        if not (dt is _dtype.get_default_dtype() or dt is _dtype.int64 or dt is _dtype.bool_):
            suffixes.append(f"dtype={dt}")
        if dt.is_floating_point:
            data = data.astype(np.float64)
        summarize = data.size > THRESHOLD
        fmt = _Formatter(_summarized(data) if summarize else data.reshape(-1), dt.is_floating_point)
        body = _nested(data, indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
