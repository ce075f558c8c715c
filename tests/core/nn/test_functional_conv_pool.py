"""Convolutions and pooling: torch parity, gradients (first and second order), errors."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core import nn
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
       "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
       "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
       "adaptive_max_pool3d")


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


def test_conv3d_gradcheck():
    x, w, b = _t(1, 4, 3, 4, 3), _t(4, 2, 2, 2, 3, seed=1), _t(4, seed=2)
    assert gradcheck(lambda *a: F.conv3d(*a, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2),
                     (x, w, b))
    assert gradcheck(lambda a, c: F.conv3d(a, c, padding="same"), (_t(1, 2, 3, 3, 4), _t(2, 2, 2, 3, 2, seed=3)))
    assert gradcheck(lambda a, c: F.conv3d(a, c), (_t(2, 3, 3, 3), _t(2, 2, 2, 1, 2, seed=4)))  # unbatched


def test_conv_transpose3d_gradcheck():
    x, w, b = _t(1, 4, 2, 3, 2), _t(4, 1, 2, 3, 2, seed=1), _t(2, seed=2)
    assert gradcheck(lambda *a: F.conv_transpose3d(*a, stride=2, padding=1, output_padding=(1, 0, 1), groups=2),
                     (x, w, b))
    assert gradcheck(lambda a, c: F.conv_transpose3d(a, c, dilation=(1, 2, 1)), (_t(2, 2, 2, 2), _t(2, 3, 2, 2, 2)))


def test_conv3d_gradgradcheck():
    assert gradgradcheck(lambda a, c: F.conv3d(a, c, padding=1, stride=2), (_t(1, 2, 3, 3, 3), _t(2, 2, 2, 2, 2)))


def test_conv3d_slices_are_conv2d():
    """A kernel of depth 1 convolves every depth slice on its own."""
    x, w = _t(2, 3, 4, 5, 6, grad=False), _t(4, 3, 1, 2, 3, seed=1, grad=False)
    out = F.conv3d(x, w, padding=(0, 1, 1))
    for d in range(4):
        np.testing.assert_allclose(out[:, :, d].numpy(), F.conv2d(x[:, :, d], w[:, :, 0], padding=1).numpy(),
                                   atol=1e-12)


def test_pooling_3d_gradcheck():
    x = _t(1, 2, 4, 5, 3)
    assert gradcheck(lambda a: F.max_pool3d(a, 2, stride=(1, 2, 2), padding=1, ceil_mode=True), (x,))
    assert gradcheck(lambda a: F.max_pool3d(a, (2, 3, 2), dilation=(1, 1, 2)), (_t(2, 3, 5, 4),))
    assert gradcheck(lambda a: F.avg_pool3d(a, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                     (x,))
    assert gradcheck(lambda a: F.avg_pool3d(a, 2, divisor_override=3), (x,))
    assert gradcheck(lambda a: F.adaptive_avg_pool3d(a, (3, 2, 4)), (x,))


def test_adaptive_max_pool_gradcheck():
    assert gradcheck(lambda a: F.adaptive_max_pool1d(a, 4), (_t(2, 3, 7),))
    assert gradcheck(lambda a: F.adaptive_max_pool2d(a, (3, 2)), (_t(1, 2, 5, 7),))
    assert gradcheck(lambda a: F.adaptive_max_pool3d(a, (2, 3, 2)), (_t(2, 3, 5, 4),))


def test_max_pool3d_indices_point_at_the_maxima():
    x = _t(2, 3, 5, 4, 6, grad=False)
    out, idx = F.max_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=(1, 1, 0), return_indices=True)
    flat = x.numpy().reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  out.numpy().reshape(2, 3, -1))
    out, idx = F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  out.numpy().reshape(2, 3, -1))


def test_adaptive_max_pool_gradient_goes_to_first_maximum():
    x = core.tensor([[[2.0, 5.0, 5.0, 1.0, 5.0]]], requires_grad=True)
    out, idx = F.adaptive_max_pool1d(x, 2, return_indices=True)  # windows [0, 3) and [2, 5)
    out.sum().backward()
    assert idx.numpy().tolist() == [[[1, 2]]]
    np.testing.assert_array_equal(x.grad.numpy().reshape(-1), [0, 1, 1, 0, 0])


def test_conv3d_and_pool3d_errors():
    with pytest.raises(RuntimeError, match=r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d"):
        F.conv3d(core.randn(3, 3, 3), core.randn(2, 3, 2, 2, 2))
    with pytest.raises(RuntimeError, match=r"\(3 x 3 x 3\). Kernel size: \(4 x 4 x 4\). Kernel size can't be"):
        F.conv3d(core.randn(1, 2, 3, 3, 3), core.randn(2, 2, 4, 4, 4))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv3d(core.randn(1, 2, 3, 3, 3), core.randn(2, 2, 2, 2, 2), stride=(1, 1, 2), padding="same")
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose3d(core.randn(1, 2, 3, 3, 3), core.randn(2, 2, 2, 2, 2), output_padding=1)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.max_pool3d(core.randn(1, 2, 3, 3, 3), 4)
    with pytest.raises(RuntimeError, match="Expected 4D or 5D input"):
        F.avg_pool3d(core.randn(3, 3, 3), 2)
    with pytest.raises(RuntimeError, match=r"adaptive_max_pool2d\(\): Expected 3D or 4D tensor"):
        F.adaptive_max_pool2d(core.randn(3, 3), 2)
    with pytest.raises(RuntimeError, match="output_size must have 1 elements"):
        F.adaptive_max_pool1d(core.randn(2, 3, 4), (2, 2))


def test_3d_layers_call_their_functional():
    x = core.randn(2, 3, 4, 5, 4)
    conv = nn.Conv3d(3, 4, (2, 3, 2), padding=1, padding_mode="replicate")
    assert tuple(conv.weight.shape) == (4, 3, 2, 3, 2)
    expected = F.conv3d(F.pad(x, (1, 1, 1, 1, 1, 1), mode="replicate"), conv.weight, conv.bias)
    pairs = [
        (conv(x), expected),
        (nn.ConvTranspose3d(3, 2, 2, stride=2, bias=False)(x), None),
        (nn.MaxPool3d(2, stride=1)(x), F.max_pool3d(x, 2, 1)),
        (nn.AvgPool3d(2, padding=1, count_include_pad=False)(x), F.avg_pool3d(x, 2, 2, 1, count_include_pad=False)),
        (nn.AdaptiveAvgPool3d((1, 2, 3))(x), F.adaptive_avg_pool3d(x, (1, 2, 3))),
        (nn.AdaptiveMaxPool3d(2)(x), F.adaptive_max_pool3d(x, 2)),
    ]
    for got, want in pairs:
        if want is not None:
            np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)
    assert tuple(pairs[1][0].shape) == (2, 2, 8, 10, 8)
    out, idx = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x[:, :, 0])
    assert tuple(out.shape) == tuple(idx.shape) == (2, 3, 2, 3)
    assert not isinstance(nn.AvgPool3d(2), nn.AvgPool2d) and not isinstance(nn.Conv3d(1, 1, 1), nn.Conv2d)
