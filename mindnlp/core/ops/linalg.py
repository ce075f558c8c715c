# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Matrix products and triangular masks: matmul, bmm, einsum, baddbmm, outer, tril/triu.

Products go to BLAS through `xp.matmul`; float16/bfloat16 are multiplied in float32. Stacks
of matrices use the backend's batched kernel where it has one.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.function import Function
from ..backends import backend_for_array
from ._helpers import HALF_NP, check_same_device, narrow, widen, xp_of
from ._out import write_out
from .conversion import cast
from ..amp.autocast_mode import autocast_inputs


def _matmul_arrays(xp, a, b, bias=None):
    """a @ b (+ bias, added to each row) for arrays of at least 2 dims."""
    if a.dtype in HALF_NP:
        # against a 16-bit weight: widened where read or multiplied at 16 bits, not converted whole
        kernel = backend_for_array(a).fused("half_matmul", a) if a.ndim == 2 and b.ndim == 2 else None
        out = None if kernel is None else kernel(a, b, bias)
        if out is not None:
            return narrow(out, a.dtype)
        half_bias = None if bias is None else widen(bias)
        return narrow(_matmul_arrays(xp, widen(a), widen(b), half_bias), a.dtype)
    if a.ndim > 2 or b.ndim > 2:
        kernel = backend_for_array(a).fused("batched_matmul", a)
        out = kernel(a, b) if kernel is not None else xp.matmul(a, b)
    else:
        kernel = backend_for_array(a).fused("matmul", a, work=a.shape[0] * a.shape[1] * b.shape[1])
        if kernel is not None:
            return kernel(a, b, bias)
        out = xp.matmul(a, b)
    if bias is not None:
        out += bias
    return out


class MatMul(Function):
    """Batched matmul of tensors with at least 2 dims (batch dims broadcast)."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _matmul_arrays(xp_of(a), a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = matmul(grad, b.transpose(-1, -2)) if ctx.needs_input_grad[0] else None
        gb = matmul(a.transpose(-1, -2), grad) if ctx.needs_input_grad[1] else None
        return ga, gb


def _common(a, b, name):
    check_same_device(a, b)
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {_dtype.cpp_type_name(a.dtype)} != "
            f"{_dtype.cpp_type_name(b.dtype)}"
        )
    if a.dtype is _dtype.bool_:
        raise RuntimeError(f"{name} is not implemented for bool tensors")


def matmul(input, other, *, out=None):
    """torch.matmul: 1-D operands are promoted to matrices and the extra dim removed."""
    if out is not None:
        return write_out("matmul", out, matmul, input, other)
    input, other = autocast_inputs("matmul", input, other)
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and {other.ndim}D")
    _common(input, other, "matmul")
    a, b = input, other
    if a.shape[-1] != (b.shape[-2] if b.ndim > 1 else b.shape[0]):
        bs = tuple(b.shape)
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({'x'.join(map(str, a.shape))} and {'x'.join(map(str, bs))})"
        )
    squeeze_front = a.ndim == 1
    squeeze_back = b.ndim == 1
    if squeeze_front:
        a = a.unsqueeze(0)
    if squeeze_back:
        b = b.unsqueeze(-1)
    out = MatMul.apply(a, b)
    if squeeze_back:
        out = out.squeeze(-1)
    if squeeze_front:
        out = out.squeeze(-1 if squeeze_back else -2)
    return out


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {input.ndim}D and {mat2.ndim}D")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {input.shape[0]} and {mat2.shape[0]}")
    return matmul(input, mat2)


def mv(input, vec):
    return matmul(input, vec)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


vdot = inner = dot


def outer(input, vec2):
    return matmul(input.unsqueeze(-1), vec2.unsqueeze(0))


ger = outer


class BiasedMatMul(Function):
    """a @ b + bias for matrices a (m, k), b (k, n) and a vector bias (n,) added to every row:
    addmm as linear layers use it (GPT-2's Conv1D). One op, so that the product adds the
    bias to each band of rows while the band is in cache, instead of a second pass over
    the whole output in a freshly allocated array (4% of a GPT-2 prefill); a 16-bit result
    is rounded once, as torch's addmm rounds it."""

    @staticmethod
    def forward(ctx, a, b, bias):
        ctx.save_for_backward(a, b)
        return _matmul_arrays(xp_of(a), a._data, b._data, bias._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = matmul(grad, b.t()) if ctx.needs_input_grad[0] else None
        gb = matmul(a.t(), grad) if ctx.needs_input_grad[1] else None
        gbias = grad.sum(0) if ctx.needs_input_grad[2] else None
        return ga, gb, gbias


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    input, mat1, mat2 = autocast_inputs("addmm", input, mat1, mat2)
    if beta == 1 and alpha == 1 and _row_bias(input, mat1, mat2):
        return BiasedMatMul.apply(mat1, mat2, input)
    prod = mm(mat1, mat2)
    return _scaled_sum(input, prod, beta, alpha)


def _row_bias(input, mat1, mat2):
    """Whether addmm adds a vector to each row of a product of matrices of one float dtype."""
    return (mat1.ndim == 2 and mat2.ndim == 2 and input.ndim == 1 and mat1.shape[1] == mat2.shape[0]
            and input.shape[0] == mat2.shape[1] and input.dtype == mat1.dtype == mat2.dtype
            and input.dtype.is_floating_point and input.device == mat1.device == mat2.device)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    input, batch1, batch2 = autocast_inputs("baddbmm", input, batch1, batch2)
    prod = bmm(batch1, batch2)
    return _scaled_sum(input, prod, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    input, batch1, batch2 = autocast_inputs("addbmm", input, batch1, batch2)
    prod = bmm(batch1, batch2).sum(0)
    return _scaled_sum(input, prod, beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _scaled_sum(input, mv(mat, vec), beta, alpha)


def _scaled_sum(input, prod, beta, alpha):
    from .elementwise import add, mul

    if alpha != 1:
        prod = mul(prod, alpha)
    if beta == 0:
        return add(prod, mul(input, 0.0)) if input.requires_grad else prod + 0 * input.detach()
    return add(mul(input, beta) if beta != 1 else input, prod)


class Einsum(Function):
    @staticmethod
    def forward(ctx, equation, *operands):
        ctx.save_for_backward(*operands)
        ctx.equation = equation
        xp = xp_of(operands[0])
        arrays = [o._data for o in operands]
        half = arrays[0].dtype in HALF_NP
        if half:
            arrays = [widen(a) for a in arrays]
        out = xp.einsum(equation, *arrays, optimize=len(arrays) > 2)
        return narrow(out, operands[0]._data.dtype) if half else out

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        inputs, output = ctx.equation.split("->")
        terms = inputs.split(",")
        grads = [None]
        for i, op in enumerate(operands):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [t for j, t in enumerate(terms) if j != i]
            other_ops = [o for j, o in enumerate(operands) if j != i]
            target = terms[i]
            sizes = dict(zip(target, op.shape))
            # A letter repeated in the operand ("ii") reads its diagonal: the gradient is computed
            # per distinct letter and then written back onto that diagonal.
            unique = "".join(dict.fromkeys(target))
            # Letters of the operand missing from everything else were summed away: broadcast back.
            available = set(output) | set("".join(others))
            missing = [c for c in unique if c not in available]
            eq = ",".join([output] + others) + "->" + "".join(c for c in unique if c not in missing)
            g = einsum(eq, grad, *other_ops)
            if missing:
                g = _expand_missing(g, unique, missing, tuple(sizes[c] for c in unique))
            if unique != target:
                g = _embed_diagonal(g, unique, target, sizes, set(ctx.equation))
            grads.append(g)
        return tuple(grads)


def _embed_diagonal(g, unique, target, sizes, used_letters):
    """Spread g (indexed by `unique`) onto the diagonals of `target` ("i" → "ii") with identity
    matrices, which keeps the result differentiable."""
    from .creation import eye

    spare = (c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used_letters)
    seen, renamed, eye_terms = set(), [], []
    for c in target:
        if c in seen:
            fresh = next(spare)
            renamed.append(fresh)
            eye_terms.append((c + fresh, sizes[c]))
        else:
            seen.add(c)
            renamed.append(c)
    eyes = [eye(n, dtype=g.dtype, device=g.device) for _, n in eye_terms]
    return einsum(",".join([unique] + [t for t, _ in eye_terms]) + "->" + "".join(renamed), g, *eyes)


def _expand_missing(g, target, missing, shape):
    kept = [c for c in target if c not in missing]
    view_shape = []
    for c in target:
        view_shape.append(1 if c in missing else g.shape[kept.index(c)])
    return g.reshape(tuple(view_shape)).expand(tuple(shape))


def _normalize_equation(equation, operands):
    """Make the output explicit and expand '...' into letters so backward can rearrange terms."""
    equation = equation.replace(" ", "")
    if "->" not in equation:
        inputs = equation
        letters = [c for c in inputs if c.isalpha()]
        counts = {c: letters.count(c) for c in letters}
        out = ("..." if "..." in inputs else "") + "".join(sorted(c for c in counts if counts[c] == 1))
        equation = inputs + "->" + out
    if "..." not in equation:
        return equation
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    used = set(c for c in equation if c.isalpha())
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    max_ell = max((operands[i].ndim - (len(t) - 3)) if "..." in t else 0 for i, t in enumerate(terms))
    ell = "".join(spare[:max_ell])
    new_terms = []
    for i, t in enumerate(terms):
        if "..." in t:
            n = operands[i].ndim - (len(t) - 3)
            t = t.replace("...", ell[max_ell - n:] if n else "")
        new_terms.append(t)
    output = output.replace("...", ell)
    return ",".join(new_terms) + "->" + output


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = autocast_inputs("einsum", *operands)
    dtype = operands[0].dtype
    for o in operands[1:]:
        dtype = _dtype.promote_types(dtype, o.dtype)
    operands = tuple(cast(o, dtype) for o in operands)
    check_same_device(*operands)
    return Einsum.apply(_normalize_equation(equation, operands), *operands)


def tril(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _TriMask.apply(input, diagonal, True)


def triu(input, diagonal=0):
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _TriMask.apply(input, diagonal, False)


class _TriMask(Function):
    @staticmethod
    def forward(ctx, x, diagonal, lower):
        xp = xp_of(x)
        ctx.diagonal, ctx.lower = diagonal, lower
        return (xp.tril if lower else xp.triu)(x._data, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return _TriMask.apply(grad, ctx.diagonal, ctx.lower), None, None


def tril_indices(row, col, offset=0, dtype=None, device=None):
    from .creation import tensor

    r, c = np.tril_indices(row, offset, col)
    return tensor(np.stack([r, c]), dtype=dtype or _dtype.int64, device=device)


def triu_indices(row, col, offset=0, dtype=None, device=None):
    from .creation import tensor

    r, c = np.triu_indices(row, offset, col)
    return tensor(np.stack([r, c]), dtype=dtype or _dtype.int64, device=device)


# --- contractions and products built from matmul ------------------------------------------


def tensordot(a, b, dims=2, out=None):
    """Contract dims of a with dims of b: an int n takes a's last n and b's first n; a pair
    of lists names them. Computed as one matmul over the permuted, flattened operands."""
    if out is not None:
        return write_out("tensordot", out, tensordot, a, b, dims)
    from ._helpers import normalize_dim
    from .shape import permute, reshape

    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [normalize_dim(d, a.ndim) for d in dims_a]
    dims_b = [normalize_dim(d, b.ndim) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} and second "
                f"has size {b.shape[db]} in dim {db}"
            )
    dtype = _dtype.promote_types(a.dtype, b.dtype)
    a, b = cast(a, dtype), cast(b, dtype)
    free_a = [d for d in range(a.ndim) if d not in dims_a]
    free_b = [d for d in range(b.ndim) if d not in dims_b]
    inner = int(np.prod([a.shape[d] for d in dims_a]))
    left = reshape(permute(a, free_a + dims_a), (-1, inner))
    right = reshape(permute(b, dims_b + free_b), (inner, -1))
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return reshape(matmul(left, right), shape)


def kron(input, other):
    """Kronecker product: every element of input scales a copy of other (trailing dims aligned)."""
    from .elementwise import mul
    from .shape import reshape

    nd = input.ndim if input.ndim > other.ndim else other.ndim
    a_shape = (1,) * (nd - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (nd - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(s for n in a_shape for s in (n, 1)))
    b = reshape(other, tuple(s for n in b_shape for s in (1, n)))
    return reshape(mul(a, b), tuple(x * y for x, y in zip(a_shape, b_shape)))


def trace(input):
    """Sum of the main diagonal of a matrix (integers sum to int64)."""
    from .reduction import sum
    from .shape import diagonal

    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return sum(diagonal(input))


def cdist(x1, x2, p=2.0, compute_mode=None):
    """p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M).

    Computed from the explicit differences (no ||x||² + ||y||² - 2xy shortcut), so it is exact
    and its gradient at zero distance is 0, at the cost of a (..., P, R, M) intermediate.
    """
    from .reduction import vector_norm

    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {x.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(differences, p, dim=-1)


def _group_ends(offs, rows):
    """The end row of each group from `offs` (cumulative, as torch's), checked."""
    ends = [int(e) for e in offs._data.tolist()]
    if any(b < a for a, b in zip([0] + ends, ends)) or (ends and ends[-1] > rows):
        raise RuntimeError(f"_grouped_mm: offs must be non-decreasing and at most {rows}, got {ends}")
    return ends


class GroupedMM(Function):
    """Rows of `a` (M, K) in contiguous groups, group g (rows offs[g-1]:offs[g]) times b[g]
    (K, N): one BLAS product per group on views of b, never a copy of a group's weights.
    Rows past the last offset are zero."""

    @staticmethod
    def forward(ctx, a, b, offs):
        xp = xp_of(a)
        ends = _group_ends(offs, a.shape[0])
        out = xp.zeros((a.shape[0], b.shape[2]), dtype=a._data.dtype)
        start = 0
        for group, end in enumerate(ends):
            if end > start:
                out[start:end] = _matmul_arrays(xp, a._data[start:end], b._data[group])
            start = end
        ctx.save_for_backward(a, b, offs)
        ctx.ends = ends
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, offs = ctx.saved_tensors
        ga = GroupedMM.apply(grad, b.transpose(1, 2), offs) if ctx.needs_input_grad[0] else None
        gb = GroupedWeightGrad.apply(a, grad, offs, b.shape[0]) if ctx.needs_input_grad[1] else None
        return ga, gb, None


class GroupedWeightGrad(Function):
    """(G, K, N): for each group, a[rows]ᵀ @ grad[rows] (the weight gradient of GroupedMM)."""

    @staticmethod
    def forward(ctx, a, grad, offs, groups):
        xp = xp_of(a)
        out = xp.zeros((groups, a.shape[1], grad.shape[1]), dtype=a._data.dtype)
        start = 0
        for group, end in enumerate(_group_ends(offs, a.shape[0])):
            if end > start:
                out[group] = _matmul_arrays(xp, a._data[start:end].T, grad._data[start:end])
            start = end
        ctx.save_for_backward(a, grad, offs)
        return out

    @staticmethod
    def backward(ctx, gout):
        a, grad, offs = ctx.saved_tensors
        ga = GroupedMM.apply(grad, gout.transpose(1, 2), offs) if ctx.needs_input_grad[0] else None
        ggrad = GroupedMM.apply(a, gout, offs) if ctx.needs_input_grad[1] else None
        return ga, ggrad, None, None


def _grouped_mm(mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    """torch._grouped_mm's 2-D x 3-D form: `mat_a` (M, K) holds the rows of all groups one after
    another, `mat_b` (G, K, N) a matrix per group, `offs` (G,) the cumulative end row of each
    group (an int tensor); row i of the result is mat_a[i] @ mat_b[g] for the group g holding it.
    A mixture-of-experts layer sorts its tokens by expert and runs every expert as one product
    through this op: the grouping happens inside the op, so a captured graph replays it for any
    routing."""
    if bias is not None or out_dtype not in (None, mat_a.dtype):
        raise NotImplementedError("_grouped_mm: bias and out_dtype are not supported")
    if mat_a.ndim != 2 or mat_b.ndim != 3 or offs is None:
        raise RuntimeError(f"_grouped_mm supports a 2-D mat_a, a 3-D mat_b and offs; got {mat_a.ndim}-D, "
                           f"{mat_b.ndim}-D and offs={'None' if offs is None else 'given'}")
    if mat_a.shape[1] != mat_b.shape[1]:
        raise RuntimeError(f"_grouped_mm: mat_a's {mat_a.shape[1]} columns do not match mat_b's {mat_b.shape[1]} rows")
    if offs.ndim != 1 or offs.shape[0] != mat_b.shape[0] or offs.dtype.is_floating_point:
        raise RuntimeError(f"_grouped_mm: offs must be a 1-D integer tensor of {mat_b.shape[0]} group ends")
    check_same_device(mat_a, mat_b)
    _common(mat_a, mat_b, "_grouped_mm")
    return GroupedMM.apply(mat_a, mat_b, offs)
