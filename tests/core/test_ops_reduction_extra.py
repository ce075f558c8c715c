"""var/std, logsumexp, prod, cumulative ops, norms, median/mode, nan-reductions, quantile:
values and gradients against torch (fixtures), gradcheck, errors."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck

from .extra_fixtures import case_names, check_case, check_case_grad, check_error_case, grad_case_names


@pytest.mark.parametrize("name", case_names("reduction_extra"))
def test_matches_torch(name):
    check_case(name)


@pytest.mark.parametrize("name", grad_case_names("reduction_extra"))
def test_gradient_matches_torch(name):
    check_case_grad(name)


@pytest.mark.parametrize("name", [
    "var_int", "norm_int", "norm_fro_three_dims", "cumsum_dim", "median_empty_dim", "quantile_range",
    "quantile_int", "quantile_method", "is_nonzero_many", "is_nonzero_empty",
])
def test_error_matches_torch(name):
    check_error_case(name)


def _rand(*shape, seed=0, low=None):
    rng = np.random.default_rng(seed)
    data = rng.uniform(low, 2.0, shape) if low is not None else rng.standard_normal(shape)
    return core.tensor(data, dtype=core.float64, requires_grad=True)


def _distinct(*shape, seed=0):
    """float64 values with gaps far wider than gradcheck's perturbation (no ties to flip)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    data = rng.permutation(n).astype(np.float64).reshape(shape) * 0.1 - 0.05 * n + 0.013
    return core.tensor(data, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda x: core.var(x),
    lambda x: core.var(x, 1),
    lambda x: x.var((0, 2), keepdim=True, correction=0),
    lambda x: core.std(x),
    lambda x: x.std(-1, keepdim=True),
    lambda x: core.std(x, (0, 1), correction=2),
    lambda x: core.var_mean(x, 1)[0] + core.var_mean(x, 1)[1],
    lambda x: core.std_mean(x, 2, keepdim=True)[0] * core.std_mean(x, 2, keepdim=True)[1],
    lambda x: core.logsumexp(x, 1),
    lambda x: x.logsumexp((0, 2), keepdim=True),
    lambda x: core.cumsum(x, 1),
    lambda x: x.cumsum(-1),
    lambda x: core.nansum(x, 1),
    lambda x: core.nanmean(x, (0, 2), keepdim=True),
    lambda x: core.norm(x),
    lambda x: core.norm(x, dim=1),
    lambda x: core.norm(x, p=3, dim=(0, 2), keepdim=True),
    lambda x: core.norm(x, p=1, dim=-1),
    lambda x: core.quantile(x, 0.3, dim=1),
    lambda x: core.quantile(x, core.tensor([0.2, 0.9], dtype=core.float64), dim=-1, keepdim=True),
], ids=["var", "var_dim", "var_keepdim_c0", "std", "std_keepdim", "std_c2", "var_mean", "std_mean",
        "logsumexp", "logsumexp_keepdim", "cumsum", "cumsum_neg", "nansum", "nanmean", "norm", "norm_dim",
        "norm_p3", "norm_p1", "quantile", "quantile_vector_q"])
def test_gradcheck_smooth(fn):
    assert gradcheck(fn, (_rand(2, 3, 4),))


@pytest.mark.parametrize("fn", [
    lambda x, y: core.var(x * y, 1),
    lambda x, y: core.std(x + y, 0, keepdim=True),
    lambda x, y: core.logsumexp(x - y, -1),
    lambda x, y: core.prod(x * y, 1),
    lambda x, y: core.cumprod(x * y, 1),
    lambda x, y: core.norm(x * y, dim=0),
    lambda x, y: core.cumsum(x * y, 0),
], ids=["var", "std", "logsumexp", "prod", "cumprod", "norm", "cumsum"])
def test_gradcheck_broadcast_operands(fn):
    assert gradcheck(fn, (_rand(3, 4, seed=1, low=0.5), _rand(4, seed=2, low=0.5)))


def test_gradcheck_prod_and_cumprod():
    x = _rand(3, 4, low=0.5)
    assert gradcheck(lambda t: core.prod(t), (x,))
    assert gradcheck(lambda t: t.prod(1, keepdim=True), (x,))
    assert gradcheck(lambda t: core.cumprod(t, 0), (x,))


def test_gradcheck_prod_and_cumprod_with_zeros():
    data = np.array([[0.5, 0.0, 1.5, 2.0], [0.0, 0.0, 1.2, 0.7], [1.1, 0.9, 1.3, 0.0]])
    x = core.tensor(data, requires_grad=True)
    assert gradcheck(lambda t: core.prod(t, 1), (x,))
    assert gradcheck(lambda t: core.prod(t), (x,))
    assert gradcheck(lambda t: core.cumprod(t, 1), (x,))
    assert gradcheck(lambda t: core.cumprod(t, 0), (x,))


def test_gradgradcheck_through_backward_formulas():
    """The backward formulas are core ops, so they can be differentiated again."""
    x = _rand(2, 3, low=0.5)
    assert gradgradcheck(lambda t: core.var(t, 1), (x,))
    assert gradgradcheck(lambda t: core.logsumexp(t, 0), (x,))
    assert gradgradcheck(lambda t: core.prod(t, 1), (x,))
    assert gradgradcheck(lambda t: core.cumprod(t, 1), (x,))
    assert gradgradcheck(lambda t: core.norm(t, dim=1), (x,))


@pytest.mark.parametrize("fn", [
    lambda x: core.cummax(x, 1).values,
    lambda x: core.cummin(x, 0).values,
    lambda x: core.norm(x, float("inf"), 1),
    lambda x: core.norm(x, float("-inf")),
    lambda x: core.norm(x, 0.5, dim=0),
    lambda x: core.median(x),
    lambda x: core.median(x, 1).values,
    lambda x: x.median(0, keepdim=True).values,
    lambda x: core.nanmedian(x, 1).values,
    lambda x: core.mode(x, 1).values,
    lambda x: core.quantile(x, 0.5, interpolation="lower"),
    lambda x: core.quantile(x, 0.5, dim=0, interpolation="midpoint"),
    lambda x: core.aminmax(x, dim=1).max,
], ids=["cummax", "cummin", "norm_inf", "norm_neg_inf", "norm_p_half", "median", "median_dim",
        "median_keepdim", "nanmedian", "mode", "quantile_lower", "quantile_midpoint", "aminmax"])
def test_gradcheck_selections(fn):
    assert gradcheck(fn, (_distinct(3, 5),))


def test_logsumexp_is_stable_and_handles_infinities():
    x = core.tensor([[1000.0, 1000.0], [-1000.0, -1000.0]])
    np.testing.assert_allclose(core.logsumexp(x, 1).numpy(), [1000 + math.log(2), -1000 + math.log(2)])
    assert core.logsumexp(core.full((3,), float("-inf")), 0).item() == float("-inf")


def test_prod_gradient_with_one_zero_is_product_of_others():
    x = core.tensor([2.0, 0.0, 3.0], requires_grad=True)
    core.prod(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 6.0, 0.0])


def test_vector_norm_gradient_at_zero_is_zero():
    x = core.zeros(3, requires_grad=True)
    core.norm(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3))


def test_cumsum_inplace_and_dtype():
    x = core.tensor([1.0, 2.0, 3.0])
    x.cumsum_(0)
    np.testing.assert_array_equal(x.numpy(), [1.0, 3.0, 6.0])
    assert core.cumsum(core.tensor([True, True]), 0).dtype is core.int64


def test_zero_dim_inputs():
    s = core.tensor(3.0)
    assert core.cumsum(s, 0).item() == 3.0 and core.cumsum(s, 0).shape == ()
    assert core.prod(s, -1).item() == 3.0
    assert core.logsumexp(s, 0).item() == pytest.approx(3.0)
    assert math.isnan(core.var(s).item())


def test_is_nonzero():
    assert core.is_nonzero(core.tensor([1.5])) is True
    assert core.tensor(0).is_nonzero() is False


def test_aminmax_fields():
    result = core.aminmax(core.tensor([[1, 5], [7, 0]]), dim=0)
    assert result.min.tolist() == [1, 0] and result.max.tolist() == [7, 5]
