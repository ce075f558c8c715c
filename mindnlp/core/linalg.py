# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`core.linalg`: norms, solves, inverses and decompositions (torch.linalg's names and semantics).

Norms are differentiable through the core's reductions. `solve`, `inv` and `det` have
gradients written with core ops (so they can be differentiated again); the decompositions
(`cholesky`, `qr`, `svd`, `svdvals`, `eigh`) are forward-only and raise NotImplementedError
from backward. The array module's `linalg` does the work; batches of matrices (leading dims)
are supported wherever it supports them. float16/bfloat16 are computed in float32.
"""
import numpy as np

from . import _dtype
from ._tensor import _wrap
from .autograd.function import Function
from .ops._helpers import HALF_NP, check_same_device, normalize_dim, xp_of
from .ops.linalg import matmul
from .ops.reduction import _type_name, amax, amin, sum, vector_norm

__all__ = ["vector_norm", "matrix_norm", "norm", "solve", "inv", "det", "cholesky", "qr", "svd", "svdvals", "eigh"]


def _compute(array):
    return array.astype(np.float32) if array.dtype in HALF_NP else array


def _check_matrix(A, name, square=True):
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A.dtype)}")
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _mT(t):
    return t.transpose(-2, -1)


def _result(array, like):
    return array.astype(like._data.dtype, copy=False)


class _Inv(Function):
    @staticmethod
    def forward(ctx, A):
        xp = xp_of(A)
        out = _wrap(_result(xp.linalg.inv(_compute(A._data)), A))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (A_inv,) = ctx.saved_tensors
        # d(A^-1) = -A^-1 dA A^-1  ⇒  grad_A = -A^-T grad A^-T
        return -matmul(matmul(_mT(A_inv), grad), _mT(A_inv))


def inv(A):
    """Inverse of square matrices; a singular matrix raises as torch does."""
    _check_matrix(A, "inv")
    try:
        return _Inv.apply(A)
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
                           "because the input matrix is singular.") from None


class _Det(Function):
    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return _result(xp_of(A).linalg.det(_compute(A._data)), A)

    @staticmethod
    def backward(ctx, grad):
        (A,) = ctx.saved_tensors
        # d det(A) = det(A) tr(A^-1 dA)  ⇒  grad_A = grad det(A) A^-T (A must be invertible).
        scale = (grad * det(A)).unsqueeze(-1).unsqueeze(-1)
        return scale * _mT(inv(A))


def det(A):
    """Determinant of square matrices. Its gradient needs an invertible A (torch also handles
    singular matrices there; this implementation raises instead)."""
    _check_matrix(A, "det")
    return _Det.apply(A)


class _Solve(Function):
    @staticmethod
    def forward(ctx, A, B):
        xp = xp_of(A)
        out = _wrap(_result(xp.linalg.solve(_compute(A._data), _compute(B._data)), A))
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        # A X = B  ⇒  grad_B = A^-T grad, grad_A = -grad_B X^T
        grad_B = _Solve.apply(_mT(A), grad)
        grad_A = -matmul(grad_B, _mT(X)) if ctx.needs_input_grad[0] else None
        return grad_A, grad_B


def solve(A, B, *, left=True):
    """X with A X = B (left=True) or X A = B. B is a vector (…, n) when it has one dim less than A
    and matches A's leading shape, else matrices (…, n, k); batch dims broadcast."""
    _check_matrix(A, "solve")
    check_same_device(A, B)
    dtype = _dtype.promote_types(A.dtype, B.dtype)
    A, B = A.to(dtype), B.to(dtype)
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {Bm.shape[-2]}x{Bm.shape[-1]})")
    batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(Bm.shape[:-2])))
    A = A.expand(batch + tuple(A.shape[-2:]))
    Bm = Bm.expand(batch + tuple(Bm.shape[-2:]))
    try:
        X = _Solve.apply(A, Bm)
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.solve: The solver failed because the input matrix is singular.") from None
    return X.squeeze(-1) if vector else X


class _ForwardOnly(Function):
    """Decompositions without a gradient here: backward says so instead of returning zeros."""

    @staticmethod
    def forward(ctx, A, name, compute):
        ctx.op_name = name
        return compute(xp_of(A), _compute(A._data))

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(f"the derivative of linalg.{ctx.op_name} is not implemented in mindnlp.core")


class _Pair(tuple):
    """A tuple whose items are also readable by name (torch's named return tuples)."""

    _names = ()

    def __getattr__(self, name):
        if name in self._names:
            return self[self._names.index(name)]
        raise AttributeError(name)


class QRResult(_Pair):
    _names = ("Q", "R")


class SVDResult(_Pair):
    _names = ("U", "S", "Vh")


class EighResult(_Pair):
    _names = ("eigenvalues", "eigenvectors")


def _forward_only(A, name, compute):
    return _ForwardOnly.apply(A, name, lambda xp, a: tuple(_result(r, A) for r in compute(xp, a)))


def cholesky(A, *, upper=False):
    """Cholesky factor L (A = L L^T), or U = L^T when upper. Forward only."""
    _check_matrix(A, "cholesky")
    try:
        (L,) = _forward_only(A, "cholesky", lambda xp, a: (xp.linalg.cholesky(a),))
    except np.linalg.LinAlgError:
        raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is not "
                           "positive-definite.") from None
    return _mT(L) if upper else L


def qr(A, mode="reduced"):
    """A = Q R with orthonormal Q and upper-triangular R (mode 'reduced' or 'complete'). Forward only."""
    _check_matrix(A, "qr", square=False)
    if mode not in ("reduced", "complete"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' or 'complete'")
    return QRResult(_forward_only(A, "qr", lambda xp, a: xp.linalg.qr(a, mode=mode)))


def svd(A, full_matrices=True):
    """A = U diag(S) Vh, singular values descending. Forward only."""
    _check_matrix(A, "svd", square=False)
    return SVDResult(_forward_only(A, "svd", lambda xp, a: xp.linalg.svd(a, full_matrices=full_matrices)))


def svdvals(A):
    _check_matrix(A, "svdvals", square=False)
    (S,) = _forward_only(A, "svdvals", lambda xp, a: (xp.linalg.svd(a, compute_uv=False),))
    return S


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices. Forward only."""
    _check_matrix(A, "eigh")
    return EighResult(_forward_only(A, "eigh", lambda xp, a: xp.linalg.eigh(a, UPLO=UPLO)))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """'fro' (differentiable), 1/-1 (max/min column abs sum), inf/-inf (row sums) are differentiable;
    'nuc' and 2/-2 go through the singular values and are forward only."""
    if dtype is not None:
        A = A.to(dtype)
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(A.dtype)}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    row, col = (normalize_dim(d, A.ndim) for d in dim)
    if row == col:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return vector_norm(A, 2, (row, col), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((row, col), (-2, -1))
        values = svdvals(moved)
        out = values.sum(-1) if ord == "nuc" else (amax if ord == 2 else amin)(values, -1)
        if keepdim:
            for d in sorted((row, col)):
                out = out.unsqueeze(d)
        return out
    if ord in (1, -1, float("inf"), float("-inf")):
        # 1: max over columns of the column sums of |A|; inf: max over rows of the row sums.
        summed, reduced = (row, col) if ord in (1, -1) else (col, row)
        sums = sum(A.abs(), summed, keepdim=True)
        out = (amax if ord > 0 else amin)(sums, reduced, keepdim=True)
        return out if keepdim else out.squeeze((row, col))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """Vector norm for 1-D input or an int dim, matrix norm for 2-D input or a 2-tuple dim;
    with ord=None, the 2-norm of the flattened input (dim=None) or over dim."""
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if isinstance(ord, str) or len(dim) == 2:
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)
