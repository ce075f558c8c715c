"""Convolutions and pooling: torch parity, gradients (first and second order), errors."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
       "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d")


@pytest.mark.parametrize("op,case", [(op, c) for op in OPS for c in case_names(op)])
def test_matches_torch(op, case):
    check_case(op, case, atol=1e-5, rtol=1e-4)


def _t(*shape, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=grad)


def test_conv2d_gradcheck():
    x, w, b = _t(1, 4, 5, 4), _t(4, 2, 2, 3, seed=1), _t(4, seed=2)
    assert gradcheck(lambda *a: F.conv2d(*a, stride=(2, 1), padding=1, dilation=(1, 2), groups=2), (x, w, b))
    assert gradcheck(lambda a, c: F.conv2d(a, c, padding="same"), (_t(1, 2, 4, 4), _t(3, 2, 2, 3, seed=3)))


def test_conv2d_gradgradcheck():
    x, w = _t(1, 2, 4, 4), _t(2, 2, 2, 2, seed=1)
    assert gradgradcheck(lambda a, c: F.conv2d(a, c, padding=1, stride=2), (x, w))


def test_conv1d_and_transposed_gradcheck():
    assert gradcheck(lambda *a: F.conv1d(*a, stride=2, padding=1, dilation=2),
                     (_t(2, 3, 9), _t(2, 3, 3, seed=1), _t(2, seed=2)))
    assert gradcheck(lambda *a: F.conv_transpose2d(*a, stride=2, padding=1, output_padding=1, groups=2),
                     (_t(1, 4, 3, 2), _t(4, 1, 3, 2, seed=1), _t(2, seed=2)))
    assert gradcheck(lambda *a: F.conv_transpose1d(*a, stride=3, output_padding=2), (_t(1, 2, 4), _t(2, 3, 2, seed=1)))


def test_conv_is_im2col_matmul():
    x, w = _t(2, 3, 6, 5, grad=False), _t(4, 3, 2, 3, seed=1, grad=False)
    cols = F.unfold(x, (2, 3))  # (N, C*kh*kw, L)
    expected = (w.reshape(4, -1) @ cols).reshape(2, 4, 5, 3)
    np.testing.assert_allclose(F.conv2d(x, w).numpy(), expected.numpy(), atol=1e-12)


def test_pooling_gradcheck():
    x = _t(1, 2, 5, 6)
    assert gradcheck(lambda a: F.max_pool2d(a, 3, stride=2, padding=1, ceil_mode=True), (x,))
    assert gradcheck(lambda a: F.avg_pool2d(a, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                     (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool2d(a, (3, 4)), (x,))
    assert gradcheck(lambda a: F.max_pool1d(a, 2, dilation=2), (_t(2, 3, 7),))
    assert gradcheck(lambda a: F.avg_pool1d(a, 3, padding=1), (_t(2, 3, 7),))
    assert gradcheck(lambda a: F.adaptive_avg_pool1d(a, 4), (_t(2, 3, 7),))


def test_max_pool_gradient_goes_to_first_maximum():
    x = core.tensor([[[[1.0, 3.0], [3.0, 0.0]]]], requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    out.sum().backward()
    assert idx.item() == 1
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), [0, 1, 0, 0])


def test_conv_errors():
    x = core.randn(1, 2, 8, 8)
    with pytest.raises(RuntimeError, match=r"expected input\[1, 2, 8, 8\] to have 3 channels, but got 2 channels"):
        F.conv2d(x, core.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv2d(x, core.randn(4, 2, 9, 3))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv2d(x, core.randn(4, 2, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Input type .* and weight type .* should be the same"):
        F.conv2d(x.double(), core.randn(4, 2, 3, 3))


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(core.randn(1, 1, 5, 5), 2, padding=2)
    with pytest.raises(RuntimeError, match="pad should be at most half of kernel size"):
        F.avg_pool2d(core.randn(1, 1, 5, 5), 2, padding=2)
