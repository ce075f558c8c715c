"""Loss functions: torch parity, gradients, the fused cross_entropy, torch's error messages."""
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
       "binary_cross_entropy_with_logits", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
       "gaussian_nll_loss", "multilabel_soft_margin_loss")


@pytest.mark.parametrize("op,case", [(op, c) for op in OPS for c in case_names(op)])
def test_matches_torch(op, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_case(op, case, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("case", case_names("kl_div"))
def test_kl_div_matches_torch(case):
    # torch's target gradient is NaN where target == 0; ours is the finite limit there.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_case("kl_div", case, skip_nan_grads=True)


@pytest.mark.parametrize("case", case_names("poisson_nll_loss"))
def test_poisson_nll_loss_matches_torch(case):
    # With full=True torch's target gradient is NaN where target == 0 (0 * log 0 in the masked
    # Stirling term); ours leaves the masked term out of the gradient there.
    check_case("poisson_nll_loss", case, atol=1e-5, rtol=1e-4, skip_nan_grads=True)


def _t(*shape, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=grad)


TARGET = core.tensor([[1, 2], [3, -100], [0, 0]])
WEIGHT = core.tensor([0.5, 1.0, 2.0, 1.5], dtype=core.float64)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_gradcheck_and_gradgradcheck(reduction, smoothing):
    def fn(x):
        return F.cross_entropy(x, TARGET, weight=WEIGHT, reduction=reduction, label_smoothing=smoothing)

    x = _t(3, 4, 2)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_cross_entropy_probability_targets_gradients():
    x, p = _t(3, 4), core.tensor(np.random.default_rng(1).random((3, 4)), dtype=core.float64, requires_grad=True)
    fn = lambda a, b: F.cross_entropy(a, b, weight=WEIGHT, label_smoothing=0.1)  # noqa: E731
    assert gradcheck(fn, (x, p))
    assert gradgradcheck(fn, (x, p))


def test_nll_loss_gradients():
    target = core.tensor([[1, 2], [3, 3], [0, 0]])
    fn = lambda x: F.nll_loss(x, target, weight=WEIGHT, ignore_index=0)  # noqa: E731
    assert gradcheck(fn, (_t(3, 4, 2),))
    assert gradgradcheck(fn, (_t(3, 4, 2),))


def test_fused_cross_entropy_matches_log_softmax_plus_nll():
    x = _t(5, 7, 3)
    t = core.tensor(np.random.default_rng(2).integers(0, 7, (5, 3)))
    w = core.tensor(np.random.default_rng(3).random(7), dtype=core.float64)
    fused = F.cross_entropy(x, t, weight=w, ignore_index=4)
    composed = F.nll_loss(F.log_softmax(x, dim=1), t, weight=w, ignore_index=4)
    assert np.isclose(fused.item(), composed.item(), rtol=1e-12)
    (g_fused,) = core.autograd.grad(fused, x)
    (g_composed,) = core.autograd.grad(composed, x)
    np.testing.assert_allclose(g_fused.numpy(), g_composed.numpy(), atol=1e-12)
    assert fused.grad_fn.next_functions[0][0] is x  # one node


@pytest.mark.parametrize("op,args", [
    ("mse_loss", ()), ("l1_loss", ()), ("smooth_l1_loss", ()), ("huber_loss", ()), ("margin_ranking_loss", (None,)),
])
def test_elementwise_losses_gradcheck(op, args):
    fn = getattr(F, op)
    a, b = _t(3, 4), _t(3, 4, seed=1)
    if args:
        sign = core.tensor(np.sign(np.random.default_rng(5).standard_normal((3, 4))), dtype=core.float64)
        assert gradcheck(lambda x, y: fn(x, y, sign, margin=0.1), (a, b))
    else:
        assert gradcheck(lambda x, y: fn(x, y), (a, b))


def test_broadcasting_target_warns_and_gradchecks():
    a, b = _t(3, 4), _t(4, seed=1)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda x, y: F.mse_loss(x, y, reduction="sum"), (a, b))


def test_binary_losses_gradcheck():
    rng = np.random.default_rng(6)
    x = core.tensor(rng.random((3, 4)) * 0.9 + 0.05, dtype=core.float64, requires_grad=True)
    t = core.tensor(rng.random((3, 4)), dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b), (x, t))
    assert gradgradcheck(lambda a, b: F.binary_cross_entropy(a, b), (x, t))
    logits = _t(3, 4)
    pw = core.tensor(rng.random(4) * 2, dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c), (logits, t, pw))
    assert gradgradcheck(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, pos_weight=c), (logits, t, pw))


def test_kl_div_and_cosine_embedding_gradcheck():
    x, t = _t(3, 4), core.tensor(np.random.default_rng(7).random((3, 4)), dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="batchmean"), (x, t))
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), (x, _t(3, 4, seed=8)))
    y = core.tensor([1.0, -1.0, 1.0], dtype=core.float64)
    assert gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, y, margin=-0.5), (x, _t(3, 4, seed=9)))


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(core.randn(2, 3), core.rand(2, 3))


def test_all_targets_ignored_gives_nan_mean():
    assert np.isnan(F.cross_entropy(core.randn(2, 3), core.tensor([-100, -100])).item())


def test_class_index_errors():
    x = core.randn(3, 5)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)\."):
        F.cross_entropy(x, core.tensor([1, 2]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, core.tensor([1, 2, 7]))
    with pytest.raises(IndexError, match="Target -100 is out of bounds."):
        F.nll_loss(x, core.tensor([1, -100, 2]), ignore_index=1)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.cross_entropy(x, core.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Int"):
        F.nll_loss(x, core.tensor([1, 2, 3], dtype=core.int32))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target not supported"):
        F.cross_entropy(x, core.zeros(3, 4, dtype=core.int64))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 3\]"):
        F.cross_entropy(core.randn(2, 3, 4), core.tensor([[1, 2, 0], [0, 0, 0]]))
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.cross_entropy(x, core.tensor([1, 2, 3]), reduction="foo")
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 5 classes"):
        F.cross_entropy(x, core.tensor([1, 2, 3]), weight=core.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing must be between 0.0 and 1.0"):
        F.cross_entropy(x, core.tensor([1, 2, 3]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point target"):
        F.cross_entropy(x, core.rand(3, 5), ignore_index=2)


def test_binary_errors():
    with pytest.raises(ValueError, match="Using a target size .* that is different to the input size"):
        F.binary_cross_entropy(core.rand(3), core.rand(3, 1))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(core.rand(3) + 1, core.rand(3))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(core.rand(3), core.rand(3, 1))


def test_half_precision_cross_entropy():
    x = core.randn(4, 6)
    t = core.tensor([0, 5, 2, 3])
    out = F.cross_entropy(x.half(), t)
    assert out.dtype == core.float16
    assert abs(out.float().item() - F.cross_entropy(x.half().float(), t).item()) < 1e-2


def _positive(*shape, seed=0, low=0.1, high=2.0):
    return core.tensor(np.random.default_rng(seed).uniform(low, high, shape), dtype=core.float64, requires_grad=True)


@pytest.mark.parametrize("kwargs", [{}, {"p": 1.0, "swap": True, "reduction": "sum"}, {"p": 3.0, "margin": 3.0},
                                    {"swap": True, "margin": 2.5, "reduction": "none"}])
def test_triplet_margin_loss_gradcheck(kwargs):
    a, p, n = _t(4, 3), _t(4, 3, seed=1), _t(4, 3, seed=2)
    assert gradcheck(lambda *x: F.triplet_margin_loss(*x, **kwargs), (a, p, n))


@pytest.mark.parametrize("kwargs", [{}, {"full": True, "reduction": "sum"}, {"log_input": False, "full": True},
                                    {"log_input": False, "reduction": "none", "eps": 0.1}])
def test_poisson_nll_loss_gradcheck(kwargs):
    x = _positive(3, 4) if kwargs.get("log_input") is False else _t(3, 4)
    counts = core.tensor(np.random.default_rng(3).integers(0, 5, (3, 4)) + 0.5, dtype=core.float64,
                         requires_grad=True)
    assert gradcheck(lambda a, b: F.poisson_nll_loss(a, b, **kwargs), (x, counts))


def test_poisson_nll_loss_definition():
    x, t = core.tensor([0.5, -1.0, 2.0]), core.tensor([0.0, 1.0, 4.0])
    stirling = 4 * np.log(4) - 4 + 0.5 * np.log(2 * np.pi * 4)
    expected = np.exp([0.5, -1.0, 2.0]) - np.array([0.0, -1.0, 8.0]) + np.array([0.0, 0.0, stirling])
    np.testing.assert_allclose(F.poisson_nll_loss(x, t, full=True, reduction="none").numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("var_shape,kwargs", [((4, 3), {}), ((4,), {"full": True}), ((4, 1), {"reduction": "sum"}),
                                              ((4, 3), {"reduction": "none", "eps": 0.05})])
def test_gaussian_nll_loss_gradcheck(var_shape, kwargs):
    x, t, var = _t(4, 3), _t(4, 3, seed=1), _positive(*var_shape, seed=2)
    assert gradcheck(lambda a, b, c: F.gaussian_nll_loss(a, b, c, **kwargs), (x, t, var))
    assert gradgradcheck(lambda a, b, c: F.gaussian_nll_loss(a, b, c, **kwargs), (x, t, var))


def test_gaussian_nll_loss_clamp_passes_the_gradient_through():
    x, t = core.zeros(2, dtype=core.float64), core.ones(2, dtype=core.float64)
    var = core.tensor([1e-8, 2.0], dtype=core.float64, requires_grad=True)
    F.gaussian_nll_loss(x, t, var, eps=1e-2, reduction="sum").backward()
    # d/dv 0.5 (log v + 1 / v) at the clamped v = eps, flowing to var as if unclamped (torch's no_grad clamp_)
    np.testing.assert_allclose(var.grad.numpy(), [0.5 * (1 / 1e-2 - 1 / 1e-4), 0.5 * (1 / 2.0 - 1 / 4.0)])


def test_multilabel_soft_margin_loss_gradcheck():
    x, t = _t(3, 5), core.tensor(np.random.default_rng(4).random((3, 5)), dtype=core.float64, requires_grad=True)
    w = _positive(5, seed=5)
    assert gradcheck(lambda a, b, c: F.multilabel_soft_margin_loss(a, b, weight=c), (x, t, w))
    assert gradcheck(lambda a, b: F.multilabel_soft_margin_loss(a, b, reduction="none"), (x, t))
    assert gradgradcheck(lambda a, b: F.multilabel_soft_margin_loss(a, b, reduction="sum"), (x, t))


def test_new_loss_errors():
    a = core.randn(3, 4)
    with pytest.raises(RuntimeError, match="anchor 2D, positive 2D, and negative 1D inputs"):
        F.triplet_margin_loss(a, a, core.randn(4))
    with pytest.raises(ValueError, match="margin must be greater than 0, got 0"):
        F.triplet_margin_loss(a, a, a, margin=0)
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.triplet_margin_loss(a, a, a, reduction="x")
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0, got -1 instead"):
        nn.TripletMarginLoss(margin=-1)
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.poisson_nll_loss(a, a, reduction="x")
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(a, a, core.rand(3, 3))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(a, a, -1.0)
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(a, a, -core.rand(3, 4))
    with pytest.raises(ValueError, match="x is not valid"):
        F.gaussian_nll_loss(a, a, core.rand(3, 4), reduction="x")
    with pytest.raises(ValueError, match="x is not valid"):
        F.multilabel_soft_margin_loss(a, a, reduction="x")


def test_new_loss_layers_call_their_functional():
    a, p, n = core.randn(4, 3), core.randn(4, 3), core.randn(4, 3)
    rate, counts, var = core.rand(4, 3) + 0.1, core.tensor(np.random.default_rng(0).integers(0, 4, (4, 3))), core.rand(4)
    labels = (core.rand(4, 3) > 0.5).float()
    w = core.rand(3)
    pairs = [
        (nn.TripletMarginLoss(margin=0.5, p=1.0, swap=True)(a, p, n),
         F.triplet_margin_loss(a, p, n, margin=0.5, p=1.0, swap=True)),
        (nn.PoissonNLLLoss(log_input=False, full=True, reduction="sum")(rate, counts.float()),
         F.poisson_nll_loss(rate, counts.float(), log_input=False, full=True, reduction="sum")),
        (nn.GaussianNLLLoss(full=True, eps=0.1)(a, p, var), F.gaussian_nll_loss(a, p, var, full=True, eps=0.1)),
        (nn.MultiLabelSoftMarginLoss(weight=w, reduction="none")(a, labels),
         F.multilabel_soft_margin_loss(a, labels, weight=w, reduction="none")),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-6)
    assert list(nn.MultiLabelSoftMarginLoss(weight=w).state_dict()) == ["weight"]
    with pytest.raises(TypeError):
        nn.GaussianNLLLoss(True)  # keyword-only, as torch
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        assert nn.PoissonNLLLoss(size_average=False).reduction == "sum"
