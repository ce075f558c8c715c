"""Elementwise ops against torch's values (fixtures), and the in-place variants."""
import numpy as np
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log/division of negatives and zeros, as in the fixtures
@pytest.mark.parametrize("name", op_case_names("elementwise"))
def test_matches_torch(name):
    check_op_case(name)


def test_broadcast_error_names_sizes_and_dim():
    message = r"size of tensor a \(3\) must match the size of tensor b \(2\) at non-singleton dimension 1"
    with pytest.raises(RuntimeError, match=message):
        core.ones(2, 3) - core.ones(3, 2)


def test_int_true_division_gives_default_float():
    out = core.tensor([3, 4]) / 2
    assert out.dtype is core.float32
    np.testing.assert_array_equal(out.numpy(), [1.5, 2.0])


def test_scalar_does_not_widen_half():
    assert (core.ones(2, dtype=core.float16) * 2.5).dtype is core.float16
    assert (core.ones(2, dtype=core.bfloat16) + 1).dtype is core.bfloat16


# --- in-place -----------------------------------------------------------------------------


def test_inplace_arithmetic_writes_same_memory():
    x = core.tensor([1.0, 2.0, 3.0])
    ptr = x.data_ptr()
    assert x.add_(1) is x
    x.mul_(2).sub_(1).div_(2)
    assert x.data_ptr() == ptr
    np.testing.assert_allclose(x.numpy(), [1.5, 2.5, 3.5])
    x += 1
    x *= core.tensor([1.0, 0.0, 2.0])
    np.testing.assert_allclose(x.numpy(), [2.5, 0.0, 9.0])


def test_inplace_add_alpha_and_broadcast_source():
    x = core.zeros(2, 3)
    x.add_(core.tensor([1.0, 2.0, 3.0]), alpha=2)
    np.testing.assert_allclose(x.numpy(), [[2, 4, 6], [2, 4, 6]])


def test_inplace_visible_through_views():
    x = core.zeros(2, 3)
    row = x[1]
    row.fill_(5.0)
    x.t()[0].add_(1)
    np.testing.assert_allclose(x.numpy(), [[1, 0, 0], [6, 5, 5]])


def test_copy_fill_zero():
    x = core.zeros(2, 3)
    x.copy_(core.tensor([1, 2, 3]))  # broadcast and cast int → float
    np.testing.assert_allclose(x.numpy(), [[1, 2, 3], [1, 2, 3]])
    assert x.dtype is core.float32
    x.fill_(core.tensor(7.0))
    np.testing.assert_allclose(x.numpy(), np.full((2, 3), 7.0))
    x.zero_()
    np.testing.assert_allclose(x.numpy(), np.zeros((2, 3)))


def test_masked_fill_clamp_inplace():
    x = core.tensor([-2.0, -0.5, 0.5, 2.0])
    x.masked_fill_(x > 1, 9.0)
    np.testing.assert_allclose(x.numpy(), [-2.0, -0.5, 0.5, 9.0])
    x.clamp_(-1, 1)
    np.testing.assert_allclose(x.numpy(), [-1.0, -0.5, 0.5, 1.0])
    x.clamp_min_(0.0).exp_()
    np.testing.assert_allclose(x.numpy(), np.exp([0.0, 0.0, 0.5, 1.0]), rtol=1e-6)


def test_inplace_bumps_version():
    x = core.zeros(3)
    v = x._version[0]
    x.add_(1)
    x[0] = 2.0
    x.zero_()
    assert x._version[0] == v + 3
    assert x[1:]._version is x._version  # views share the counter


def test_inplace_result_dtype_must_cast():
    x = core.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.add_(0.5)
    x.add_(True)  # bool → int is allowed
    np.testing.assert_array_equal(x.numpy(), [2, 3])


def test_inplace_shape_cannot_grow():
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        core.ones(3).mul_(core.ones(2, 3))


def test_leaf_requiring_grad_refuses_inplace_but_not_under_no_grad():
    w = core.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w.add_(1)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.zero_()
    with core.no_grad():
        w.mul_(2)
        w.fill_(3.0)
    np.testing.assert_allclose(w.detach().numpy(), [3, 3, 3])
    assert w.is_leaf and w.requires_grad


def test_inplace_on_non_leaf_is_recorded():
    x = core.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.mul_(x)  # y = 3x * x
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_inplace_into_constant_from_tensor_requiring_grad():
    x = core.tensor([1.0, 2.0], requires_grad=True)
    buf = core.zeros(2)
    buf.add_(x * x)
    assert buf.requires_grad and buf.grad_fn is not None
    buf.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_domain_and_overflow_errors_give_inf_or_nan_without_warnings():
    """As in torch: log(0) = -inf, 0/0 = NaN, sqrt(-1) = NaN, exp(1000) = inf, silently."""
    import warnings

    x = core.tensor([0.0, -1.0, 1000.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = {
            "log": core.log(x), "sqrt": core.sqrt(x), "exp": core.exp(x), "div": x / core.zeros(4),
            "pow": x ** 0.5, "reciprocal": core.reciprocal(x), "rsqrt": core.rsqrt(x),
        }
        sum(v.sum() for v in values.values()).backward()
    expected = {
        "log": [-np.inf, np.nan, np.log(1000.0), np.log(4.0)], "sqrt": [0.0, np.nan, np.sqrt(1000.0), 2.0],
        "exp": [1.0, np.exp(-1.0), np.inf, np.exp(4.0)], "div": [np.nan, -np.inf, np.inf, np.inf],
        "pow": [0.0, np.nan, np.sqrt(1000.0), 2.0], "reciprocal": [np.inf, -1.0, 1e-3, 0.25],
        "rsqrt": [np.inf, np.nan, 1000.0 ** -0.5, 0.5],
    }
    for name, value in values.items():
        np.testing.assert_allclose(value.detach().numpy(), np.array(expected[name], np.float32), rtol=1e-6,
                                   err_msg=name)
    assert x.grad.shape == (4,)
