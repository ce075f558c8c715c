# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Views and movement: reshape, permute, expand, squeeze, cat/stack, split, flip, roll, ...

View ops return arrays that share memory with their input (NumPy views), and the output
shares the input's version counter, as torch views do.
"""
import math

import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from ..autograd.function import Function
from ._helpers import check_same_device, normalize_dim, xp_of
from ._out import write_out
from .conversion import cast


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape, numel):
    """Resolve a single -1 and check the element count, with torch's error text."""
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(Function):
    _is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.shape = x.shape
        return x._data.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return reshape(grad, ctx.shape), None


def reshape(input, *shape):
    shape = _infer_shape(_shape_args(shape), input.numel())
    if shape == tuple(input._data.shape):
        return Reshape.apply(input, shape) if input.requires_grad else _alias(input)
    return Reshape.apply(input, shape)


def _alias(t):
    from .._tensor import _wrap

    return _wrap(t._data, version=t._version)


def view(input, *shape):
    if len(shape) == 1 and (isinstance(shape[0], _dtype.dtype)):
        return view_dtype(input, shape[0])
    shape = _infer_shape(_shape_args(shape), input.numel())
    if not input._data.flags.c_contiguous and input.numel() > 1:
        try:  # raises when no view is possible, like torch's view
            if isinstance(input._data, np.ndarray):
                np.reshape(input._data, shape, copy=False)
            else:  # CuPy: setting the shape of a view is its no-copy reshape
                input._data.view().shape = shape
        except (AttributeError, ValueError):
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one dimension spans "
                "across two contiguous subspaces). Use .reshape(...) instead."
            ) from None
    return Reshape.apply(input, shape)


def view_dtype(input, dtype):
    from .._tensor import _wrap

    return _wrap(input._data.view(dtype.np_dtype), version=input._version)


def view_as(input, other):
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, (1,))
    s = normalize_dim(start_dim, input.ndim)
    e = normalize_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = tuple(input.shape)
    return reshape(input, shape[:s] + (-1,) + shape[e + 1:]) if input.numel() else \
        reshape(input, shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    d = normalize_dim(dim, input.ndim)
    shape = tuple(input.shape)
    return reshape(input, shape[:d] + tuple(sizes) + shape[d + 1:])


class Permute(Function):
    _is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        inverse = [0] * len(dims)
        for i, d in enumerate(dims):
            inverse[d] = i
        ctx.inverse = tuple(inverse)
        return x._data.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        return permute(grad, ctx.inverse), None


def permute(input, *dims):
    dims = _shape_args(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the "
            f"desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(normalize_dim(d, input.ndim) for d in dims)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError(f"permute(): duplicate dims are not allowed in {dims}")
    return Permute.apply(input, dims)


def transpose(input, dim0, dim1):
    if input.ndim == 0:
        return _alias(input)
    ndim = input._data.ndim
    d0 = dim0 + ndim if -ndim <= dim0 < 0 else dim0
    d1 = dim1 + ndim if -ndim <= dim1 < 0 else dim1
    if not (0 <= d0 < ndim and 0 <= d1 < ndim):
        d0, d1 = normalize_dim(dim0, ndim), normalize_dim(dim1, ndim)  # raises torch's IndexError
    dims = list(range(ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return transpose(input, 0, 1) if input.ndim == 2 else _alias(input)


def adjoint(input):
    return transpose(input, -2, -1)


def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [normalize_dim(s, input.ndim) for s in src]
    dst = [normalize_dim(d, input.ndim) for d in dst]
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute.apply(input, tuple(order))


moveaxis = movedim


class Expand(Function):
    _is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        if x._data.size == math.prod(shape):
            # Only size-1 dims are added: a writable view, as torch allows writing into it.
            return x._data.reshape(shape)
        return xp_of(x).broadcast_to(x._data, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad, None  # the engine sums the broadcast dimensions back


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({input.ndim})"
        )
    lead = len(sizes) - input.ndim
    shape = []
    for i, s in enumerate(sizes):
        own = input.shape[i - lead] if i >= lead else None
        if s == -1:
            if own is None:
                raise RuntimeError("expand: -1 is not allowed in a leading, non-existing dimension")
            s = own
        elif own is not None and own != s and own != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({own}) at non-singleton "
                f"dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(input.shape)}"
            )
        shape.append(s)
    shape = tuple(shape)
    if shape == tuple(input.shape):
        return input if not input.requires_grad else Expand.apply(input, shape)
    return Expand.apply(input, shape)


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def broadcast_tensors(*tensors):
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def broadcast_shapes(*shapes):
    return Size(np.broadcast_shapes(*(tuple(s) if not isinstance(s, int) else (s,) for s in shapes)))


def unsqueeze(input, dim):
    d = normalize_dim(dim, input.ndim + 1)
    shape = tuple(input.shape)
    return Reshape.apply(input, shape[:d] + (1,) + shape[d:])


def squeeze(input, dim=None):
    shape = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = {normalize_dim(d, input.ndim) for d in dims} if input.ndim else set()
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    if new == shape:
        return _alias(input) if not input.requires_grad else Reshape.apply(input, shape)
    return Reshape.apply(input, new)


class Cat(Function):
    @staticmethod
    def forward(ctx, *tensors, dim):
        ctx.sizes = [t._data.shape[dim] for t in tensors]
        ctx.dim = dim
        return xp_of(tensors[0]).concatenate([t._data for t in tensors], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return tuple(split(grad, ctx.sizes, ctx.dim))


def cat(tensors, dim=0, *, out=None):
    if out is not None:
        return write_out("cat", out, cat, tensors, dim)

    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    check_same_device(*tensors)
    # torch skips legacy empty 1-D tensors of shape (0,) when concatenating.
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1]
    dtype = kept[0].dtype
    for t in kept[1:]:
        dtype = _dtype.promote_types(dtype, t.dtype)
    kept = [t if t.dtype == dtype else cast(t, dtype) for t in kept]
    ref = kept[0]._data.shape
    d = normalize_dim(dim, len(ref))
    for i, t in enumerate(kept):
        shape = t._data.shape
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(shape)}")
        if shape[:d] != ref[:d] or shape[d + 1:] != ref[d + 1:]:
            axis = next(a for a in range(len(ref)) if a != d and shape[a] != ref[a])
            raise RuntimeError(
                f"Sizes of tensors must match except in dimension {d}. Expected size {ref[axis]} but got "
                f"size {shape[axis]} for tensor number {i} in the list."
            )
    return Cat.apply(*kept, dim=d)


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    if out is not None:
        return write_out("stack", out, stack, tensors, dim)
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 and "
                f"{list(t.shape)} at entry {i}"
            )
    d = normalize_dim(dim, len(shape) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


def hstack(tensors):
    tensors = list(tensors)
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([t if t.ndim > 1 else reshape(t, (1, -1)) for t in tensors], 0)


class Slice(Function):
    """A basic-indexing view (ints, slices, None, Ellipsis)."""

    _is_view = True

    @staticmethod
    def forward(ctx, x, key):
        ctx.shape, ctx.key, ctx.dtype = x.shape, key, x._data.dtype
        return x._data[key]

    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros
        from .indexing import index_put_basic

        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return index_put_basic(base, ctx.key, grad), None


def narrow(input, dim, start, length):
    d = normalize_dim(dim, input.ndim)
    start = int(start)
    if start < 0:
        start += input.shape[d]
    if start < 0 or start + length > input.shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({input.shape[d]}).")
    key = (slice(None),) * d + (slice(start, start + length),)
    return Slice.apply(input, key)


def split(tensor, split_size_or_sections, dim=0):
    d = normalize_dim(dim, tensor.ndim)
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        sections = [step] * (size // step) + ([size % step] if size % step else []) if step else [0]
    else:
        sections = [int(s) for s in split_size_or_sections]
        if sum(sections) != size:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension "
                f"{d}), but got split_sizes={sections}"
            )
    out, start = [], 0
    for n in sections:
        out.append(narrow(tensor, d, start, n))
        start += n
    return tuple(out)


def split_with_sizes(tensor, split_sizes, dim=0):
    return split(tensor, list(split_sizes), dim)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    step = -(-size // chunks) if size else 1
    return split(input, step, d) if size else (input,)


def tensor_split(input, indices_or_sections, dim=0):
    d = normalize_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        bounds = [i * (size // n) + min(i, size % n) for i in range(n + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return tuple(narrow(input, d, a, max(0, b - a)) for a, b in zip(bounds, bounds[1:]))


def unbind(input, dim=0):
    d = normalize_dim(dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def select(input, dim, index):
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return Slice.apply(input, (slice(None),) * d + (int(index),))


class Flip(Function):
    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return xp_of(x).flip(x._data, axis=dims).copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return Flip.apply(input, tuple(normalize_dim(d, input.ndim) for d in dims))


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


class Roll(Function):
    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return xp_of(x).roll(x._data, shifts, axis=dims)

    @staticmethod
    def backward(ctx, grad):
        neg = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return Roll.apply(grad, neg, ctx.dims), None, None


def roll(input, shifts, dims=None):
    if dims is None:
        return reshape(Roll.apply(flatten(input), shifts, 0), tuple(input.shape))
    if isinstance(shifts, int):
        shifts = (shifts,)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return Roll.apply(input, tuple(shifts), tuple(normalize_dim(d, input.ndim) for d in dims))


class Tile(Function):
    @staticmethod
    def forward(ctx, x, reps):
        ctx.shape, ctx.reps = x.shape, reps
        return xp_of(x).tile(x._data, reps)

    @staticmethod
    def backward(ctx, grad):
        from .reduction import sum as reduce_sum

        # Split each tiled axis into (rep, size) and sum over the rep axes.
        shape = tuple(ctx.shape)
        inter = []
        for r, s in zip(ctx.reps, shape):
            inter += [r, s]
        g = reshape(grad, tuple(inter))
        g = reduce_sum(g, dim=tuple(range(0, 2 * len(shape), 2)))
        return g, None


def repeat(input, *sizes):
    sizes = _shape_args(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    x = input
    if len(sizes) > input.ndim:
        x = reshape(x, (1,) * (len(sizes) - input.ndim) + tuple(input.shape))
    return Tile.apply(x, sizes)


def tile(input, dims):
    dims = tuple(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element `repeats` times along dim (flattened when dim is None)."""
    from .indexing import index_select

    if repeats is None:  # repeat_interleave(repeats_tensor) form
        counts = input._host()
        return _wrap_host(np.repeat(np.arange(len(counts)), counts), input)
    x = flatten(input) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, input.ndim)
    n = x.shape[d]
    counts = repeats._host() if isinstance(repeats, Tensor) else np.full(n, int(repeats))
    if counts.size == 1 and n != 1:
        counts = np.full(n, int(counts.reshape(-1)[0]))
    index = np.repeat(np.arange(n), counts)
    return index_select(x, d, _wrap_host(index, x))


def _wrap_host(array, like):
    from .creation import tensor

    return tensor(array.astype(np.int64), device=like.device)


def diagonal(input, offset=0, dim1=0, dim2=1):
    return Diagonal.apply(input, offset, normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim))


class Diagonal(Function):
    @staticmethod
    def forward(ctx, x, offset, d1, d2):
        ctx.shape, ctx.args = x.shape, (offset, d1, d2)
        return xp_of(x).diagonal(x._data, offset, d1, d2).copy()

    @staticmethod
    def backward(ctx, grad):
        from .creation import zeros

        offset, d1, d2 = ctx.args
        base = zeros(tuple(ctx.shape), dtype=grad.dtype, device=grad.device)
        return DiagonalScatter.apply(base, grad, offset, d1, d2), None, None, None


class DiagonalScatter(Function):
    @staticmethod
    def forward(ctx, base, src, offset, d1, d2):
        ctx.args = (offset, d1, d2)
        out = base._data.copy()
        _diag_write(xp_of(base), out, src._data, offset, d1, d2)
        return out

    @staticmethod
    def backward(ctx, grad):
        offset, d1, d2 = ctx.args
        return None, diagonal(grad, offset, d1, d2), None, None, None


def _diag_write(xp, out, values, offset, d1, d2):
    """Write values (diagonal axis last, as diagonal() returns it) onto out's diagonal."""
    n1, n2 = out.shape[d1], out.shape[d2]
    rows = xp.arange(max(0, -offset), min(n1, n2 - offset))
    cols = rows + offset
    index = [slice(None)] * out.ndim
    index[d1], index[d2] = rows, cols
    # NumPy puts the indexed axis where the first index is when d1 and d2 are adjacent,
    # and in front otherwise.
    target = min(d1, d2) if abs(d2 - d1) == 1 else 0
    out[tuple(index)] = xp.moveaxis(values, -1, target)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    from .creation import zeros

    n = input.shape[-1] + abs(offset)
    shape = tuple(input.shape[:-1]) + (n, n)
    base = zeros(shape, dtype=input.dtype, device=input.device)
    return DiagonalScatter.apply(base, input, offset, len(shape) - 2, len(shape) - 1)


def diag(input, diagonal_offset=0):
    if input.ndim == 1:
        return diag_embed(input, diagonal_offset)
    return Diagonal.apply(input, diagonal_offset, 0, 1)


def atleast_1d(input):
    return reshape(input, (1,)) if input.ndim == 0 else input


def atleast_2d(input):
    return reshape(input, (1,) * (2 - input.ndim) + tuple(input.shape)) if input.ndim < 2 else input


# --- grids, block matrices, differences, sliding windows ---------------------------------


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D tensors: 'ij' (torch's default) or 'xy' (first two dims swapped).
    The outputs are expanded views of the inputs."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    check_same_device(*tensors)
    sizes = [t.numel() for t in tensors]
    axes = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        axes[0], axes[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for t, axis in zip(tensors, axes):
        view_shape = [1] * len(tensors)
        view_shape[axis] = t.numel()
        grids.append(expand(reshape(t, tuple(view_shape)), tuple(sizes)))
    return tuple(grids)


def cartesian_prod(*tensors):
    """All combinations of the elements of 1-D tensors, one per row (a single input is returned)."""
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-dim → 1x1, 1-dim → one row); dtype promoted."""
    from .creation import zeros

    if not tensors:
        return zeros((1, 0))
    blocks = []
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(
                f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} dimensions"
            )
        blocks.append(reshape(t, (1, 1)) if t.ndim == 0 else reshape(t, (1, -1)) if t.ndim == 1 else t)
    check_same_device(*blocks)
    dtype = blocks[0].dtype
    for b in blocks[1:]:
        dtype = _dtype.promote_types(dtype, b.dtype)
    width = 0
    for b in blocks:
        width += b.shape[1]
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [zeros((r, left), dtype=dtype, device=b.device), cast(b, dtype),
                 zeros((r, width - left - c), dtype=dtype, device=b.device)]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along dim (bool: whether neighbours differ); prepend/append are
    concatenated first."""
    from .elementwise import logical_xor, sub

    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = normalize_dim(dim, input.ndim)
    pieces = [t for t in (prepend, input, append) if t is not None]
    x = cat(pieces, d) if len(pieces) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if length <= 1:
            return narrow(x, d, 0, 0)
        later, earlier = narrow(x, d, 1, length - 1), narrow(x, d, 0, length - 1)
        x = logical_xor(later, earlier) if x.dtype.name == "bool" else sub(later, earlier)
    return x


class _Unfold(Function):
    """The windows of Tensor.unfold as a strided view of the input (windows may overlap)."""

    _is_view = True

    @staticmethod
    def forward(ctx, x, dim, size, step):
        a = x._data
        count = (a.shape[dim] - size) // step + 1
        ctx.shape, ctx.dim, ctx.size, ctx.step, ctx.count = tuple(a.shape), dim, size, step, count
        shape = a.shape[:dim] + (count,) + a.shape[dim + 1:] + (size,)
        strides = a.strides[:dim] + (a.strides[dim] * step,) + a.strides[dim + 1:] + (a.strides[dim],)
        return xp_of(x).lib.stride_tricks.as_strided(a, shape, strides)

    @staticmethod
    def backward(ctx, grad):
        # Each input element receives the gradients of every window that holds it.
        from .creation import arange, zeros
        from .indexing import index_add

        d, size, count = ctx.dim, ctx.size, ctx.count
        starts = arange(count, device=grad.device) * ctx.step
        index = reshape(reshape(starts, (count, 1)) + arange(size, device=grad.device), (-1,))
        windows = flatten(movedim(grad, -1, d + 1), d, d + 1)
        return index_add(zeros(ctx.shape, dtype=grad.dtype, device=grad.device), d, index, windows), None, None, None


def _unfold(input, dimension, size, step):
    """Tensor.unfold: all windows of `size` elements, `step` apart, along `dimension`, as a new
    last dim; a view of input, as in torch."""
    if input.ndim == 0:
        return reshape(input, (1,)) if size == 1 else _unfold(reshape(input, (1,)), 0, size, step)
    d = normalize_dim(dimension, input.ndim)
    length = input.shape[d]
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _Unfold.apply(input, d, size, step)
