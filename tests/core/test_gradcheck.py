"""Analytical gradients of every differentiable op against finite differences (float64)."""
import zlib

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck

_rng = np.random.default_rng(0)


def _seed(name):
    """Each case draws the same inputs however the tests are selected."""
    _rng.bit_generator.state = np.random.default_rng(zlib.crc32(name.encode())).bit_generator.state


def r(*shape):
    """A float64 leaf requiring grad, values away from kinks."""
    return core.tensor(_rng.uniform(-1.0, 1.0, shape), dtype=core.float64, requires_grad=True)


def pos(*shape):
    return core.tensor(_rng.uniform(0.5, 1.5, shape), dtype=core.float64, requires_grad=True)


def unit(*shape):
    return core.tensor(_rng.uniform(-0.8, 0.8, shape), dtype=core.float64, requires_grad=True)


def distinct(*shape):
    """Values far apart from each other, so max/min/clamp have no ties or near-ties."""
    n = int(np.prod(shape))
    values = _rng.permutation(n).astype(np.float64) * 0.3 - n * 0.15 + _rng.uniform(0.01, 0.29)
    return core.tensor(values.reshape(shape), requires_grad=True)


def idx(*values):
    return core.tensor(list(values))


T = core
CASES = {
    # arithmetic, with broadcasting
    "add": (lambda a, b: a + b, lambda: (r(3, 4), r(4))),
    "add_alpha": (lambda a, b: T.add(a, b, alpha=2.5), lambda: (r(3, 1), r(1, 4))),
    "add_scalar": (lambda a: 3.0 + a, lambda: (r(3),)),
    "sub": (lambda a, b: a - b, lambda: (r(2, 3), r(3))),
    "rsub": (lambda a: 1.0 - a, lambda: (r(3),)),
    "mul": (lambda a, b: a * b, lambda: (r(2, 1, 3), r(4, 1))),
    "div": (lambda a, b: a / b, lambda: (r(3, 4), pos(4))),
    "rdiv": (lambda a: 2.0 / a, lambda: (pos(3),)),
    "neg": (lambda a: -a, lambda: (r(3),)),
    "pow_scalar": (lambda a: a ** 3, lambda: (r(4),)),
    "pow_fractional": (lambda a: a ** 2.5, lambda: (pos(4),)),
    "pow_square": (lambda a: a ** 2, lambda: (r(4),)),
    "pow_tensor_exponent": (lambda a, b: a ** b, lambda: (pos(3, 2), r(2))),
    "rpow": (lambda b: 2.0 ** b, lambda: (r(3),)),
    "remainder": (lambda a: T.remainder(a, 0.7), lambda: (core.tensor([0.2, 0.9, -0.3, 1.6], dtype=core.float64,
                                                                     requires_grad=True),)),
    "maximum": (T.maximum, lambda: (distinct(3, 4), distinct(4))),
    "fmax": (T.fmax, lambda: (distinct(3, 4), distinct(4))),
    "fmin": (T.fmin, lambda: (distinct(3, 4), distinct(4))),
    "minimum": (T.minimum, lambda: (distinct(3, 4), distinct(3, 1))),
    "max_binary": (lambda a, b: T.max(a, b), lambda: (distinct(3), distinct(3))),
    "where": (lambda a, b: T.where(a > 0, a, b), lambda: (r(3, 4), r(4))),
    "where_scalar": (lambda a: T.where(a > 0, a * 2, 0.0), lambda: (r(3, 4),)),
    "clamp": (lambda a: T.clamp(a, -0.5, 0.5), lambda: (distinct(8),)),
    "clamp_min": (lambda a: a.clamp(min=0.1), lambda: (distinct(8),)),
    "clamp_tensor_bounds": (lambda a, lo: T.clamp(a, min=lo),
                            lambda: (distinct(3, 4), core.zeros(4, dtype=core.float64))),
    "lerp": (lambda a, b: T.lerp(a, b, 0.3), lambda: (r(3, 4), r(4))),
    "lerp_tensor_weight": (lambda a, b, w: T.lerp(a, b, w), lambda: (r(3), r(3), r(3))),
    "addcmul": (lambda a, b, c: T.addcmul(a, b, c, value=0.5), lambda: (r(3, 4), r(4), r(3, 1))),
    "addcdiv": (lambda a, b, c: T.addcdiv(a, b, c, value=0.5), lambda: (r(3, 4), r(4), pos(3, 1))),
    "atan2": (T.atan2, lambda: (r(3, 4), pos(4))),
    "hypot": (T.hypot, lambda: (pos(3), pos(3))),
    "logit": (T.logit, lambda: (core.tensor([0.2, 0.5, 0.7], dtype=core.float64, requires_grad=True),)),
    # unary math
    **{name: (getattr(T, name), lambda: (r(3, 4),)) for name in
       ("exp", "exp2", "expm1", "sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "asinh", "sigmoid", "erf",
        "erfc", "square", "abs")},
    **{name: (getattr(T, name), lambda: (pos(3, 4),)) for name in
       ("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "lgamma", "digamma")},
    **{name: (getattr(T, name), lambda: (unit(3, 4),)) for name in ("asin", "acos", "atanh", "erfinv")},
    "floor_zero_grad": (lambda a: T.floor(a * 3) + a, lambda: (r(5),)),
    "round_zero_grad": (lambda a: T.round(a * 3) * a, lambda: (r(5),)),
    "frac": (lambda a: T.frac(a * 3), lambda: (core.tensor([0.1, 0.25, -0.2], dtype=core.float64,
                                                           requires_grad=True),)),
    "clone": (lambda a: a.clone() * 2, lambda: (r(3),)),
    # reductions
    "sum": (lambda a: a.sum(), lambda: (r(3, 4),)),
    "sum_dim": (lambda a: a.sum(1), lambda: (r(2, 3, 4),)),
    "sum_dims_keepdim": (lambda a: a.sum((0, 2), keepdim=True), lambda: (r(2, 3, 4),)),
    "mean": (lambda a: a.mean(), lambda: (r(3, 4),)),
    "mean_dim_keepdim": (lambda a: a.mean(-1, keepdim=True), lambda: (r(2, 3, 4),)),
    "amax": (lambda a: a.amax(1), lambda: (distinct(3, 4),)),
    "amax_keepdim": (lambda a: a.amax((0, 2), keepdim=True), lambda: (distinct(2, 3, 4),)),
    "amax_ties": (lambda a: T.amax(a * 0 + core.tensor([1.0, 3.0, 3.0], dtype=core.float64) + a * 0, 0) * a.sum(),
                  lambda: (r(3),)),
    "amin": (lambda a: a.amin(-1), lambda: (distinct(3, 4),)),
    "max_all": (lambda a: a.max(), lambda: (distinct(3, 4),)),
    "max_dim": (lambda a: a.max(1).values, lambda: (distinct(3, 4),)),
    "min_dim_keepdim": (lambda a: a.min(0, keepdim=True)[0], lambda: (distinct(3, 4),)),
    # shape and movement
    "view": (lambda a: a.view(4, 3) * core.arange(3.0, dtype=core.float64), lambda: (r(3, 4),)),
    "reshape_noncontiguous": (lambda a: a.t().reshape(12), lambda: (r(3, 4),)),
    "permute": (lambda a: a.permute(2, 0, 1), lambda: (r(2, 3, 4),)),
    "transpose": (lambda a: a.transpose(0, 2), lambda: (r(2, 3, 4),)),
    "t": (lambda a: a.t(), lambda: (r(3, 4),)),
    "expand": (lambda a: a.expand(2, 3, 4), lambda: (r(3, 1),)),
    "squeeze_unsqueeze": (lambda a: a.squeeze(1).unsqueeze(0), lambda: (r(3, 1, 2),)),
    "flatten_unflatten": (lambda a: a.flatten(1).unflatten(1, (4, 3)), lambda: (r(2, 3, 4),)),
    "narrow": (lambda a: a.narrow(1, 1, 2), lambda: (r(3, 4),)),
    "cat": (lambda a, b: T.cat([a, b, a], dim=1), lambda: (r(2, 3), r(2, 2))),
    "stack": (lambda a, b: T.stack([a, b], dim=-1), lambda: (r(2, 3), r(2, 3))),
    "split": (lambda a: a.split([1, 3], dim=1)[1] * 2, lambda: (r(3, 4),)),
    "split_all_outputs": (lambda a: a.split(2, dim=1), lambda: (r(3, 5),)),
    "chunk": (lambda a: a.chunk(3, dim=0), lambda: (r(5, 2),)),
    "unbind": (lambda a: a.unbind(1), lambda: (r(3, 2),)),
    "flip": (lambda a: a.flip(0, 2), lambda: (r(2, 3, 4),)),
    "roll": (lambda a: a.roll((1, -2), (0, 2)), lambda: (r(2, 3, 4),)),
    "roll_flat": (lambda a: a.roll(5), lambda: (r(3, 4),)),
    "repeat": (lambda a: a.repeat(2, 1, 3), lambda: (r(3, 2),)),
    "tile": (lambda a: a.tile((2,)), lambda: (r(3, 2),)),
    "movedim": (lambda a: T.movedim(a, 0, 2), lambda: (r(2, 3, 4),)),
    "diagonal": (lambda a: T.diagonal(a, 1, 1, 2), lambda: (r(2, 3, 4),)),
    "diagonal_nonadjacent": (lambda a: T.diagonal(a, 0, 0, 2), lambda: (r(3, 2, 4),)),
    "diag_embed": (lambda a: T.diag_embed(a, 1), lambda: (r(2, 3),)),
    "diag": (lambda a: T.diag(a), lambda: (r(3),)),
    "repeat_interleave": (lambda a: T.repeat_interleave(a, 2, dim=1), lambda: (r(2, 3),)),
    # indexing
    "getitem_basic": (lambda a: a[1:, None, ::2], lambda: (r(3, 4),)),
    "getitem_int": (lambda a: a[-1, 2], lambda: (r(2, 3, 4),)),
    "getitem_repeated_index": (lambda a: a[idx(0, 2, 0, 0)], lambda: (r(3, 2),)),
    "getitem_two_index_tensors": (lambda a: a[idx(0, 2, 0), idx(1, 1, 1)], lambda: (r(3, 2),)),
    "getitem_bool": (lambda a: a[a > 0], lambda: (r(3, 4),)),
    "setitem": (lambda a, v: _setitem(a, v), lambda: (r(4, 3), r(3))),
    "gather": (lambda a: T.gather(a, 1, core.tensor([[0, 0], [3, 1], [2, 2]])), lambda: (r(3, 4),)),
    "scatter": (lambda a, s: T.scatter(a, 1, core.tensor([[0, 2], [3, 1]]), s), lambda: (r(2, 4), r(2, 2))),
    "scatter_add": (lambda a, s: T.scatter_add(a, 1, core.tensor([[0, 0, 2], [3, 1, 3]]), s),
                    lambda: (r(2, 4), r(2, 3))),
    "index_select": (lambda a: T.index_select(a, 0, idx(2, 0, 2)), lambda: (r(3, 2),)),
    "index_add": (lambda a, s: T.index_add(a, 0, idx(1, 0, 1), s, alpha=2), lambda: (r(3, 2), r(3, 2))),
    "index_put_accumulate": (lambda a, v: a.index_put((idx(0, 2, 0),), v, accumulate=True), lambda: (r(3, 2), r(3, 2))),
    "index_copy": (lambda a, s: a.index_copy(0, idx(2, 0), s), lambda: (r(3, 2), r(2, 2))),
    "index_fill": (lambda a: a.index_fill(1, idx(0, 2), -1.0), lambda: (r(2, 3),)),
    "masked_fill": (lambda a: a.masked_fill(core.tensor([True, False, True]), 0.0), lambda: (r(2, 3),)),
    "masked_fill_tensor_value": (lambda a, v: a.masked_fill(core.tensor([True, False]), v),
                                 lambda: (r(3, 2), r())),
    "masked_select": (lambda a: T.masked_select(a, core.tensor([True, False, True])), lambda: (r(2, 3),)),
    "masked_scatter": (lambda a, s: a.masked_scatter(core.tensor([[True, False], [False, True]]), s),
                       lambda: (r(2, 2), r(4))),
    "take_along_dim": (lambda a: T.take_along_dim(a, core.tensor([[1], [0]]), dim=1), lambda: (r(2, 3),)),
    # linalg
    "matmul": (T.matmul, lambda: (r(3, 4), r(4, 2))),
    "matmul_1d_1d": (T.matmul, lambda: (r(4), r(4))),
    "matmul_1d_2d": (T.matmul, lambda: (r(3), r(3, 2))),
    "matmul_batch_1d": (T.matmul, lambda: (r(2, 3, 4), r(4))),
    "matmul_broadcast_batch": (T.matmul, lambda: (r(2, 1, 3, 4), r(3, 4, 2))),
    "bmm": (T.bmm, lambda: (r(2, 3, 4), r(2, 4, 2))),
    "mm": (T.mm, lambda: (r(3, 4), r(4, 2))),
    "mv": (T.mv, lambda: (r(3, 4), r(4))),
    "dot": (T.dot, lambda: (r(4), r(4))),
    "outer": (T.outer, lambda: (r(3), r(2))),
    "baddbmm": (lambda i, a, b: T.baddbmm(i, a, b, beta=0.5, alpha=2.0), lambda: (r(3, 2), r(2, 3, 4), r(2, 4, 2))),
    "addmm": (lambda i, a, b: T.addmm(i, a, b, beta=2.0, alpha=0.5), lambda: (r(2), r(3, 4), r(4, 2))),
    "addmm_row_bias": (T.addmm, lambda: (r(2), r(3, 4), r(4, 2))),
    "einsum_matmul": (lambda a, b: T.einsum("ij,jk->ik", a, b), lambda: (r(3, 4), r(4, 2))),
    "einsum_implicit": (lambda a, b: T.einsum("ij,jk", a, b), lambda: (r(3, 4), r(4, 2))),
    "einsum_ellipsis": (lambda a, b: T.einsum("...ij,...jk->...ik", a, b), lambda: (r(2, 3, 4), r(2, 4, 2))),
    "einsum_ellipsis_broadcast": (lambda a, b: T.einsum("...j,jk->...k", a, b), lambda: (r(2, 3, 4), r(4, 2))),
    "einsum_summed_letter": (lambda a, b: T.einsum("ij,k->i", a, b), lambda: (r(3, 4), r(2))),
    "einsum_trace": (lambda a: T.einsum("ii", a), lambda: (r(3, 3),)),
    "einsum_diagonal": (lambda a, b: T.einsum("iij,j->ij", a, b), lambda: (r(3, 3, 2), r(2))),
    "einsum_three": (lambda a, b, c: T.einsum("ij,jk,kl->il", a, b, c), lambda: (r(2, 3), r(3, 4), r(4, 2))),
    "grouped_mm": (lambda a, b: T._grouped_mm(a, b, core.tensor([2, 2, 5])), lambda: (r(6, 3), r(3, 3, 2))),
    "tril": (lambda a: T.tril(a, -1), lambda: (r(2, 3, 3),)),
    "triu": (lambda a: T.triu(a, 1), lambda: (r(3, 4),)),
}


def _setitem(a, v):
    out = a * 1
    out[1] = v
    out[idx(0, 3), 2] = v[0] * 2
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, make_inputs = CASES[name]
    _seed(name)
    assert gradcheck(fn, make_inputs())


GRADGRAD = {
    "mul": (lambda a, b: a * b, lambda: (r(3, 2), r(2))),
    "div": (lambda a, b: a / b, lambda: (r(3), pos(3))),
    "pow": (lambda a: a ** 3, lambda: (r(3),)),
    "pow_tensor_exponent": (lambda a, b: a ** b, lambda: (pos(3), r(3))),
    "exp": (T.exp, lambda: (r(3),)),
    "log": (T.log, lambda: (pos(3),)),
    "tanh": (T.tanh, lambda: (r(3),)),
    "sigmoid": (T.sigmoid, lambda: (r(3),)),
    "sqrt": (T.sqrt, lambda: (pos(3),)),
    "matmul": (T.matmul, lambda: (r(2, 3), r(3, 2))),
    "sum": (lambda a: (a * a).sum(0), lambda: (r(3, 2),)),
    "mean": (lambda a: (a * a).mean(), lambda: (r(3, 2),)),
    "softmax": (lambda a: _softmax(a), lambda: (distinct(2, 3),)),
    "log_softmax": (lambda a: a - T.log(T.exp(a).sum(-1, keepdim=True)), lambda: (r(2, 3),)),
    "getitem": (lambda a: a[idx(0, 0, 1)] ** 2, lambda: (r(2, 2),)),
    "einsum": (lambda a, b: T.einsum("ij,jk->ik", a, b) ** 2, lambda: (r(2, 3), r(3, 2))),
    "grouped_mm": (lambda a, b: T._grouped_mm(a, b, core.tensor([1, 4])) ** 2, lambda: (r(4, 3), r(2, 3, 2))),
}


def _softmax(a):
    shifted = T.exp(a - a.amax(-1, keepdim=True))
    return shifted / shifted.sum(-1, keepdim=True)


@pytest.mark.parametrize("name", sorted(GRADGRAD))
def test_gradgradcheck(name):
    fn, make_inputs = GRADGRAD[name]
    _seed(name)
    assert gradgradcheck(fn, make_inputs())


def test_gradcheck_detects_a_wrong_backward():
    class WrongSquare(core.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2 * x

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(WrongSquare.apply, (r(3),))
    assert gradcheck(WrongSquare.apply, (r(3),), raise_exception=False) is False
