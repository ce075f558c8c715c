# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Building the ONNX graph: unique names, nodes, initializers, and sizes computed at run time.

A size that follows the dynamic axes (a symbolic.Poly) is computed in the exported graph
from the inputs' shapes: each axis is read once with Shape(input, start=axis, end=axis+1),
and each polynomial is built from those with Mul and Add, once per distinct polynomial.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .. import _dtype
from .symbolic import Poly

_ONNX_TYPES = {
    "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
    "bfloat16": TensorProto.BFLOAT16, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
    "int16": TensorProto.INT16, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL,
}


def onnx_type(np_dtype):
    try:
        return _ONNX_TYPES[np.dtype(np_dtype).name]
    except KeyError:
        raise TypeError(f"ONNX export has no element type for {np.dtype(np_dtype).name}") from None


def np_dtype(dtype):
    """A core dtype, NumPy dtype or ONNX type as a NumPy dtype."""
    if isinstance(dtype, _dtype.dtype):
        return np.dtype(dtype.np_dtype)
    return np.dtype(dtype)


class Builder:
    """Accumulates nodes and initializers; `dims` maps a symbol to (input name, axis)."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.dims = {}
        self._used = set()
        self._consts = {}
        self._polys = {}

    def fresh(self, hint):
        name = hint
        i = 1
        while name in self._used:
            name = f"{hint}_{i}"
            i += 1
        self._used.add(name)
        return name

    def reserve(self, name):
        if name in self._used:
            raise ValueError(f"the name '{name}' is used twice in the exported graph")
        self._used.add(name)
        return name

    def op(self, op_type, inputs, outputs=1, **attrs):
        """Add a node; returns its output name (or the list of them when outputs > 1 or a list)."""
        names = outputs if isinstance(outputs, list) else [self.fresh(f"{op_type}_out") for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=self.fresh(op_type), **attrs))
        return names[0] if len(names) == 1 and not isinstance(outputs, list) else names

    def initializer(self, array, name=None):
        """A named initializer (a parameter keeps its state-dict name), else a fresh name."""
        return self._add_initializer(array, self.fresh("const") if name is None else self.reserve(name))

    def _add_initializer(self, array, name):
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, value, dtype=None):
        """A constant (cached by value): a Python number or array, as an initializer."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        name = self._consts.get(key)
        if name is None:
            name = self._add_initializer(array, self.fresh("const"))
            self._consts[key] = name
        return name

    def ints(self, values):
        """A 1-D int64 tensor of ints and Polys."""
        if all(not isinstance(v, Poly) for v in values):
            return self.const(np.array([int(v) for v in values], dtype=np.int64))
        parts, static = [], []
        for v in values:
            if isinstance(v, Poly):
                if static:
                    parts.append(self.const(np.array(static, dtype=np.int64)))
                    static = []
                parts.append(self.poly(v))
            else:
                static.append(int(v))
        if static:
            parts.append(self.const(np.array(static, dtype=np.int64)))
        return parts[0] if len(parts) == 1 else self.op("Concat", parts, axis=0)

    def scalar(self, value, dtype=np.int64):
        """A 0-d tensor of dtype holding an int, float or Poly."""
        if not isinstance(value, Poly):
            return self.const(np.array(value, dtype=dtype))
        out = self.op("Squeeze", [self.poly(value), self.const(np.array([0], dtype=np.int64))])
        return out if np.dtype(dtype) == np.int64 else self.op("Cast", [out], to=onnx_type(dtype))

    def poly(self, poly):
        """A 1-element int64 tensor computing poly from the inputs' shapes."""
        key = poly.key()
        name = self._polys.get(key)
        if name is not None:
            return name
        total = None
        for mono, coeff in sorted(poly.terms.items()):
            term = None
            for symbol in mono:
                dim = self._dim(symbol)
                term = dim if term is None else self.op("Mul", [term, dim])
            if term is None:
                term = self.const(np.array([coeff], dtype=np.int64))
            elif coeff != 1:
                term = self.op("Mul", [term, self.const(np.array([coeff], dtype=np.int64))])
            total = term if total is None else self.op("Add", [total, term])
        self._polys[key] = total
        return total

    def _dim(self, symbol):
        key = ("dim", symbol)
        name = self._polys.get(key)
        if name is None:
            source, axis = self.dims[symbol]
            shape = self.op("Shape", [source], start=axis, end=axis + 1)
            self._polys[key] = name = shape
        return name

    def model(self, inputs, outputs, producer):
        graph = helper.make_graph(self.nodes, "mindnlp", inputs, outputs, initializer=self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="mindnlp", producer_version=producer)
        model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
        onnx.checker.check_model(model)
        return model
