"""softmax / log_softmax / softmin: torch parity, gradients of first and second order, fusion."""
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("softmax", "log_softmax", "softmin")


@pytest.mark.parametrize("op,case", [(op, c) for op in OPS for c in case_names(op)])
def test_matches_torch(op, case):
    check_case(op, case)


def _x(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gradcheck(op, dim):
    fn = getattr(F, op)
    assert gradcheck(lambda t: fn(t, dim=dim), (_x(3, 4, 2),))


@pytest.mark.parametrize("op", OPS)
def test_gradgradcheck(op):
    fn = getattr(F, op)
    assert gradgradcheck(lambda t: fn(t, dim=1), (_x(3, 4),))


def test_third_derivative_of_softmax():
    # d3/dx3 of softmax(x)[0] for two logits (x, 0) is the third derivative of sigmoid(x).
    x = core.tensor([0.3, 0.0], dtype=core.float64, requires_grad=True)
    (g1,) = core.autograd.grad(F.softmax(x, dim=0)[0], x, create_graph=True)
    (g2,) = core.autograd.grad(g1[0], x, create_graph=True)
    (g3,) = core.autograd.grad(g2[0], x)
    s = 1 / (1 + np.exp(-0.3))
    assert np.isclose(g3[0].item(), s * (1 - s) * (1 - 6 * s + 6 * s * s))


def test_fused_matches_composition():
    x = _x(4, 6)
    y = _x(4, 6, seed=1).detach()
    composed_sm = core.exp(x) / core.exp(x).sum(dim=1, keepdim=True)
    composed_lsm = x - core.log(core.exp(x).sum(dim=1, keepdim=True))
    for fused, composed in ((F.softmax(x, 1), composed_sm), (F.log_softmax(x, 1), composed_lsm),
                            (F.softmin(x, 1), F.softmax(-x, 1))):
        np.testing.assert_allclose(fused.detach().numpy(), composed.detach().numpy(), atol=1e-12)
        (g_fused,) = core.autograd.grad((fused * y).sum(), x)
        (g_composed,) = core.autograd.grad((composed * y).sum(), x)
        np.testing.assert_allclose(g_fused.numpy(), g_composed.numpy(), atol=1e-12)


def test_single_node():
    x = _x(2, 3)
    for y in (F.softmax(x, 1), F.log_softmax(x, 1), F.softmin(x, 1)):
        assert y.grad_fn.next_functions[0][0] is x


def test_stable_for_huge_logits():
    x = core.tensor([[1e4, 0.0, -1e4], [-1e30, -1e30, -1e30]])
    np.testing.assert_allclose(F.softmax(x, 1).numpy(), [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(F.log_softmax(x, 1).numpy()[0], [0, -1e4, -2e4])


@pytest.mark.parametrize("dtype", [core.float16, core.bfloat16])
def test_half_dtypes_compute_in_float32(dtype):
    x = core.randn(3, 7) * 4
    for op in OPS:
        fn = getattr(F, op)
        out = fn(x.to(dtype), dim=1)
        assert out.dtype == dtype
        ref = fn(x.to(dtype).float(), dim=1).numpy()
        np.testing.assert_allclose(out.float().numpy(), ref, rtol=1e-2, atol=1e-2)


def test_dtype_argument_casts_first():
    x = core.randn(2, 3)
    out = F.softmax(x, dim=1, dtype=core.float64)
    assert out.dtype == core.float64
    np.testing.assert_allclose(out.numpy(), F.softmax(x.double(), dim=1).numpy())


def test_implicit_dim_warns_and_uses_torch_rule():
    x = core.randn(2, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = F.softmax(x)
    assert any("Implicit dimension choice" in str(w.message) for w in caught)
    np.testing.assert_allclose(out.numpy(), F.softmax(x, 1).numpy())


def test_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(core.randn(2, 3), dim=2)
    with pytest.raises(RuntimeError, match="not implemented"):
        F.softmax(core.tensor([1, 2]), dim=0)


def test_softmax_and_log_softmax_as_torch_functions_and_tensor_methods():
    x = core.tensor([[1.0, -2.0, 0.5], [3.0, 3.0, -1.0]])
    expected, expected_log = F.softmax(x, dim=1), F.log_softmax(x, dim=1)
    for value in (core.softmax(x, 1), core.softmax(x, dim=1), x.softmax(1), x.softmax(dim=1)):
        np.testing.assert_array_equal(value.numpy(), expected.numpy())
    for value in (core.log_softmax(x, 1), x.log_softmax(dim=1)):
        np.testing.assert_array_equal(value.numpy(), expected_log.numpy())
    assert x.softmax(0, dtype=core.float64).dtype == core.float64
    np.testing.assert_array_equal(x.relu().numpy(), np.maximum(x.numpy(), 0))
