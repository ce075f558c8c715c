"""core.linalg: norms, solve, inv, det (values and gradients against torch, gradcheck) and
the forward-only decompositions (checked by reconstruction)."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import linalg
from mindnlp.core.autograd import gradcheck, gradgradcheck

from .extra_fixtures import case_names, check_case, check_case_grad, check_error_case, grad_case_names


@pytest.mark.parametrize("name", case_names("linalg_extra"))
def test_matches_torch(name):
    check_case(name, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", grad_case_names("linalg_extra"))
def test_gradient_matches_torch(name):
    check_case_grad(name)


@pytest.mark.parametrize("name", [
    "vector_norm_int", "matrix_norm_dim", "linalg_norm_3d_ord", "inv_int", "inv_not_square", "inv_1d",
    "solve_shapes",
])
def test_error_matches_torch(name):
    check_error_case(name)


def _rand(*shape, seed=0):
    return core.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def _well_conditioned(*shape, seed=0):
    n = shape[-1]
    data = np.random.default_rng(seed).standard_normal(shape) + 2 * n * np.eye(n)
    return core.tensor(data, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda x: linalg.vector_norm(x),
    lambda x: linalg.vector_norm(x, 3, dim=(0, 2), keepdim=True),
    lambda x: linalg.vector_norm(x, 1, dim=1),
    lambda x: linalg.matrix_norm(x),
    lambda x: linalg.matrix_norm(x, 1),
    lambda x: linalg.matrix_norm(x, float("inf"), dim=(0, 2), keepdim=True),
    lambda x: linalg.norm(x),
    lambda x: linalg.norm(x, "fro", dim=(0, 1)),
    lambda x: linalg.norm(x, 4, dim=1),
], ids=["vector", "vector_p3_keepdim", "vector_p1", "fro", "matrix_1", "matrix_inf", "norm", "norm_fro",
        "norm_p4"])
def test_gradcheck_norms(fn):
    assert gradcheck(fn, (_rand(2, 3, 4),))


def test_gradcheck_norm_of_broadcast_product():
    x, y = _rand(3, 4, seed=1), _rand(4, seed=2)
    assert gradcheck(lambda a, b: linalg.vector_norm(a * b, dim=1), (x, y))
    assert gradcheck(lambda a, b: linalg.matrix_norm(a + b), (x, y))


def test_gradcheck_inv_det_solve():
    A = _well_conditioned(3, 3)
    B = _rand(3, 2, seed=1)
    assert gradcheck(linalg.inv, (A,))
    assert gradcheck(linalg.det, (A,))
    assert gradcheck(linalg.solve, (A, B))
    assert gradcheck(lambda a, b: linalg.solve(a, b, left=False), (A, _rand(2, 3, seed=2)))


def test_gradcheck_batched_and_broadcast_solve():
    A = _well_conditioned(2, 3, 3)
    assert gradcheck(linalg.det, (A,))
    assert gradcheck(linalg.inv, (A,))
    assert gradcheck(linalg.solve, (_well_conditioned(3, 3, seed=3), _rand(2, 3, 2, seed=4)))
    assert gradcheck(linalg.solve, (A, _rand(2, 3, seed=5)))


def test_gradgradcheck_inv_det_solve():
    A = _well_conditioned(2, 2)
    assert gradgradcheck(linalg.inv, (A,))
    assert gradgradcheck(linalg.det, (A,))
    assert gradgradcheck(linalg.solve, (A, _rand(2, 1, seed=1)))


def test_solve_solves():
    A = core.tensor([[3.0, 1.0], [1.0, 2.0]])
    b = core.tensor([9.0, 8.0])
    np.testing.assert_allclose(linalg.solve(A, b).numpy(), [2.0, 3.0], rtol=1e-6)


def test_singular_inverse_raises():
    with pytest.raises(RuntimeError, match="singular"):
        linalg.inv(core.zeros(2, 2))


def test_decompositions_reconstruct():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 4, 3))
    A = core.tensor(data)
    Q, R = linalg.qr(A)
    np.testing.assert_allclose((Q @ R).numpy(), data, atol=1e-12)
    U, S, Vh = linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose((U * S.unsqueeze(-2) @ Vh).numpy(), data, atol=1e-12)
    np.testing.assert_allclose(linalg.svdvals(A).numpy(), S.numpy())
    spd = data[0].T @ data[0] + np.eye(3)
    L = linalg.cholesky(core.tensor(spd))
    np.testing.assert_allclose((L @ L.mT).numpy(), spd, atol=1e-12)
    values, vectors = linalg.eigh(core.tensor(spd))
    np.testing.assert_allclose((vectors @ core.diag(values) @ vectors.mT).numpy(), spd, atol=1e-12)
    assert linalg.qr(A).Q.shape == (2, 4, 3) and linalg.eigh(core.tensor(spd)).eigenvalues.shape == (3,)


def test_decomposition_backward_is_not_implemented():
    A = _well_conditioned(3, 3)
    with pytest.raises(NotImplementedError, match="linalg.qr"):
        linalg.qr(A).R.sum().backward()
    with pytest.raises(NotImplementedError, match="linalg.svdvals"):
        linalg.matrix_norm(A, "nuc").backward()


def test_half_inputs_compute_in_float32():
    A = core.tensor([[2.0, 0.0], [0.0, 4.0]]).half()
    out = linalg.inv(A)
    assert out.dtype is core.float16
    np.testing.assert_allclose(out.float().numpy(), [[0.5, 0.0], [0.0, 0.25]])
