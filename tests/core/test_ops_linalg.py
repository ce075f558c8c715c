"""matmul/bmm/baddbmm/einsum/outer/tril/triu against torch's values (fixtures); _grouped_mm against
its definition, one product per group."""
import numpy as np
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.parametrize("name", op_case_names("linalg"))
def test_matches_torch(name):
    check_op_case(name, rtol=1e-5, atol=1e-5)


def test_matmul_shapes():
    assert core.matmul(core.ones(4), core.ones(4)).shape == ()
    assert core.matmul(core.ones(4), core.ones(2, 4, 5)).shape == (2, 5)
    assert core.matmul(core.ones(3, 1, 2, 4), core.ones(5, 4, 6)).shape == (3, 5, 2, 6)


def test_half_matmul_stays_half():
    a = core.ones(2, 3, dtype=core.float16)
    out = a @ core.ones(3, 2, dtype=core.float16)
    assert out.dtype is core.float16 and out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_einsum_rejects_mismatched_ranks():
    with pytest.raises(Exception):
        core.einsum("ij,jk->ik", core.ones(2, 3), core.ones(4, 5))


def test_tril_needs_two_dims():
    with pytest.raises(RuntimeError, match="tril"):
        core.tril(core.ones(3))


def test_grouped_mm_runs_each_group_through_its_matrix():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((9, 4)).astype(np.float32), rng.standard_normal((4, 4, 3)).astype(np.float32)
    ends = [3, 3, 8, 8]  # an empty group, a group of five, and a row past the last group
    out = core._grouped_mm(core.tensor(a), core.tensor(b), core.tensor(ends)).numpy()
    np.testing.assert_allclose(out[:3], a[:3] @ b[0], rtol=1e-6)
    np.testing.assert_allclose(out[3:8], a[3:8] @ b[2], rtol=1e-6)
    assert (out[8] == 0).all() and out.dtype == np.float32


def test_grouped_mm_refuses_bad_groups():
    a, b = core.ones(4, 2), core.ones(2, 2, 3)
    with pytest.raises(RuntimeError, match="non-decreasing and at most 4"):
        core._grouped_mm(a, b, core.tensor([3, 2]))
    with pytest.raises(RuntimeError, match="non-decreasing and at most 4"):
        core._grouped_mm(a, b, core.tensor([2, 5]))
    with pytest.raises(RuntimeError, match="1-D integer tensor of 2 group ends"):
        core._grouped_mm(a, b, core.tensor([4]))
    with pytest.raises(RuntimeError, match="columns do not match"):
        core._grouped_mm(core.ones(4, 3), b, core.tensor([2, 4]))


@pytest.mark.parametrize("dtype", [core.float32, core.float64, core.bfloat16])
@pytest.mark.parametrize("rows", [1, 3, 300])
def test_addmm_of_a_row_bias_is_one_product_equal_to_mm_plus_bias(dtype, rows):
    """addmm(bias, a, b) with a vector bias (a linear layer) is one op whose product adds the
    bias; its values and gradients are those of mm(a, b) + bias (for bfloat16, of the float32
    product and bias rounded once, as torch's addmm)."""
    rng = np.random.default_rng(rows)
    a, b, bias = (core.tensor(rng.standard_normal(s).astype(np.float32)).to(dtype).requires_grad_()
                  for s in ((rows, 96), (96, 80), (80,)))
    fused = core.addmm(bias, a, b)
    assert fused.grad_fn.name() == "BiasedMatMulBackward0"
    plain = core.mm(a, b) + bias
    if dtype == core.bfloat16:      # the bias joins the float32 product: one rounding, not two
        want = (core.mm(a.float(), b.float()) + bias.float()).detach().numpy()
        np.testing.assert_allclose(fused.float().detach().numpy(), want, rtol=2.0 ** -8, atol=1e-6)
    else:
        np.testing.assert_array_equal(fused.detach().numpy(), plain.detach().numpy())
    grad = core.tensor(rng.standard_normal((rows, 80)).astype(np.float32)).to(dtype)
    fused_grads = core.autograd.grad(fused, (a, b, bias), grad)
    plain_grads = core.autograd.grad(plain, (a, b, bias), grad)
    for got, want in zip(fused_grads, plain_grads):
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-5, atol=1e-5)


def test_addmm_other_biases_keep_the_scaled_sum():
    a, b = core.ones(2, 3), core.ones(3, 4)
    for bias, kwargs in ((core.ones(2, 4), {}), (core.ones(1, 4), {}), (core.ones(4), {"beta": 0.5})):
        out = core.addmm(bias, a, b, **kwargs)
        assert out.grad_fn is None and out.shape == (2, 4)
        np.testing.assert_array_equal(out.numpy(), np.full((2, 4), 3.0 + kwargs.get("beta", 1.0), np.float32))
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        core.addmm(core.ones(4), core.ones(2, 5), core.ones(3, 4))
