"""PReLU, RReLU, the shrinks, instance and local response norm, channel_shuffle, feature alpha dropout:
torch parity, gradients, the random ops' statistics, their layers and torch's errors."""
import math
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("prelu", "rrelu", "hardshrink", "softshrink", "instance_norm", "local_response_norm", "channel_shuffle")


@pytest.mark.parametrize("op,case", [(op, c) for op in OPS for c in case_names(op)])
def test_matches_torch(op, case):
    check_case(op, case, atol=1e-5, rtol=1e-4)


def _t(*shape, seed=0, grad=True, away_from=()):
    """float64 normal values, moved off the given kinks."""
    data = np.random.default_rng(seed).standard_normal(shape)
    for k in away_from:
        near = np.abs(data - k) < 1e-2
        data[near] = k + 2e-2
    return core.tensor(data, dtype=core.float64, requires_grad=grad)


# --- prelu, the shrinks, rrelu ---------------------------------------------------------------


def test_prelu_gradcheck():
    x = _t(2, 3, 4, away_from=(0.0,))
    assert gradcheck(F.prelu, (x, _t(3, seed=1)))
    assert gradcheck(F.prelu, (x, _t(1, seed=2)))
    assert gradcheck(F.prelu, (_t(5, away_from=(0.0,)), _t(seed=3)))  # 0-d weight


def test_prelu_layer_and_errors():
    layer = nn.PReLU(3, init=0.1)
    assert list(layer.state_dict()) == ["weight"] and np.all(layer.weight.detach().numpy() == np.float32(0.1))
    assert np.all(nn.PReLU().weight.detach().numpy() == 0.25)
    x = core.tensor([[-2.0, 1.0, -1.0]])
    np.testing.assert_allclose(layer(x).detach().numpy(), [[-0.2, 1.0, -0.1]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="Found parameter numbers = 4 and channel size = 3."):
        F.prelu(core.randn(2, 3, 4), core.randn(4))
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 1."):
        F.prelu(core.randn(3), core.randn(3))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"):
        F.prelu(core.randn(2, 3), core.randn(3, 1))


@pytest.mark.parametrize("fn,lambd", [(F.hardshrink, 0.5), (F.softshrink, 0.5), (F.hardshrink, 0.2),
                                      (F.softshrink, 1.1)])
def test_shrink_gradcheck(fn, lambd):
    x = _t(4, 5, away_from=(-lambd, lambd)) * 2
    assert gradcheck(lambda a: fn(a, lambd), (x.detach().requires_grad_(),))


def test_shrink_values_and_errors():
    x = core.tensor([-2.0, -0.5, -0.2, 0.0, 0.3, 0.5, 1.5])
    np.testing.assert_array_equal(F.hardshrink(x).numpy(), [-2.0, 0, 0, 0, 0, 0, 1.5])
    np.testing.assert_allclose(F.softshrink(x).numpy(), [-1.5, 0, 0, 0, 0, 0, 1.0])
    assert repr(nn.Hardshrink(0.3)) == "Hardshrink(0.3)"
    with pytest.raises(RuntimeError, match=r"lambda must be in range \[0, 3.40282e\+38\] for input dtype Float, "
                                           "but found -1"):
        F.softshrink(x, -1.0)


def test_rrelu_eval_is_leaky_relu_with_the_mean_slope():
    x = _t(4, 5, away_from=(0.0,))
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3).detach().numpy(),
                               F.leaky_relu(x, 0.2).detach().numpy(), atol=1e-15)
    assert gradcheck(lambda a: F.rrelu(a, 0.1, 0.3), (x,))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(x, 0.5, 0.1)


def test_rrelu_training_draws_one_uniform_slope_per_negative_element():
    core.manual_seed(0)
    lower, upper = 0.1, 0.4
    x = core.cat([core.full((100, 1000), -1.0), core.full((1, 1000), 2.0)])
    y = F.rrelu(x, lower, upper, training=True).numpy()
    np.testing.assert_array_equal(y[-1], 2.0)  # positives pass unchanged
    slopes = -y[:-1].reshape(-1)
    assert slopes.min() >= lower and slopes.max() <= upper
    n, width = slopes.size, upper - lower
    # U(lower, upper): mean (lower+upper)/2 with std width/sqrt(12 n), variance width^2/12; 5 sigma.
    assert abs(slopes.mean() - (lower + upper) / 2) < 5 * width / math.sqrt(12 * n)
    assert abs(slopes.var() / (width ** 2 / 12) - 1) < 5 * math.sqrt(0.8 / n)
    assert len(np.unique(slopes)) > 0.99 * n  # a slope per element
    hist, _ = np.histogram(slopes, bins=10, range=(lower, upper))
    assert np.all(np.abs(hist / n - 0.1) < 5 * math.sqrt(0.09 / n))


def test_rrelu_training_gradient_is_the_drawn_slope():
    core.manual_seed(3)
    x = _t(6, 7, away_from=(0.0,))
    y = F.rrelu(x, 0.2, 0.5, training=True)
    y.sum().backward()
    data = x.detach().numpy()
    slope = y.detach().numpy() / data
    np.testing.assert_allclose(x.grad.numpy(), np.where(data > 0, 1.0, slope), atol=1e-12)

    def seeded(t):
        core.manual_seed(1)  # the same slopes on every evaluation
        return F.rrelu(t, 0.2, 0.5, training=True)

    assert gradcheck(seeded, (x.detach().requires_grad_(),))


def test_rrelu_layer_train_eval_and_inplace():
    layer = nn.RReLU(0.1, 0.3)
    x = core.full((50,), -1.0)
    assert len(np.unique(layer(x).numpy())) > 1
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), -0.2, rtol=1e-6)
    y = core.full((5,), -1.0)
    assert F.rrelu(y, inplace=True, training=True) is y and np.all(y.numpy() < 0)


def test_softmax2d():
    x = core.randn(2, 3, 4, 5)
    np.testing.assert_allclose(nn.Softmax2d()(x).numpy(), F.softmax(x, dim=1).numpy(), atol=1e-7)
    np.testing.assert_allclose(nn.Softmax2d()(x[0]).numpy(), F.softmax(x[0], dim=0).numpy(), atol=1e-7)
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(core.randn(2, 3))


# --- feature alpha dropout ---------------------------------------------------------------------


def test_feature_alpha_dropout_keeps_mean_and_variance_per_whole_channel():
    core.manual_seed(11)
    x = core.randn(200, 100, 10)
    y = F.feature_alpha_dropout(x, p=0.3, training=True).numpy()
    # Each channel is one affine map of its input: either a * x + b (kept) or a constant (dropped).
    a = 1.0 / math.sqrt((1.7580993408473766 ** 2 * 0.3 + 1.0) * 0.7)
    kept = np.abs(y - (a * x.numpy() + 1.7580993408473766 * a * 0.3)).max(axis=2) < 1e-5
    dropped = np.ptp(y, axis=2) == 0
    assert np.all(kept ^ dropped)
    assert abs(dropped.mean() - 0.3) < 5 * math.sqrt(0.21 / dropped.size)
    # 2e5 unit-variance samples in 2e4 independent channels: mean std ~0.007; allow 5 sigma
    assert abs(y.mean()) < 0.04 and abs(y.var() - 1.0) < 0.05
    assert F.feature_alpha_dropout(x, 0.3, training=False) is x
    assert float(F.feature_alpha_dropout(x, 1.0, training=True).abs().sum()) == 0.0
    assert float(F.alpha_dropout(x, 1.0, training=True).abs().sum()) == 0.0
    with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
        F.feature_alpha_dropout(core.randn(5), 0.5, training=True)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.feature_alpha_dropout(x, 1.5)


def test_feature_alpha_dropout_layer_and_gradient():
    layer = nn.FeatureAlphaDropout(0.4)
    x = _t(3, 4, 5)
    assert repr(layer) == "FeatureAlphaDropout(p=0.4, inplace=False)"
    y = layer(x)
    y.sum().backward()
    per_channel = x.grad.numpy()
    assert np.all(np.ptp(per_channel, axis=2) == 0)  # one scale per channel: a or 0
    layer.eval()
    assert layer(x) is x


# --- instance norm ---------------------------------------------------------------------------


def test_instance_norm_gradcheck():
    x, w, b = _t(2, 3, 4), _t(3, seed=1), _t(3, seed=2)
    assert gradcheck(lambda *a: F.instance_norm(a[0], weight=a[1], bias=a[2]), (x, w, b))
    assert gradgradcheck(lambda a, c: F.instance_norm(a, weight=c, eps=1e-3), (_t(2, 2, 3, 2), w[:2].detach()
                                                                                 .requires_grad_()))
    rm, rv = core.tensor([0.1, -0.2, 0.3], dtype=core.float64), core.tensor([1.5, 0.7, 1.1], dtype=core.float64)
    assert gradcheck(lambda a, c: F.instance_norm(a, rm, rv, weight=c, use_input_stats=False), (x, w))


def test_instance_norm_is_per_sample_per_channel():
    x = _t(3, 4, 5, 2, grad=False)
    out = F.instance_norm(x, eps=0.0).numpy()
    data = x.numpy().reshape(3, 4, -1)
    expected = (data - data.mean(-1, keepdims=True)) / data.std(-1, keepdims=True)
    np.testing.assert_allclose(out.reshape(3, 4, -1), expected, atol=1e-10)


def test_instance_norm_running_stats():
    x = _t(3, 2, 5, grad=False)
    rm, rv = core.tensor([0.5, -1.0], dtype=core.float64), core.tensor([2.0, 0.5], dtype=core.float64)
    F.instance_norm(x, rm, rv, momentum=0.25)
    data = x.numpy()
    np.testing.assert_allclose(rm.numpy(), 0.75 * np.array([0.5, -1.0]) + 0.25 * data.mean(2).mean(0), atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.75 * np.array([2.0, 0.5]) + 0.25 * data.var(2, ddof=1).mean(0),
                               atol=1e-12)
    before = rm.numpy().copy()
    out = F.instance_norm(x, rm, rv, use_input_stats=False)
    np.testing.assert_array_equal(rm.numpy(), before)
    np.testing.assert_allclose(out.numpy(), (data - before[:, None]) / np.sqrt(rv.numpy()[:, None] + 1e-5),
                               atol=1e-12)


def test_instance_norm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(core.randn(2, 3, 1))
    with pytest.raises(RuntimeError, match="running_mean should contain 6 elements not 4"):
        F.instance_norm(core.randn(2, 3, 4), core.zeros(2), core.ones(2))
    with pytest.raises(RuntimeError, match="weight should contain 6 elements not 4"):
        F.instance_norm(core.randn(2, 3, 4), weight=core.ones(2))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined"):
        F.instance_norm(core.randn(2, 3, 4), use_input_stats=False)


def test_instance_norm_layers():
    layer = nn.InstanceNorm1d(3)
    assert list(layer.state_dict()) == [] and layer.weight is None
    tracked = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    assert list(tracked.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    x = core.randn(3, 6)  # unbatched (C, L)
    np.testing.assert_allclose(layer(x).numpy(), layer(x.unsqueeze(0))[0].numpy(), atol=1e-7)
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(4)(core.randn(2, 3, 5))
    with pytest.raises(ValueError, match=r"expected input's size at dim=0 to match num_features \(4\), but got: 3."):
        nn.InstanceNorm1d(4, affine=True)(x)
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 3D input\)"):
        nn.InstanceNorm3d(3)(core.randn(3, 5, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.InstanceNorm1d(3)(core.randn(2, 3, 5, 3))
    tracked.eval()
    y = core.randn(2, 3, 4, 4)
    np.testing.assert_allclose(tracked(y).detach().numpy(), (y.numpy() / math.sqrt(1 + 1e-5)), atol=1e-6)
    tracked.train()
    tracked(y)
    assert int(tracked.num_batches_tracked) == 0  # as torch: instance norm never counts batches
    assert not np.allclose(tracked.running_mean.numpy(), 0)


def test_instance_norm_refuses_legacy_running_stats():
    # A plain dict carries no version metadata: a checkpoint from before torch 0.4.
    state = {"running_mean": core.zeros(2), "running_var": core.ones(2)}
    with pytest.raises(RuntimeError, match=r'Unexpected running stats buffer\(s\) "running_mean" and "running_var" '
                                           "for InstanceNorm1d with track_running_stats=False"):
        nn.InstanceNorm1d(2).load_state_dict(state)


# --- local response norm, channel_shuffle ---------------------------------------------------------


def test_local_response_norm_gradcheck():
    assert gradcheck(lambda a: F.local_response_norm(a, 3, alpha=0.5, beta=0.7, k=1.2), (_t(2, 5, 3),))
    assert gradcheck(lambda a: F.local_response_norm(a, 2, alpha=0.3), (_t(1, 4, 2, 3),))
    assert gradcheck(lambda a: F.local_response_norm(a, 4, alpha=0.2, beta=1.0), (_t(1, 3, 2, 2, 2),))


def test_local_response_norm_definition():
    x = _t(2, 6, 3, grad=False)
    size, alpha, beta, k = 3, 0.4, 0.6, 1.3
    data = x.numpy()
    squares = np.pad(data ** 2, ((0, 0), (size // 2, (size - 1) // 2), (0, 0)))
    window = sum(squares[:, i:i + 6] for i in range(size)) / size
    np.testing.assert_allclose(F.local_response_norm(x, size, alpha, beta, k).numpy(),
                               data / (k + alpha * window) ** beta, atol=1e-12)
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        F.local_response_norm(core.randn(3, 4), 2)


def test_channel_shuffle():
    x = core.arange(8.0).reshape(1, 8, 1)
    np.testing.assert_array_equal(F.channel_shuffle(x, 2).numpy().reshape(-1), [0, 4, 1, 5, 2, 6, 3, 7])
    np.testing.assert_array_equal(nn.ChannelShuffle(4)(x).numpy().reshape(-1), [0, 2, 4, 6, 1, 3, 5, 7])
    assert gradcheck(lambda a: F.channel_shuffle(a, 3), (_t(2, 6, 2),))
    with pytest.raises(RuntimeError, match=r"channel_shuffle expects input with > 2 dims, but got input with sizes "
                                           r"\[2, 6\]"):
        F.channel_shuffle(core.randn(2, 6), 2)
    with pytest.raises(RuntimeError, match="Number of groups to divide channels in must be positive. Value of "
                                           "groups:0"):
        F.channel_shuffle(core.randn(2, 6, 3), 0)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups. Got 6 channels and 4"):
        F.channel_shuffle(core.randn(2, 6, 3), 4)


def test_layers_call_their_functional():
    x = core.randn(2, 4, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pairs = [
            (nn.PReLU(4)(x), F.prelu(x, core.full((4,), 0.25))),
            (nn.Hardshrink(0.2)(x), F.hardshrink(x, 0.2)),
            (nn.Softshrink(0.2)(x), F.softshrink(x, 0.2)),
            (nn.LocalResponseNorm(3, k=2.0)(x), F.local_response_norm(x, 3, k=2.0)),
            (nn.InstanceNorm2d(4)(x), F.instance_norm(x)),
        ]
    for got, want in pairs:
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)
