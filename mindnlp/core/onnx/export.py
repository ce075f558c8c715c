# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`export`: torch.onnx.export's contract, built from core.jit's captured graph.

The model is captured on the example arguments (and, for dynamic axes, at a few other
sizes: trace.py), each captured op is written as ONNX ops by its converter (ops.py),
parameters and buffers become initializers under their state-dict names, and the file
is written atomically.

Constants the model builds from sizes (position ranges, filled masks) are rebuilt at run
time from the inputs' shapes when they follow a dynamic axis: a constant filled with one
value becomes ConstantOfShape and an arithmetic progression becomes Range. With
`do_constant_folding`, ops that read only constants independent of the dynamic axes are
computed at export and stored as initializers.
"""
import inspect
import os
import tempfile

import numpy as np

from .. import _tensor
from ..jit.capture import OutputTree
from ..jit.graph import SlotRef
from ..nn import Module
from .errors import OnnxExporterError, UnsupportedOperatorError
from .symbolic import Poly

DEFAULT_OPSET = 18
MIN_OPSET = 18


def export(model, args=(), f=None, input_names=None, output_names=None, dynamic_axes=None, opset_version=None,
           kwargs=None, do_constant_folding=True, verbose=False):
    """Export model(*args, **kwargs) to the ONNX file (path or binary file object) f.

    args is a tensor or a tuple of arguments, optionally ending with a dict of keyword
    arguments. Tensor arguments become graph inputs (named by input_names, else by the
    forward's parameter names and keyword names); Python values are fixed at export.
    dynamic_axes maps an input or output name to {axis: name} or a list of axes: those sizes
    may differ at run time. Axes given the same name are one size; axes given as a list are
    named "<input>_dynamic_axes_<k>", and list axes of several inputs at the same position
    with the same example size are one size (input_ids' and attention_mask's batch). A name
    joining others with `+` is their sum ("past_sequence + sequence": a decoder's mask over
    its cached and new tokens); each of them must name an axis of its own.
    Returns the onnx.ModelProto.
    """
    try:
        import onnx
    except ImportError:
        raise ImportError("ONNX export needs the onnx package: pip install 'mindnlp[onnx]'") from None
    from . import ops
    from .builder import Builder, onnx_type
    from .trace import axis_terms, drop_guards, map_tensors, op_name, trace

    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset < MIN_OPSET:
        raise ValueError(f"opset_version {opset} is not supported; export writes opset {MIN_OPSET} or later")
    if f is None:
        raise TypeError("export() needs f, a file path or a binary file object")
    args, kwargs = _split_args(args, kwargs)
    leaves = []
    map_tensors((args, kwargs), leaves.append)
    names = _input_names(model, args, kwargs, input_names, len(leaves))

    modules = {}
    training = None
    if isinstance(model, Module):
        modules = {id(m): name or type(model).__name__ for name, m in model.named_modules()}
        training = {m: m.training for m in model.modules()}
        model.eval()
    try:
        axes, output_axes = _dynamic_axes(dynamic_axes, names, leaves)
        sgraph = trace(model, args, kwargs, axes, modules)
    finally:
        if training is not None:
            for m, flag in training.items():
                m.training = flag
    drop_guards(sgraph)
    graph = sgraph.graph

    b = Builder(opset)
    for name in names:
        b.reserve(name)
    out_slots = graph.output_slots()
    out_names = _output_names(graph.output, output_names, len(out_slots))
    for name in out_names:
        b.reserve(name)
    unknown = sorted(set(output_axes) - set(out_names))
    if unknown:
        raise ValueError(f"dynamic_axes names {unknown}, which are neither inputs {names} nor outputs {out_names}")

    slot_names = {}
    value_infos = []
    for i, (leaf, slot) in enumerate(zip(leaves, graph.inputs)):
        dims = list(leaf.shape)
        for axis, symbol in axes.get(i, {}).items():
            dims[axis] = symbol
            if axis_terms(symbol) == ([symbol], 0):
                b.dims.setdefault(symbol, (names[i], axis))
        value_infos.append(onnx.helper.make_tensor_value_info(names[i], onnx_type(leaf._data.dtype), dims))
        slot_names.setdefault(slot, names[i])

    params = _parameter_names(model)
    static = _static_slots(sgraph, do_constant_folding)
    ctx = Context(b, sgraph, slot_names)
    for slot in graph.slots:
        if slot.kind == "external":
            name = params.get(id(slot.tensor))
            ctx.pending[slot.index] = lambda s=slot, name=name: b.initializer(_host(s.tensor._data), name)
        elif slot.kind == "const":
            values = sgraph.const_values[slot.index]
            if slot.index in static:
                ctx.pending[slot.index] = lambda v=values[0]: b.const(v)
            else:
                ctx.pending[slot.index] = lambda v=values, s=slot.index: _dynamic_constant(b, v, sgraph.shapes[s], s, sgraph.sizes)

    for node in graph.nodes:
        if do_constant_folding and node.writes is None and all(o is None or o in static for o in node.outputs):
            for o in node.outputs:
                if o is not None:
                    ctx.pending[o] = lambda o=o: b.const(_host(sgraph.arrays[o]))
            continue
        _convert(ctx, node, ops.CONVERTERS, op_name(node.op))

    outputs = []
    for name, slot in zip(out_names, out_slots):
        b.op("Identity", [ctx.names_of(slot)], outputs=[name])
        dims = [_dim_param(d, output_axes.get(name, {}).get(i)) for i, d in enumerate(sgraph.shapes[slot])]
        outputs.append(onnx.helper.make_tensor_value_info(name, onnx_type(graph.slots[slot].dtype), dims))
    from ... import __version__
    proto = b.model(value_infos, outputs, __version__)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    _write(proto.SerializeToString(), f)
    return proto


class Context:
    """What a converter sees: the builder, and each slot's ONNX name, dtype and symbolic shape."""

    def __init__(self, builder, sgraph, names):
        self.b = builder
        self.sgraph = sgraph
        self.slots = sgraph.graph.slots
        self.names = names
        self.pending = {}       # slot -> makes its initializer when first read

    def names_of(self, slot):
        name = self.names.get(slot)
        if name is None:
            name = self.names[slot] = self.pending.pop(slot)()
        return name

    def name(self, ref):
        return self.names_of(ref.slot)

    def dtype(self, ref):
        return np.dtype(self.slots[ref.slot].dtype)

    def shape(self, ref):
        return self.sgraph.shapes[ref.slot]

    def out_dtype(self, node):
        return np.dtype(self.slots[node.outputs[0]].dtype)

    def operand(self, value, dtype):
        """A tensor (cast to dtype when it differs), a size or a Python number, as an ONNX name."""
        from .builder import onnx_type
        dtype = np.dtype(dtype)
        if isinstance(value, SlotRef):
            name = self.name(value)
            return name if self.dtype(value) == dtype else self.b.op("Cast", [name], to=onnx_type(dtype))
        if isinstance(value, Poly):
            return self.b.scalar(value, dtype)
        return self.b.const(value, dtype)


def _convert(ctx, node, table, name):
    site = ctx.sgraph.site(node)
    converter = table.get(name)
    if converter is None:
        raise UnsupportedOperatorError(f"the core op '{name}' has no ONNX converter (called at {site})")
    if node.writes is not None:
        for w in node.writes:
            root = ctx.slots[w].root
            if any(s.root == root and s.index != w for s in ctx.slots):
                raise UnsupportedOperatorError(f"'{name}' writes in place into a tensor with views (called at {site}), "
                                               "which ONNX cannot express")
    try:
        result = converter(ctx, node, *ctx.sgraph.args[id(node)], **ctx.sgraph.kwargs[id(node)])
    except (NotImplementedError, TypeError, KeyError) as err:
        raise UnsupportedOperatorError(f"the core op '{name}' (called at {site}) cannot be exported: {err}") from None
    results = result if isinstance(result, list) else [result]
    for slot, out in zip(node.outputs, results):
        if slot is not None:
            ctx.names[slot] = out


def _static_slots(sgraph, folding):
    """Slots whose value is the same at every size of the dynamic axes (and known at export)."""
    graph = sgraph.graph
    static = set()
    for slot in graph.slots:
        if slot.kind == "const":
            values = sgraph.const_values[slot.index]
            if all(v.shape == values[0].shape and np.array_equal(v, values[0]) for v in values):
                static.add(slot.index)
    if not folding:
        return static
    for node in graph.nodes:
        if node.writes is None and all(r in static for r in node.reads()) and node.reads() and \
                not _has_poly((sgraph.args[id(node)], sgraph.kwargs[id(node)])):
            static.update(o for o in node.outputs if o is not None)
    return static


def _has_poly(value):
    if isinstance(value, Poly):
        return True
    if isinstance(value, slice):
        return any(isinstance(v, Poly) for v in (value.start, value.stop, value.step))
    if isinstance(value, (tuple, list)):
        return any(_has_poly(v) for v in value)
    if isinstance(value, dict):
        return any(_has_poly(v) for v in value.values())
    return False


def _dynamic_constant(b, values, shape, index, sizes):
    """A constant that follows the dynamic axes, rebuilt from their sizes: a fill or a range,
    whose value and start may themselves follow the sizes (a decoder's cache positions
    start after its past)."""
    from onnx import numpy_helper

    from .builder import onnx_type

    flat = [np.asarray(v).reshape(-1) for v in values]
    dtype = values[0].dtype
    starts = [f[0].item() if f.size else None for f in flat]
    known = [(v, s) for v, s in zip(starts, sizes) if v is not None]
    if all((f == f[0]).all() for f in flat if f.size):
        if len({v for v, _ in known}) <= 1:
            fill = np.array([known[0][0] if known else 0], dtype=dtype)
            return b.op("ConstantOfShape", [b.ints(list(shape))], value=numpy_helper.from_array(fill, "value"))
        value = _fitted_start(known, index)
        return b.op("Expand", [b.op("Cast", [b.scalar(value)], to=onnx_type(dtype)), b.ints(list(shape))])
    if values[0].ndim == 1 and _is_range(flat):
        start, step = _fitted_start(known, index), flat[0][1] - flat[0][0]
        out = b.op("Range", [b.scalar(0), b.scalar(shape[0]), b.scalar(1)])
        if dtype != np.int64:
            out = b.op("Cast", [out], to=onnx_type(dtype))
        if step != 1:
            out = b.op("Mul", [out, b.const(step, dtype)])
        if not isinstance(start, Poly):
            return out if start == 0 else b.op("Add", [out, b.const(start, dtype)])
        return b.op("Add", [out, b.op("Cast", [b.scalar(start)], to=onnx_type(dtype))])
    raise OnnxExporterError(f"the constant %{index} (shape {tuple(values[0].shape)}) depends on the dynamic axes in a "
                            "way export cannot rebuild (only filled tensors and ranges are)")


def _fitted_start(known, index):
    """The first value of a fill or range: a number, or a Poly of the sizes when it changes."""
    from .symbolic import fit

    values = [v for v, _ in known]
    if len(set(values)) == 1:
        return values[0]
    if any(not float(v).is_integer() for v in values):
        raise OnnxExporterError(f"the constant %{index} starts at {values} at the export sizes: not a size")
    poly = fit([int(v) for v in values], [s for _, s in known])
    if poly is None:
        raise OnnxExporterError(f"the constant %{index} starts at {values} at the export sizes, which is no "
                                "polynomial of them")
    return poly


def _is_range(flat):
    """Whether every capture's values are a progression with the same step (any start)."""
    if any(f.size < 2 for f in flat):
        return False
    step = flat[0][1] - flat[0][0]
    return all(np.allclose(f, f[0] + step * np.arange(f.size)) for f in flat)


def _dim_param(size, name):
    if name is not None:
        return name
    if isinstance(size, Poly):
        terms = size.terms
        if len(terms) == 1 and next(iter(terms.values())) == 1 and len(next(iter(terms))) == 1:
            return next(iter(terms))[0]
        return repr(size)
    return int(size)


def _split_args(args, kwargs):
    if isinstance(args, _tensor.Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        raise TypeError(f"args must be a tensor or a tuple of arguments, got {type(args).__name__}")
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _input_names(model, args, kwargs, given, count):
    """Names of the tensor leaves: the forward's parameter names, keyword names, indexed inside
    containers; `given` replaces the first ones."""
    fn = model.forward if isinstance(model, Module) else model
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []

    def collect(value, name):
        if isinstance(value, _tensor.Tensor):
            names.append(name)
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                collect(v, f"{name}_{i}")
        elif isinstance(value, dict):
            for k, v in value.items():
                collect(v, f"{name}_{k}")

    for i, a in enumerate(args):
        collect(a, params[i].name if i < len(params) else f"input_{i}")
    for k, v in kwargs.items():
        collect(v, k)
    return _named(names, given, count, "input")


def _output_names(template, given, count):
    """Names of the output tensors: ModelOutput/dict keys, "output_<i>" in sequences."""
    names = []

    def collect(value, prefix):
        if isinstance(value, SlotRef):
            names.append(prefix or "output")
        elif isinstance(value, OutputTree):
            for i, v in enumerate(value.items):
                if value.keys is not None:
                    collect(v, f"{prefix}_{value.keys[i]}" if prefix else str(value.keys[i]))
                else:
                    collect(v, f"{prefix or 'output'}_{i}")

    collect(template, "")
    return _named(names, given, count, "output")


def _named(names, given, count, kind):
    """The derived names with the first ones replaced by the caller's `<kind>_names`, checked."""
    if given is not None:
        given = list(given)
        if len(given) > count:
            raise ValueError(f"{len(given)} {kind}_names for {count} tensor {kind}s")
        names[:len(given)] = given
    if len(set(names)) != len(names):
        raise ValueError(f"{kind} names must be unique: {names}")
    return names


def _dynamic_axes(dynamic_axes, names, leaves):
    """({input leaf: {axis: symbol}}, {output name: {axis: symbol}}) from torch's dynamic_axes."""
    inputs, outputs = {}, {}
    listed = {}
    for name, spec in (dynamic_axes or {}).items():
        if isinstance(spec, (list, tuple)):
            spec = {int(a): None for a in spec}
        elif not isinstance(spec, dict):
            raise TypeError(f"dynamic_axes['{name}'] must be a list of axes or a dict {{axis: name}}")
        if name in names:
            leaf = names.index(name)
            rank = leaves[leaf].ndim
            dims = {}
            for axis, symbol in spec.items():
                if not -rank <= int(axis) < rank:
                    raise ValueError(f"dynamic axis {axis} of input '{name}' is out of range for rank {rank}")
                axis = int(axis) % rank
                if symbol is None:
                    key = (axis, leaves[leaf].shape[axis])
                    symbol = listed.setdefault(key, f"{name}_dynamic_axes_{axis + 1}")
                dims[axis] = str(symbol)
            inputs[leaf] = dims
        else:
            outputs[name] = {int(a): (str(s) if s is not None else f"{name}_dynamic_axes_{int(a) + 1}")
                             for a, s in spec.items()}
    return inputs, outputs


def _parameter_names(model):
    if not isinstance(model, Module):
        return {}
    names = {}
    for name, t in list(model.named_parameters(remove_duplicate=False)) + list(model.named_buffers()):
        names.setdefault(id(t), name)
    return names


def _host(array):
    return np.asarray(_tensor._wrap(array)._host()) if not isinstance(array, np.ndarray) else array


def _write(data, f):
    """Write the bytes to a path atomically (a temporary file renamed over it) or to a file object."""
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".onnx-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
