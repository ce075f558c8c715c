"""nn.init: torch's gains and fans, and the distributions' statistics.

Sample sizes are large enough that each tolerance is several standard errors of the
estimated statistic, so a correct sampler fails with negligible probability.
"""
import math

import numpy as np
import pytest
from scipy import stats

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.nn import init


def test_calculate_gain_values():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(2 / 6))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


def test_fans():
    assert init._calculate_fan_in_and_fan_out(core.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(core.empty(8, 4, 3, 2)) == (24, 48)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(core.empty(4))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(core.empty(3, 3), mode="fan_avg")


def _uniform_check(t, bound):
    data = t.numpy().astype(np.float64).ravel()
    assert data.min() >= -bound and data.max() <= bound
    # U(-b, b): mean 0, var b^2/3; standard errors b/sqrt(3n) and ~0.3 b^2/sqrt(n)
    n = data.size
    assert abs(data.mean()) < 5 * bound / math.sqrt(3 * n)
    assert abs(data.var() - bound ** 2 / 3) < 5 * 0.3 * bound ** 2 / math.sqrt(n)
    assert data.min() < -0.99 * bound and data.max() > 0.99 * bound


def _normal_check(t, std):
    data = t.numpy().astype(np.float64).ravel()
    n = data.size
    assert abs(data.mean()) < 5 * std / math.sqrt(n)
    assert abs(data.std() / std - 1) < 5 / math.sqrt(2 * n)


def test_uniform_normal_constant():
    core.manual_seed(0)
    _uniform_check(init.uniform_(core.empty(300, 300), -0.5, 0.5), 0.5)
    _normal_check(init.normal_(core.empty(300, 300), 0.0, 2.0), 2.0)
    assert init.constant_(core.empty(2, 2), 3.5).tolist() == [[3.5, 3.5], [3.5, 3.5]]
    assert init.ones_(core.empty(2)).tolist() == [1.0, 1.0] and init.zeros_(core.ones(2)).tolist() == [0.0, 0.0]


def test_xavier_and_kaiming_bounds():
    core.manual_seed(1)
    w = core.empty(400, 200)
    _uniform_check(init.xavier_uniform_(w, gain=2.0), 2.0 * math.sqrt(6 / 600))
    _normal_check(init.xavier_normal_(w), math.sqrt(2 / 600))
    _uniform_check(init.kaiming_uniform_(w, a=math.sqrt(5)), math.sqrt(3) * math.sqrt(2 / 6) / math.sqrt(200))
    _uniform_check(init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu"), math.sqrt(6 / 400))
    _normal_check(init.kaiming_normal_(w, nonlinearity="relu"), math.sqrt(2 / 200))
    with pytest.warns(UserWarning, match="zero-element tensors is a no-op"):
        init.kaiming_uniform_(core.empty(0, 3))


def test_linear_default_init_matches_torch_bounds():
    core.manual_seed(2)
    layer = nn.Linear(300, 400)
    bound = 1 / math.sqrt(300)  # kaiming_uniform_(a=sqrt(5)) gives exactly 1/sqrt(fan_in)
    _uniform_check(layer.weight.detach(), bound)
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
    assert layer.weight.requires_grad and layer.weight.grad_fn is None


def test_trunc_normal_matches_truncated_distribution():
    core.manual_seed(3)
    t = init.trunc_normal_(core.empty(200, 200), mean=0.5, std=1.0, a=-1.0, b=1.5)
    data = t.numpy().astype(np.float64).ravel()
    assert data.min() >= -1.0 and data.max() <= 1.5
    ref = stats.truncnorm((-1.0 - 0.5) / 1.0, (1.5 - 0.5) / 1.0, loc=0.5, scale=1.0)
    n = data.size
    assert abs(data.mean() - ref.mean()) < 5 * ref.std() / math.sqrt(n)
    assert abs(data.std() - ref.std()) < 5 * ref.std() / math.sqrt(2 * n)
    assert stats.kstest(data, ref.cdf).pvalue > 1e-4


def test_orthogonal_eye_dirac_sparse():
    core.manual_seed(4)
    for shape in [(6, 4), (4, 6), (3, 2, 2)]:
        w = init.orthogonal_(core.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1)
        gram = w @ w.T if shape[0] <= w.shape[1] else w.T @ w
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    assert init.eye_(core.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    d = init.dirac_(core.empty(4, 2, 3), groups=2).numpy()
    assert d.sum() == 4 and d[0, 0, 1] == 1 and d[1, 1, 1] == 1 and d[2, 0, 1] == 1 and d[3, 1, 1] == 1
    s = init.sparse_(core.empty(10, 5), sparsity=0.3).numpy()
    assert ((s == 0).sum(axis=0) >= 3).all()
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(core.empty(2))


def test_init_runs_under_no_grad_and_is_seeded():
    p = nn.Parameter(core.empty(3, 3))
    init.normal_(p)
    assert p.grad_fn is None and p.requires_grad
    core.manual_seed(9)
    a = init.uniform_(core.empty(5)).tolist()
    core.manual_seed(9)
    assert init.uniform_(core.empty(5)).tolist() == a
    g = core.Generator().manual_seed(9)
    assert init.uniform_(core.empty(5), generator=g).tolist() == a
