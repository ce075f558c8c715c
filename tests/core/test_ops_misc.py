"""cdist, tensordot, kron, trace, block_diag, meshgrid, cartesian_prod, diff, Tensor.unfold,
Tensor.where: values and gradients against torch (fixtures), gradcheck, errors."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck

from .extra_fixtures import case_names, check_case, check_case_grad, check_error_case, grad_case_names


@pytest.mark.parametrize("name", case_names("misc"))
def test_matches_torch(name):
    check_case(name, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", grad_case_names("misc"))
def test_gradient_matches_torch(name):
    check_case_grad(name)


@pytest.mark.parametrize("name", [
    "tensordot_sizes", "tensordot_negative", "cdist_1d", "cdist_columns", "trace_1d", "block_diag_3d",
    "meshgrid_indexing", "diff_0d", "unfold_size", "unfold_step",
])
def test_error_matches_torch(name):
    check_error_case(name)


def test_meshgrid_rejects_matrices():
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        core.meshgrid(core.ones(2, 2), indexing="ij")


def _rand(*shape, seed=0):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("fn, shapes", [
    (lambda a, b: core.cdist(a, b), [(3, 4), (5, 4)]),
    (lambda a, b: core.cdist(a, b, p=1), [(2, 3, 4), (5, 4)]),
    (lambda a, b: core.cdist(a, b, p=3), [(1, 3, 2), (2, 4, 2)]),
    (lambda a, b: core.tensordot(a, b, 2), [(2, 3, 4), (3, 4, 5)]),
    (lambda a, b: core.tensordot(a, b, dims=([0, 2], [2, 0])), [(2, 3, 4), (4, 5, 2)]),
    (lambda a, b: core.kron(a, b), [(2, 3), (3, 2)]),
    (lambda a, b: core.kron(a, b), [(2, 1, 2), (3,)]),
    (lambda a, b: core.block_diag(a, b), [(2, 3), (2,)]),
    (lambda a, b: core.meshgrid(a, b, indexing="xy")[0] * core.meshgrid(a, b, indexing="xy")[1], [(2,), (3,)]),
    (lambda a, b: core.cartesian_prod(a, b), [(2,), (3,)]),
    (lambda a, b: core.diff(a, dim=1, prepend=b), [(2, 3), (2, 1)]),
    (lambda a, b: a.where(a > 0, b), [(3, 4), (4,)]),
], ids=["cdist", "cdist_p1_broadcast_batch", "cdist_p3_batch", "tensordot", "tensordot_lists", "kron",
        "kron_ndim", "block_diag", "meshgrid_xy", "cartesian_prod", "diff_prepend", "where_broadcast"])
def test_gradcheck_binary(fn, shapes):
    assert gradcheck(fn, tuple(_rand(*s, seed=i) for i, s in enumerate(shapes)))


@pytest.mark.parametrize("fn", [
    lambda x: core.trace(x),
    lambda x: core.diff(x, n=2, dim=0),
    lambda x: x.unfold(1, 2, 1),
    lambda x: x.unfold(0, 2, 2),
    lambda x: core.kron(x, x),
], ids=["trace", "diff_n2", "unfold", "unfold_step", "kron_self"])
def test_gradcheck_unary(fn):
    assert gradcheck(fn, (_rand(4, 3),))


def test_cdist_gradient_at_zero_distance_is_zero():
    x = core.tensor([[1.0, 2.0]], requires_grad=True)
    core.cdist(x, core.tensor([[1.0, 2.0]])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0]])


def test_meshgrid_outputs_are_views_of_inputs():
    a, b = core.tensor([1, 2]), core.tensor([3, 4, 5])
    ga, gb = core.meshgrid(a, b, indexing="ij")
    assert ga.shape == (2, 3) and gb.shape == (2, 3)
    assert np.shares_memory(ga.numpy(), a.numpy())


def test_cartesian_prod_single_input_is_returned():
    a = core.tensor([1, 2, 3])
    assert core.cartesian_prod(a) is a


def test_unfold_ngram_windows():
    ids = core.tensor([[1, 2, 3, 4]])
    assert ids.unfold(1, 2, 1).tolist() == [[[1, 2], [2, 3], [3, 4]]]


def test_unfold_is_a_view_of_its_input():
    x = core.arange(10.0)
    windows = x.unfold(0, 3, 2)
    assert windows.shape == (4, 3)
    windows[1, 0] = -1.0                      # element 2 of x, shared by windows 0 and 1
    assert x[2].item() == -1.0 and windows[0, 2].item() == -1.0
    x[4] = 7.0
    assert windows[1, 2].item() == 7.0 and windows[2, 0].item() == 7.0
