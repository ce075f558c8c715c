"""pad, interpolate, unfold/fold, pixel_shuffle, distances, normalize, one_hot."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OPS = ("pad", "interpolate", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "cosine_similarity",
       "pairwise_distance", "normalize", "one_hot")


@pytest.mark.parametrize("op,case", [(op, c) for op in OPS for c in case_names(op)])
def test_matches_torch(op, case):
    check_case(op, case, atol=1e-5, rtol=1e-4)


def _t(*shape, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=grad)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode):
    assert gradcheck(lambda a: F.pad(a, (2, 1, 1, 2), mode=mode), (_t(1, 2, 3, 4),))


def test_pad_negative_crops_and_gradgradcheck():
    x = _t(2, 5)
    np.testing.assert_array_equal(F.pad(x, (-1, -2)).detach().numpy(), x.detach().numpy()[:, 1:3])
    assert gradgradcheck(lambda a: F.pad(a, (1, -1), value=2.0), (x,))


@pytest.mark.parametrize("kwargs", [
    {"size": (5, 3)}, {"scale_factor": 1.5, "mode": "bilinear"},
    {"size": (3, 7), "mode": "bilinear", "align_corners": True}, {"size": (2, 2), "mode": "area"},
])
def test_interpolate_gradcheck(kwargs):
    assert gradcheck(lambda a: F.interpolate(a, **kwargs), (_t(1, 2, 4, 5),))


def test_unfold_and_fold_are_adjoint():
    x, y = _t(2, 3, 6, 5, grad=False), _t(2, 3 * 6, 4 * 2, seed=1, grad=False)
    kwargs = {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": 2}
    lhs = (F.unfold(x, **kwargs) * y).sum().item()
    rhs = (x * F.fold(y, (6, 5), **kwargs)).sum().item()
    assert np.isclose(lhs, rhs)
    assert gradgradcheck(lambda a: F.unfold(a, **kwargs), (_t(1, 2, 6, 5),))


def test_pixel_shuffle_round_trip():
    x = core.randn(2, 8, 3, 4)
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).numpy(), x.numpy())


def test_distance_gradcheck_with_broadcasting():
    a, b = _t(3, 1, 4), _t(1, 2, 4, seed=1)
    assert gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=-1), (a, b))
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y, p=3.0), (a, b))
    assert gradcheck(lambda x: F.normalize(x, dim=-1), (a,))
    assert gradgradcheck(lambda x, y: F.cosine_similarity(x, y, dim=-1), (a, b))


def test_one_hot_errors():
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(core.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(core.tensor([1, 5]), 3)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."):
        F.one_hot(core.tensor([1.0, 2.0]), 3)


def test_vision_errors():
    x = core.randn(1, 1, 3)
    with pytest.raises(RuntimeError, match="Padding size should be less than the corresponding input dimension"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=4, scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(x, size=4, align_corners=True)
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match the calculated number"):
        F.fold(core.randn(1, 4, 5), (3, 3), 2)


def test_fold_and_pixel_shuffle_gradcheck():
    assert gradcheck(lambda a: F.fold(a, (4, 5), 2, padding=1, stride=(2, 1)), (_t(1, 8, 18),))
    assert gradcheck(lambda a: F.pixel_shuffle(a, 2), (_t(1, 8, 2, 3),))
    assert gradcheck(lambda a: F.pixel_unshuffle(a, 2), (_t(1, 2, 4, 2),))
