# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The converter table: each core op of a captured graph as ONNX ops.

A converter is `fn(ctx, node, *args, **kwargs)` registered under the op's name (the
Function class's name, or a raw kernel's name: NumPy ufuncs such as `less_equal`, and
`functools.partial` kernels by their function). The arguments are the node's, with
SlotRefs for tensors and symbolic.Polys for sizes that follow the dynamic axes; it
returns the ONNX name of each output. Computation follows the op's dtype rules: operands
are cast to the output slot's dtype, as the core's own promotion did.

Fused ops of the core (linear, layer/RMS norm, attention, rotary, gated MLP products) are
written as their composition, so the exported model needs only standard ONNX ops.
"""
import itertools
import math

import numpy as np
from onnx import TensorProto, helper

from ..jit.graph import SlotRef
from .builder import np_dtype, onnx_type
from .trace import op_name

CONVERTERS = {}
_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def converts(*names):
    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return register


def _axes(ctx, dims, rank):
    return ctx.b.ints([d % rank for d in dims])


# --- elementwise arithmetic -----------------------------------------------------------

def _binary(onnx_op):
    def convert(ctx, node, a, b):
        dtype = ctx.out_dtype(node)
        if dtype.name == "bfloat16":
            # onnxruntime's CPU kernels have no bfloat16 arithmetic; the float32 result of two
            # bfloat16 operands rounded back to bfloat16 is what the core computes.
            out = ctx.b.op(onnx_op, [ctx.operand(a, np.float32), ctx.operand(b, np.float32)])
            return ctx.b.op("Cast", [out], to=TensorProto.BFLOAT16)
        return ctx.b.op(onnx_op, [ctx.operand(a, dtype), ctx.operand(b, dtype)])
    return convert


# Division of integers gives a float output slot, so casting both operands to it divides truly.
for _name, _onnx in (("Add", "Add"), ("Sub", "Sub"), ("Mul", "Mul"), ("Div", "Div"), ("Maximum", "Max"),
                     ("Minimum", "Min")):
    converts(_name)(_binary(_onnx))


@converts("Pow")
def _pow(ctx, node, a, b):
    dtype = ctx.out_dtype(node)
    if not isinstance(b, SlotRef) and b == 2:
        x = ctx.operand(a, dtype)
        return ctx.b.op("Mul", [x, x])
    return ctx.b.op("Pow", [ctx.operand(a, dtype), ctx.operand(b, dtype)])


@converts("Remainder")
def _remainder(ctx, node, a, b):
    """Python's modulo (the result takes the divisor's sign)."""
    dtype = ctx.out_dtype(node)
    x, y = ctx.operand(a, dtype), ctx.operand(b, dtype)
    if dtype.kind in "iu":
        return ctx.b.op("Mod", [x, y], fmod=0)
    quotient = ctx.b.op("Floor", [ctx.b.op("Div", [x, y])])
    return ctx.b.op("Sub", [x, ctx.b.op("Mul", [quotient, y])])


def _unary(onnx_op):
    def convert(ctx, node, x):
        return ctx.b.op(onnx_op, [ctx.operand(x, ctx.out_dtype(node))])
    return convert


for _name in ("Neg", "Exp", "Log", "Sqrt", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Erf", "Reciprocal", "Abs",
              "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"):
    converts(_name)(_unary(_name))
converts("_Relu")(_unary("Relu"))


@converts("_ZeroGrad")
def _rounding(ctx, node, x, name, decimals=0):
    """floor, ceil, round (half to even, as NumPy's and ONNX's Round) and trunc; round to
    `decimals` digits scales by 10**decimals around the Round, as NumPy does."""
    b, dtype = ctx.b, ctx.out_dtype(node)
    x = ctx.operand(x, dtype)
    if name == "trunc":
        return b.op("Mul", [b.op("Sign", [x]), b.op("Floor", [b.op("Abs", [x])])])
    if name == "round" and decimals:
        scale = b.const(10.0 ** decimals, dtype)
        return b.op("Div", [b.op("Round", [b.op("Mul", [x, scale])]), scale])
    return b.op(name.capitalize(), [x])


def _composed_unary(build):
    def convert(ctx, node, x):
        return build(ctx.b, ctx.operand(x, ctx.out_dtype(node)), ctx.out_dtype(node))
    return convert


def _rsqrt(b, x, dtype):
    return b.op("Reciprocal", [b.op("Sqrt", [x])])


def _square(b, x, dtype):
    return b.op("Mul", [x, x])


def _log1p(b, x, dtype):
    return b.op("Log", [b.op("Add", [x, b.const(1, dtype)])])


def _expm1(b, x, dtype):
    return b.op("Sub", [b.op("Exp", [x]), b.const(1, dtype)])


def silu(b, x, dtype):
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


def gelu_exact(b, x, dtype):
    """x/2 (1 + erf(x / sqrt 2))."""
    erf = b.op("Erf", [b.op("Mul", [x, b.const(1 / math.sqrt(2.0), dtype)])])
    return b.op("Mul", [b.op("Mul", [x, b.const(0.5, dtype)]), b.op("Add", [erf, b.const(1, dtype)])])


def gelu_tanh(b, x, dtype):
    """x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    cube = b.op("Mul", [b.op("Mul", [x, x]), x])
    inner = b.op("Add", [x, b.op("Mul", [cube, b.const(0.044715, dtype)])])
    t = b.op("Tanh", [b.op("Mul", [inner, b.const(math.sqrt(2.0 / math.pi), dtype)])])
    return b.op("Mul", [b.op("Mul", [x, b.const(0.5, dtype)]), b.op("Add", [t, b.const(1, dtype)])])


for _name, _build in (("Rsqrt", _rsqrt), ("Square", _square), ("Log1p", _log1p), ("Expm1", _expm1),
                      ("_Silu", silu), ("_GeluExact", gelu_exact), ("_GeluTanh", gelu_tanh)):
    converts(_name)(_composed_unary(_build))

_GATES = {"silu": silu, "gelu_tanh": gelu_tanh}


@converts("_GatedProduct")
def _gated_product(ctx, node, gate, up, activation):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Mul", [_GATES[activation](ctx.b, ctx.operand(gate, dtype), dtype), ctx.operand(up, dtype)])


@converts("Clamp", "_Hardtanh")
def _clamp(ctx, node, x, lo, hi):
    dtype = ctx.out_dtype(node)
    bound = lambda v: "" if v is None else ctx.operand(v, dtype) if isinstance(v, SlotRef) else ctx.b.const(v, dtype)
    if isinstance(lo, SlotRef) or isinstance(hi, SlotRef):
        out = ctx.operand(x, dtype)
        if lo is not None:
            out = ctx.b.op("Max", [out, bound(lo)])
        if hi is not None:
            out = ctx.b.op("Min", [out, bound(hi)])
        return out
    return ctx.b.op("Clip", [ctx.operand(x, dtype), bound(lo), bound(hi)])


@converts("Where")
def _where(ctx, node, cond, a, b):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Where", [ctx.operand(cond, np.bool_), ctx.operand(a, dtype), ctx.operand(b, dtype)])


@converts("MaskedFill")
def _masked_fill(ctx, node, x, mask, value):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Where", [ctx.operand(mask, np.bool_), ctx.operand(value, dtype), ctx.operand(x, dtype)])


def _scatter(ctx, node, x, dim, index, src, reduction):
    """ScatterElements, whose updates have the index's shape: a scalar source is expanded to it."""
    dtype = ctx.out_dtype(node)
    if isinstance(src, SlotRef):
        if list(ctx.shape(src)) != list(ctx.shape(index)):
            raise NotImplementedError("scatter from a source larger than its index")
        updates = ctx.operand(src, dtype)
    else:
        updates = ctx.b.op("Expand", [ctx.b.const(src, dtype), ctx.b.ints(list(ctx.shape(index)))])
    return ctx.b.op("ScatterElements", [ctx.operand(x, dtype), ctx.operand(index, np.int64), updates],
                    axis=dim, reduction=reduction)


@converts("Scatter")
def _scatter_replace(ctx, node, x, dim, index, src, reduce):
    reduction = {None: "none", "add": "add", "sum": "add", "multiply": "mul", "prod": "mul"}.get(reduce)
    if reduction is None:
        raise NotImplementedError(f"scatter with reduce={reduce!r}")
    return _scatter(ctx, node, x, dim, index, src, reduction)


@converts("ScatterAdd")
def _scatter_add(ctx, node, x, dim, index, src):
    return _scatter(ctx, node, x, dim, index, src, "add")


# --- comparisons and logic (raw kernels) ------------------------------------------------

def _compare(onnx_op, negate=False):
    def convert(ctx, node, a, b):
        dtype = np.result_type(*[ctx.dtype(v) if isinstance(v, SlotRef) else v for v in (a, b)])
        if dtype == np.bool_ and onnx_op != "Equal":
            dtype = np.dtype(np.int64)
        out = ctx.b.op(onnx_op, [ctx.operand(a, dtype), ctx.operand(b, dtype)])
        return ctx.b.op("Not", [out]) if negate else out
    return convert


for _name, _onnx in (("equal", "Equal"), ("less", "Less"), ("less_equal", "LessOrEqual"), ("greater", "Greater"),
                     ("greater_equal", "GreaterOrEqual")):
    converts(_name)(_compare(_onnx))
converts("not_equal")(_compare("Equal", negate=True))


def _logic(bool_op, int_op):
    def convert(ctx, node, a, b):
        dtype = ctx.out_dtype(node)
        onnx_op = bool_op if dtype == np.bool_ else int_op
        if onnx_op is None:
            raise TypeError(f"{op_name(node.op)} of {dtype} has no ONNX form")
        return ctx.b.op(onnx_op, [ctx.operand(a, dtype), ctx.operand(b, dtype)])
    return convert


converts("logical_and", "bitwise_and")(_logic("And", "BitwiseAnd"))
converts("logical_or", "bitwise_or")(_logic("Or", "BitwiseOr"))
converts("logical_xor", "bitwise_xor")(_logic("Xor", "BitwiseXor"))


@converts("logical_not", "invert")
def _not(ctx, node, x):
    if ctx.dtype(x) == np.bool_ or op_name(node.op) == "logical_not":
        return ctx.b.op("Not", [ctx.operand(x, np.bool_)])
    return ctx.b.op("BitwiseNot", [ctx.name(x)])


@converts("all", "any")
def _all_any(ctx, node, x):
    kw = node.op.keywords
    rank = len(ctx.shape(x))
    axis = kw.get("axis")
    axes = [] if axis is None else [axis] if isinstance(axis, int) else list(axis)
    as_int = ctx.b.op("Cast", [ctx.name(x)], to=TensorProto.INT64)
    reduce_op = "ReduceMin" if op_name(node.op) == "all" else "ReduceMax"
    inputs = [as_int] + ([_axes(ctx, axes, rank)] if axes else [])
    out = ctx.b.op(reduce_op, inputs, keepdims=int(bool(kw.get("keepdims", False))))
    return ctx.b.op("Cast", [out], to=TensorProto.BOOL)


@converts("_additive_mask")
def _additive_mask(ctx, node, allowed):
    """A boolean attention mask as 0 / -inf of the attention's dtype."""
    dtype = np_dtype(node.op.keywords["dtype"])
    return ctx.b.op("Where", [ctx.name(allowed), ctx.b.const(0, dtype), ctx.b.const(-np.inf, dtype)])


@converts("_arg_array")
def _arg_array(ctx, node, x):
    kw = node.op.keywords
    dim, keepdim = kw["dim"], kw["keepdim"]
    op = "ArgMax" if kw["largest"] else "ArgMin"
    if dim is None:
        flat = ctx.b.op("Reshape", [ctx.name(x), ctx.b.ints([-1])])
        out = ctx.b.op(op, [flat], axis=0, keepdims=0)
        return ctx.b.op("Reshape", [out, ctx.b.ints([1] * len(ctx.shape(x)))]) if keepdim else out
    return ctx.b.op(op, [ctx.name(x)], axis=dim, keepdims=int(keepdim))


def _top_k_positions(ctx, x, dim, k, largest):
    """The Indices output of ONNX TopK: sorted, and among equal values the lower index
    first, which is the core's stable order (descending included)."""
    _, indices = ctx.b.op("TopK", [ctx.name(x), ctx.b.ints([k])], outputs=2, axis=dim, largest=int(largest),
                          sorted=1)
    return indices


@converts("_sort_indices")
def _sort_indices(ctx, node, x):
    kw = node.op.keywords
    return _top_k_positions(ctx, x, kw["dim"], ctx.shape(x)[kw["dim"]], kw["descending"])


@converts("_topk_indices")
def _topk_indices(ctx, node, x):
    kw = node.op.keywords
    return _top_k_positions(ctx, x, kw["dim"], kw["k"], kw["largest"])


def _window_slice(size, kernel_offset, span, stride):
    """(start, end) of the strided slice that takes one kernel offset's window entries along a
    padded dim of `size`: exact ends for a known size; for a dynamic size (stride 1 only) an
    end counted from the back, which leaves `span` entries for the later offsets."""
    if isinstance(size, int):
        count = (size - span - 1) // stride + 1
        return kernel_offset, kernel_offset + stride * (count - 1) + 1
    if stride != 1:
        raise NotImplementedError("a strided window along a dynamic axis")
    after = span - kernel_offset
    return kernel_offset, -after if after else _INT64_MAX


def _padded_sizes(sizes, padding):
    """Per spatial dim: the size the windows are counted over (before + size + after, where a
    negative after, transposed convolution's output_padding, means fewer windows) and the
    buffer's size (the whole input is always kept)."""
    counted, buffer = [], []
    for size, before, after in zip(sizes, padding[0::2], padding[1::2]):
        if not isinstance(size, int):
            if before or after:
                raise NotImplementedError("padded windows along a dynamic axis")
            counted.append(size)
            buffer.append(size)
        else:
            counted.append(size + before + after)
            buffer.append(size + before + max(after, 0))
    return counted, buffer


@converts("Im2Col")
def _im2col(ctx, node, x, kernel, dilation, padding, stride, fill):
    """The windows as strided slices of the padded input (one per kernel offset, over any
    number of spatial dims), stacked behind the channels: (N, C, prod(kernel), *windows),
    then flattened as the core lays them out."""
    b = ctx.b
    rank = len(kernel)
    dtype = ctx.out_dtype(node)
    out = ctx.operand(x, dtype)
    if any(padding):
        pads = [0, 0, *padding[0::2], 0, 0, *(max(after, 0) for after in padding[1::2])]
        out = b.op("Pad", [out, b.ints(pads), b.const(fill, dtype)])
    counted, _ = _padded_sizes(ctx.shape(x)[2:], padding)
    spatial = b.ints(list(range(2, 2 + rank)))
    columns = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        bounds = [_window_slice(size, i * d, d * (k - 1), s)
                  for size, i, d, k, s in zip(counted, offset, dilation, kernel, stride)]
        window = b.op("Slice", [out, b.ints([lo for lo, _ in bounds]), b.ints([hi for _, hi in bounds]), spatial,
                                b.ints(list(stride))])
        columns.append(b.op("Unsqueeze", [window, b.ints([2])]))
    stacked = columns[0] if len(columns) == 1 else b.op("Concat", columns, axis=2)
    return b.op("Reshape", [stacked, b.ints(list(ctx.sgraph.shapes[node.outputs[0]]))])


@converts("Col2Im")
def _col2im(ctx, node, cols, output_size, kernel, dilation, padding, stride):
    """fold: every kernel offset's block of columns is spread to its strided positions (zeros
    between), padded into place in the padded output and summed; the padding is cut off."""
    b = ctx.b
    rank = len(kernel)
    dtype = ctx.out_dtype(node)
    n, channels_by_kernel = ctx.shape(cols)[:2]
    channels = channels_by_kernel // math.prod(kernel)
    counted, buffer = _padded_sizes(output_size, padding)
    counts = [(size - d * (k - 1) - 1) // s + 1 for size, k, d, s in zip(counted, kernel, dilation, stride)]
    blocks = b.op("Reshape", [ctx.operand(cols, dtype), b.ints([n, channels, math.prod(kernel), *counts])])
    total = None
    for index, offset in enumerate(itertools.product(*(range(k) for k in kernel))):
        block = b.op("Gather", [blocks, b.scalar(index)], axis=2)          # (N, C, *counts)
        for axis, (count, s) in enumerate(zip(counts, stride)):
            if s > 1:
                block = _zero_stuffed(b, block, 2 + axis, 2 + rank, count, s)
        pads_before = [i * d for i, d in zip(offset, dilation)]
        spans = [(count - 1) * s + 1 for count, s in zip(counts, stride)]
        pads_after = [size - lo - span for size, lo, span in zip(buffer, pads_before, spans)]
        placed = b.op("Pad", [block, b.ints([0, 0, *pads_before, 0, 0, *pads_after])])
        total = placed if total is None else b.op("Add", [total, placed])
    starts = list(padding[0::2])
    ends = [lo + size for lo, size in zip(starts, output_size)]
    return b.op("Slice", [total, b.ints(starts), b.ints(ends), b.ints(list(range(2, 2 + rank)))])


def _zero_stuffed(b, block, axis, rank, count, stride):
    """block with stride - 1 zeros after each of its `count` entries along `axis`, the last
    entry's cut off: (count - 1) * stride + 1 long, each value where its strided window starts."""
    spread = b.op("Unsqueeze", [block, b.ints([axis + 1])])
    pads = [0] * (2 * (rank + 1))
    pads[(rank + 1) + axis + 1] = stride - 1
    spread = b.op("Pad", [spread, b.ints(pads)])
    shape = b.op("Shape", [block])
    merged = b.op("Concat", [b.op("Slice", [shape, b.ints([0]), b.ints([axis])]), b.ints([count * stride]),
                             b.op("Slice", [shape, b.ints([axis + 1]), b.ints([_INT64_MAX])])], axis=0)
    flat = b.op("Reshape", [spread, merged])
    return b.op("Slice", [flat, b.ints([0]), b.ints([(count - 1) * stride + 1]), b.ints([axis])])


@converts("_Unfold")
def _unfold(ctx, node, x, dim, size, step):
    """Tensor.unfold as a Gather of window positions (count, size) along dim, the window axis
    then moved last."""
    b = ctx.b
    count = ctx.sgraph.shapes[node.outputs[0]][dim]
    starts = b.op("Range", [b.scalar(0), b.scalar(count), b.scalar(1)])
    if step != 1:
        starts = b.op("Mul", [starts, b.scalar(step)])
    offsets = b.op("Range", [b.scalar(0), b.scalar(size), b.scalar(1)])
    positions = b.op("Add", [b.op("Unsqueeze", [starts, b.ints([1])]), b.op("Unsqueeze", [offsets, b.ints([0])])])
    windows = b.op("Gather", [ctx.name(x), positions], axis=dim)
    rank = len(ctx.shape(x)) + 1
    order = [a for a in range(rank) if a != dim + 1] + [dim + 1]
    return windows if order == list(range(rank)) else b.op("Transpose", [windows], perm=order)


# --- dtype and identity -----------------------------------------------------------------

@converts("Cast")
def _cast(ctx, node, x, dtype):
    return ctx.b.op("Cast", [ctx.name(x)], to=onnx_type(np_dtype(dtype)))


@converts("Clone", "ToDevice", "_NoGrad", "Contiguous")
def _identity(ctx, node, x, *rest):
    return ctx.b.op("Identity", [ctx.name(x)])


# --- linear algebra ---------------------------------------------------------------------

@converts("MatMul")
def _matmul(ctx, node, a, b):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("MatMul", [ctx.operand(a, dtype), ctx.operand(b, dtype)])


@converts("BiasedMatMul")
def _biased_matmul(ctx, node, a, b, bias):
    dtype = ctx.out_dtype(node)
    out = ctx.b.op("MatMul", [ctx.operand(a, dtype), ctx.operand(b, dtype)])
    return ctx.b.op("Add", [out, ctx.operand(bias, dtype)])


def _times_transposed(ctx, value, weight, dtype):
    """value @ weight.T, value an ONNX name; ONNX runtimes fold the transpose of an initializer once."""
    b = ctx.b
    return b.op("MatMul", [value, b.op("Transpose", [ctx.operand(weight, dtype)], perm=[1, 0])])


def _product_with_transposed(ctx, x, weight, bias, dtype):
    """x @ weight.T (+ bias)."""
    out = _times_transposed(ctx, ctx.operand(x, dtype), weight, dtype)
    return out if bias is None else ctx.b.op("Add", [out, ctx.operand(bias, dtype)])


@converts("_Linear")
def _linear(ctx, node, x, weight, bias):
    return _product_with_transposed(ctx, x, weight, bias, ctx.out_dtype(node))


@converts("Einsum")
def _einsum(ctx, node, equation, *operands):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Einsum", [ctx.operand(o, dtype) for o in operands], equation=equation.replace(" ", ""))


@converts("_TriMask")
def _tri_mask(ctx, node, x, diagonal, lower):
    return ctx.b.op("Trilu", [ctx.name(x), ctx.b.scalar(diagonal)], upper=int(not lower))


# --- reductions ---------------------------------------------------------------------------

def _reduce(ctx, onnx_op, x, dims, keepdim, dtype):
    rank = len(ctx.shape(x))
    inputs = [ctx.operand(x, dtype)]
    if dims is not None and len(dims) > 0:
        inputs.append(_axes(ctx, dims, rank))
    return ctx.b.op(onnx_op, inputs, keepdims=int(bool(keepdim)))


@converts("Sum")
def _sum(ctx, node, x, dims, keepdim, dtype):
    return _reduce(ctx, "ReduceSum", x, dims, keepdim, ctx.out_dtype(node))


@converts("Mean")
def _mean(ctx, node, x, dims, keepdim):
    return _reduce(ctx, "ReduceMean", x, dims, keepdim, ctx.out_dtype(node))


@converts("_Extreme")
def _extreme(ctx, node, x, dims, keepdim, largest):
    return _reduce(ctx, "ReduceMax" if largest else "ReduceMin", x, dims, keepdim, ctx.out_dtype(node))


@converts("LogSumExp")
def _logsumexp(ctx, node, x, dims, keepdim):
    return _reduce(ctx, "ReduceLogSumExp", x, dims, keepdim, ctx.out_dtype(node))


@converts("Prod")
def _prod(ctx, node, x, dim, keepdim):
    dims = None if dim is None else [dim] if isinstance(dim, int) else dim
    return _reduce(ctx, "ReduceProd", x, dims, keepdim, ctx.out_dtype(node))


@converts("_ExtremeWithIndex")
def _extreme_with_index(ctx, node, x, dim, keepdim, largest):
    values = _reduce(ctx, "ReduceMax" if largest else "ReduceMin", x, [dim], keepdim, ctx.out_dtype(node))
    indices = ctx.b.op("ArgMax" if largest else "ArgMin", [ctx.name(x)], axis=dim, keepdims=int(keepdim))
    return [values, indices]


def _variance(ctx, x, dims, correction, dtype):
    rank = len(ctx.shape(x))
    a = ctx.operand(x, dtype)
    axes = _axes(ctx, dims if dims is not None else range(rank), rank)
    centered = ctx.b.op("Sub", [a, ctx.b.op("ReduceMean", [a, axes], keepdims=1)])
    total = ctx.b.op("ReduceSum", [ctx.b.op("Mul", [centered, centered]), axes], keepdims=1)
    sizes = [ctx.shape(x)[d % rank] for d in (dims if dims is not None else range(rank))]
    count = ctx.b.op("Cast", [ctx.b.op("ReduceProd", [ctx.b.ints(sizes)], keepdims=1)], to=onnx_type(dtype))
    denom = ctx.b.op("Sub", [count, ctx.b.const([correction], dtype)])
    return ctx.b.op("Div", [total, denom]), axes


@converts("Var", "Std")
def _var_std(ctx, node, x, dims, correction, keepdim):
    dtype = ctx.out_dtype(node)
    var, axes = _variance(ctx, x, dims, correction, dtype)
    out = ctx.b.op("Sqrt", [var]) if op_name(node.op) == "Std" else var
    return out if keepdim else ctx.b.op("Squeeze", [out, axes])


@converts("VectorNorm")
def _vector_norm(ctx, node, x, ord, dims, keepdim):
    ops = {1: "ReduceL1", 2: "ReduceL2", float("inf"): "ReduceMax"}
    if ord not in ops:
        raise NotImplementedError(f"vector_norm of order {ord}")
    a = ctx.operand(x, ctx.out_dtype(node))
    if ord == float("inf"):
        a = ctx.b.op("Abs", [a])
    rank = len(ctx.shape(x))
    inputs = [a] + ([_axes(ctx, dims, rank)] if dims else [])
    return ctx.b.op(ops[ord], inputs, keepdims=int(bool(keepdim)))


@converts("Cumsum")
def _cumsum(ctx, node, x, dim):
    return ctx.b.op("CumSum", [ctx.operand(x, ctx.out_dtype(node)), ctx.b.scalar(dim)])


# --- softmax, norms, attention -------------------------------------------------------------

@converts("Softmax")
def _softmax(ctx, node, x, dim, sign):
    dtype = ctx.out_dtype(node)
    a = ctx.operand(x, dtype)
    if sign < 0:
        a = ctx.b.op("Neg", [a])
    return ctx.b.op("Softmax", [a], axis=dim)


@converts("LogSoftmax")
def _log_softmax(ctx, node, x, dim):
    return ctx.b.op("LogSoftmax", [ctx.operand(x, ctx.out_dtype(node))], axis=dim)


@converts("_LayerNorm")
def _layer_norm(ctx, node, x, weight, bias, dims, eps, centered):
    """LayerNormalization when centered; RMS norm (x / sqrt(mean(x^2) + eps) * weight) composed.

    Half-precision inputs are normalised in float32, as the core computes them."""
    dtype = ctx.out_dtype(node)
    compute = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    rank = len(ctx.shape(x))
    a = ctx.operand(x, compute)
    if centered:
        scale = ctx.operand(weight, compute) if weight is not None else ctx.b.const(
            np.ones([ctx.shape(x)[d] for d in dims], dtype=compute))
        inputs = [a, scale] + ([ctx.operand(bias, compute)] if bias is not None else [])
        out = ctx.b.op("LayerNormalization", inputs, axis=min(dims), epsilon=float(eps))
    else:
        axes = _axes(ctx, dims, rank)
        mean_square = ctx.b.op("ReduceMean", [ctx.b.op("Mul", [a, a]), axes], keepdims=1)
        rstd = ctx.b.op("Reciprocal", [ctx.b.op("Sqrt", [ctx.b.op("Add", [mean_square, ctx.b.const(eps, compute)])])])
        out = ctx.b.op("Mul", [a, rstd])
        if weight is not None:
            out = ctx.b.op("Mul", [out, ctx.operand(weight, compute)])
        if bias is not None:
            out = ctx.b.op("Add", [out, ctx.operand(bias, compute)])
    return out if compute == dtype else ctx.b.op("Cast", [out], to=onnx_type(dtype))


@converts("_GroupNorm")
def _group_norm(ctx, node, x, weight, bias, num_groups, eps):
    """(N, C, *) normalised over each group of channels and the spatial dims, then the
    per-channel affine (group_norm, and instance_norm as one channel per group)."""
    b = ctx.b
    dtype = ctx.out_dtype(node)
    compute = np.dtype(np.float32) if dtype.itemsize < 4 else dtype
    shape = ctx.shape(x)
    a = ctx.operand(x, compute)
    grouped = b.op("Reshape", [a, b.ints([shape[0], num_groups, -1])])
    axes = b.ints([2])
    centered = b.op("Sub", [grouped, b.op("ReduceMean", [grouped, axes], keepdims=1)])
    variance = b.op("ReduceMean", [b.op("Mul", [centered, centered]), axes], keepdims=1)
    normed = b.op("Div", [centered, b.op("Sqrt", [b.op("Add", [variance, b.const(eps, compute)])])])
    out = b.op("Reshape", [normed, b.op("Shape", [a])])
    channel_shape = b.ints([1, shape[1]] + [1] * (len(shape) - 2))
    if weight is not None:
        out = b.op("Mul", [out, b.op("Reshape", [ctx.operand(weight, compute), channel_shape])])
    if bias is not None:
        out = b.op("Add", [out, b.op("Reshape", [ctx.operand(bias, compute), channel_shape])])
    return out if compute == dtype else b.op("Cast", [out], to=onnx_type(dtype))


# --- recurrent layers (the capture unrolls the time loop: one _Step per step) ----------------

@converts("_SplitSteps")
def _split_steps(ctx, node, x, batch_sizes):
    """A time-major sequence (T, B, G) as its T (B, G) steps."""
    if batch_sizes is not None:
        raise NotImplementedError("a packed sequence (export the layer on padded input instead)")
    b = ctx.b
    pieces = b.op("Split", [ctx.name(x), b.ints([1] * ctx.shape(x)[0])], outputs=len(node.outputs), axis=0)
    return [b.op("Squeeze", [piece, b.ints([0])]) for piece in (pieces if isinstance(pieces, list) else [pieces])]


def _split_columns(b, value, sizes):
    return b.op("Split", [value, b.ints(sizes)], outputs=len(sizes), axis=1)


@converts("_Step")
def _recurrent_step(ctx, node, kind, *tensors):
    """One step of RNN (tanh/relu), LSTM (with its optional projection) or GRU, as the core's
    rnn._Step computes it."""
    b = ctx.b
    dtype = ctx.out_dtype(node)
    if kind in ("tanh", "relu"):
        gi, h, w_hh, b_hh = tensors
        pre = b.op("Add", [ctx.operand(gi, dtype), _product_with_transposed(ctx, h, w_hh, b_hh, dtype)])
        return b.op("Tanh" if kind == "tanh" else "Relu", [pre])
    if kind == "lstm":
        gi, h, c, w_hh, b_hh, w_hr = tensors
        size = ctx.shape(c)[-1]
        gates = b.op("Add", [ctx.operand(gi, dtype), _product_with_transposed(ctx, h, w_hh, b_hh, dtype)])
        in_gate, forget_gate, cell_input, out_gate = _split_columns(b, gates, [size] * 4)
        in_gate, forget_gate, out_gate = (b.op("Sigmoid", [g]) for g in (in_gate, forget_gate, out_gate))
        c_out = b.op("Add", [b.op("Mul", [forget_gate, ctx.operand(c, dtype)]),
                             b.op("Mul", [in_gate, b.op("Tanh", [cell_input])])])
        h_out = b.op("Mul", [out_gate, b.op("Tanh", [c_out])])
        if w_hr is not None:
            h_out = _times_transposed(ctx, h_out, w_hr, dtype)
        return [h_out, c_out]
    gi_rz, gi_n, h, w_hh, b_hh = tensors
    size = ctx.shape(h)[-1]
    gh_rz, gh_n = _split_columns(b, _product_with_transposed(ctx, h, w_hh, b_hh, dtype), [2 * size, size])
    reset, update = _split_columns(b, b.op("Sigmoid", [b.op("Add", [ctx.operand(gi_rz, dtype), gh_rz])]),
                                   [size, size])
    candidate = b.op("Tanh", [b.op("Add", [ctx.operand(gi_n, dtype), b.op("Mul", [reset, gh_n])])])
    return b.op("Add", [candidate, b.op("Mul", [update, b.op("Sub", [ctx.operand(h, dtype), candidate])])])


@converts("ScaledDotProductAttention")
def _attention(ctx, node, q, k, v, mask, keep, scale, groups):
    """softmax(q k^T * scale + mask) v; grouped key/value heads are broadcast over their query
    heads; rows masked everywhere give zeros, as the core's attention does."""
    if keep is not None:
        raise NotImplementedError("attention dropout (export the model in eval mode)")
    dtype = ctx.out_dtype(node)
    b = ctx.b
    qa = b.op("Mul", [ctx.operand(q, dtype), b.const(scale, dtype)])
    ka, va = ctx.operand(k, dtype), ctx.operand(v, dtype)
    m = ctx.operand(mask, dtype) if mask is not None else None
    heads, head_dim = ctx.shape(q)[-3], ctx.shape(q)[-1]
    rank = len(ctx.shape(q))
    if groups > 1:
        lead = [0] * (rank - 3)
        qa = b.op("Reshape", [qa, b.ints(lead + [heads // groups, groups, -1, head_dim])])
        ka = b.op("Unsqueeze", [ka, b.ints([rank - 2])])
        va = b.op("Unsqueeze", [va, b.ints([rank - 2])])
        if m is not None:
            mask_heads = ctx.shape(mask)[-3] if len(ctx.shape(mask)) >= 3 else 1
            if mask_heads == 1:
                m = b.op("Unsqueeze", [m, b.ints([len(ctx.shape(mask)) - 2])])
            else:
                m = b.op("Reshape", [m, b.ints([0] * (len(ctx.shape(mask)) - 3) + [heads // groups, groups, 0, 0])])
    k_rank = rank + (groups > 1)
    kt = b.op("Transpose", [ka], perm=list(range(k_rank - 2)) + [k_rank - 1, k_rank - 2])
    scores = b.op("MatMul", [qa, kt])
    if m is not None:
        scores = b.op("Add", [scores, m])
    probs = b.op("Softmax", [scores], axis=-1)
    probs = b.op("Where", [b.op("IsNaN", [probs]), b.const(0, dtype), probs])
    out = b.op("MatMul", [probs, va])
    if groups > 1:
        out = b.op("Reshape", [out, b.ints([0] * (rank - 3) + [heads, -1, head_dim])])
    return out


@converts("_SplitHeads")
def _split_heads(ctx, node, x, head_dim):
    split = ctx.b.op("Reshape", [ctx.name(x), ctx.b.ints([0, 0, -1, head_dim])])
    return ctx.b.op("Transpose", [split], perm=[0, 2, 1, 3])


@converts("_Rotary")
def _rotary(ctx, node, x, cos, sin, head_axis):
    """x cos + rotate_half(x) sin, with cos/sin given a head axis at `head_axis`."""
    dtype = ctx.out_dtype(node)
    b = ctx.b
    a = ctx.operand(x, dtype)
    half = ctx.shape(x)[-1] // 2
    first, second = b.op("Split", [a, b.ints([half, half])], outputs=2, axis=-1)
    rotated = b.op("Concat", [b.op("Neg", [second]), first], axis=-1)
    axis = b.ints([head_axis])
    c = b.op("Unsqueeze", [ctx.operand(cos, dtype), axis])
    s = b.op("Unsqueeze", [ctx.operand(sin, dtype), axis])
    return b.op("Add", [b.op("Mul", [a, c]), b.op("Mul", [rotated, s])])


# --- embedding and indexing -------------------------------------------------------------------

@converts("_Embedding")
def _embedding(ctx, node, weight, indices, padding_idx, scale_grad_by_freq):
    return ctx.b.op("Gather", [ctx.name(weight), ctx.name(indices)], axis=0)


@converts("IndexSelect")
def _index_select(ctx, node, x, dim, index):
    return ctx.b.op("Gather", [ctx.name(x), ctx.operand(index, np.int64)], axis=dim)


@converts("Gather")
def _gather(ctx, node, x, dim, index):
    return ctx.b.op("GatherElements", [ctx.name(x), ctx.operand(index, np.int64)], axis=dim)


@converts("Slice")
def _slice(ctx, node, x, key):
    """Basic indexing: slices (one Slice node), then integers (Gather), then None (Unsqueeze)."""
    b = ctx.b
    entries = _expand_key(key, len(ctx.shape(x)))
    out = ctx.name(x)
    starts, ends, axes, steps = [], [], [], []
    axis = 0
    for entry in entries:
        if isinstance(entry, slice):
            if entry != slice(None):
                step = 1 if entry.step is None else entry.step
                default_start, default_end = (0, _INT64_MAX) if step > 0 else (_INT64_MAX, _INT64_MIN)
                starts.append(default_start if entry.start is None else entry.start)
                ends.append(default_end if entry.stop is None else entry.stop)
                axes.append(axis)
                steps.append(step)
            axis += 1
        elif entry is not None:
            axis += 1
    if axes:
        out = b.op("Slice", [out, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    axis = 0
    gathers = []
    for entry in entries:
        if entry is not None and not isinstance(entry, slice):
            gathers.append((axis, entry))
        if entry is not None:
            axis += 1
    for axis, index in reversed(gathers):
        out = b.op("Gather", [out, b.scalar(index)], axis=axis)
    kept = [e for e in entries if e is None or isinstance(e, slice)]
    new_axes = [i for i, e in enumerate(kept) if e is None]
    if new_axes:
        out = b.op("Unsqueeze", [out, b.ints(new_axes)])
    return out if out != ctx.name(x) else b.op("Identity", [out])


def _expand_key(key, rank):
    key = key if isinstance(key, tuple) else (key,)
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    out = []
    for k in key:
        if k is Ellipsis:
            out += [slice(None)] * (rank - used)
            used = rank
        else:
            out.append(k)
    return out + [slice(None)] * (rank - sum(1 for k in out if k is not None))


@converts("Index")
def _index(ctx, node, x, key):
    """Advanced indexing by integer arrays: one array (Gather on its axis) or arrays on the
    leading axes (GatherND on their broadcast), with full slices elsewhere."""
    entries = list(key) if isinstance(key, tuple) else [key]
    arrays = [i for i, e in enumerate(entries) if isinstance(e, SlotRef)]
    others_full = all(e == slice(None) for i, e in enumerate(entries) if i not in arrays)
    if not arrays or not others_full or any(ctx.dtype(entries[i]) == np.bool_ for i in arrays):
        raise NotImplementedError("this form of advanced indexing")
    if len(arrays) == 1:
        return ctx.b.op("Gather", [ctx.name(x), ctx.operand(entries[arrays[0]], np.int64)], axis=arrays[0])
    if arrays != list(range(len(arrays))):
        raise NotImplementedError("advanced indexing with index arrays after a slice")
    b = ctx.b
    ranks = [len(ctx.shape(entries[i])) for i in arrays]
    broadcast_shape = b.op("Shape", [b.op("Add", [ctx.operand(entries[i], np.int64) for i in arrays[:2]])])
    for i in arrays[2:]:
        broadcast_shape = b.op("Shape", [b.op("Add", [b.op("ConstantOfShape", [broadcast_shape],
                                                            value=_zero_int64()), ctx.operand(entries[i], np.int64)])])
    columns = [b.op("Unsqueeze", [b.op("Expand", [ctx.operand(entries[i], np.int64), broadcast_shape]),
                                  b.ints([max(ranks)])]) for i in arrays]
    return b.op("GatherND", [ctx.name(x), b.op("Concat", columns, axis=-1)])


def _zero_int64():
    return helper.make_tensor("value", TensorProto.INT64, [1], [0])


# --- shapes -------------------------------------------------------------------------------------

@converts("Reshape")
def _reshape(ctx, node, x, shape):
    return ctx.b.op("Reshape", [ctx.name(x), ctx.b.ints(list(shape))])


@converts("Expand")
def _expand(ctx, node, x, shape):
    return ctx.b.op("Expand", [ctx.name(x), ctx.b.ints(list(shape))])


@converts("Permute")
def _permute(ctx, node, x, dims):
    rank = len(ctx.shape(x))
    return ctx.b.op("Transpose", [ctx.name(x)], perm=[d % rank for d in dims])


@converts("Cat")
def _cat(ctx, node, *tensors, dim):
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Concat", [ctx.operand(t, dtype) for t in tensors], axis=dim)


@converts("Tile")
def _tile(ctx, node, x, reps):
    return ctx.b.op("Tile", [ctx.name(x), ctx.b.ints(list(reps))])


@converts("Flip")
def _flip(ctx, node, x, dims):
    n = len(dims)
    return ctx.b.op("Slice", [ctx.name(x), ctx.b.ints([-1] * n), ctx.b.ints([_INT64_MIN] * n), ctx.b.ints(list(dims)),
                               ctx.b.ints([-1] * n)])


@converts("ConstantPad")
def _constant_pad(ctx, node, x, pads, value):
    """pads holds (before, after) for every dim; ONNX lists all befores, then all afters."""
    before, after = [p[0] for p in pads], [p[1] for p in pads]
    dtype = ctx.out_dtype(node)
    return ctx.b.op("Pad", [ctx.name(x), ctx.b.ints(before + after), ctx.b.const(value, dtype)], mode="constant")
