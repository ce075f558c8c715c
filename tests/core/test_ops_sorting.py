"""sort/argsort/topk/kthvalue, unique, searchsorted/bucketize, isin, bincount, histc:
values against torch (fixtures), gradients, gradcheck, errors."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck

from .extra_fixtures import case_names, check_case, check_case_grad, check_error_case, grad_case_names


@pytest.mark.parametrize("name", case_names("sorting"))
def test_matches_torch(name):
    check_case(name)


@pytest.mark.parametrize("name", grad_case_names("sorting"))
def test_gradient_matches_torch(name):
    check_case_grad(name)


@pytest.mark.parametrize("name", [
    "topk_k", "kthvalue_k", "kthvalue_zero", "sort_dim", "bincount_2d", "bincount_negative", "bincount_float",
    "histc_range", "histc_bins", "histc_int", "bucketize_2d", "searchsorted_shape", "searchsorted_side",
])
def test_error_matches_torch(name):
    check_error_case(name)


def _distinct(*shape, seed=0):
    """float64 values with gaps far wider than gradcheck's perturbation (the order cannot flip)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return core.tensor(rng.permutation(n).astype(np.float64).reshape(shape) * 0.1 + 0.01, requires_grad=True)


@pytest.mark.parametrize("fn", [
    lambda x: core.sort(x, 1).values,
    lambda x: x.sort(0, descending=True).values,
    lambda x: core.msort(x),
    lambda x: core.topk(x, 2).values,
    lambda x: x.topk(1, dim=0, largest=False).values,
    lambda x: core.kthvalue(x, 3, 1).values,
    lambda x: x.kthvalue(2, 0, keepdim=True).values,
], ids=["sort", "sort_descending", "msort", "topk", "topk_smallest", "kthvalue", "kthvalue_keepdim"])
def test_gradcheck(fn):
    assert gradcheck(fn, (_distinct(3, 5),))


def test_gradcheck_broadcast_operands():
    x, y = _distinct(3, 4, seed=1), core.tensor([1.0, 2.0, 3.0, 4.0], dtype=core.float64, requires_grad=True)
    assert gradcheck(lambda a, b: core.sort(a * b, 1).values, (x, y))
    assert gradcheck(lambda a, b: core.topk(a + b, 2, dim=0).values, (x, y))


def test_gradgradcheck_sort():
    assert gradgradcheck(lambda t: core.sort(t, 1).values * t, (_distinct(2, 3),))


def test_sort_gradient_routes_to_source_positions():
    x = core.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, _ = core.sort(x)
    (values * core.tensor([1.0, 10.0, 100.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [100.0, 1.0, 10.0])


def test_topk_on_vocabulary_sized_row_matches_full_sort():
    rng = np.random.default_rng(3)
    logits = core.tensor(rng.standard_normal((2, 5000)).astype(np.float32))
    values, indices = core.topk(logits, 10)
    full_values, full_indices = core.sort(logits, descending=True)
    np.testing.assert_array_equal(values.numpy(), full_values[:, :10].numpy())
    np.testing.assert_array_equal(indices.numpy(), full_indices[:, :10].numpy())


def test_zero_dim_input():
    s = core.tensor(2.5)
    values, indices = core.sort(s)
    assert values.item() == 2.5 and indices.item() == 0 and indices.dtype is core.int64
    assert core.topk(s, 1).values.item() == 2.5


def test_unique_returns_by_flags():
    x = core.tensor([3, 1, 3, 2])
    assert core.unique(x).tolist() == [1, 2, 3]
    values, inverse = core.unique(x, return_inverse=True)
    assert inverse.tolist() == [2, 0, 2, 1]
    values, counts = x.unique(return_counts=True)
    assert counts.tolist() == [1, 1, 2]


def test_unique_keeps_nans_distinct():
    x = core.tensor([float("nan"), 1.0, float("nan")])
    assert core.unique(x).shape == (3,)


def test_searchsorted_scalar_and_bucketize_agree():
    boundaries = core.tensor([1.0, 3.0, 5.0])
    values = core.tensor([0.0, 1.0, 2.0, 3.0, 6.0])
    np.testing.assert_array_equal(core.bucketize(values, boundaries).numpy(),
                                  core.searchsorted(boundaries, values).numpy())
    assert core.searchsorted(boundaries, 3.0, right=True).item() == 2


def test_bincount_and_histc_are_consistent():
    data = core.tensor([0, 1, 1, 3, 3, 3])
    counts = core.bincount(data)
    hist = core.histc(data.float(), bins=4, min=0, max=4)
    np.testing.assert_array_equal(counts.numpy(), hist.numpy().astype(np.int64))


@pytest.mark.parametrize("size", [1, 3, 16, 17, 40])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_equals_numpy_for_small_and_large_test_sets(size, invert):
    """Up to 16 test elements are compared directly, more go through NumPy's isin: both give
    NumPy's answer, NaN (never equal) included."""
    rng = np.random.default_rng(size)
    elements = rng.integers(0, 50, (4, 6))
    test = rng.integers(0, 50, size)
    got = core.isin(core.tensor(elements), core.tensor(test), invert=invert)
    assert got.dtype == core.bool and got.tolist() == np.isin(elements, test, invert=invert).tolist()
    floats = np.where(elements % 7 == 0, np.nan, elements).astype(np.float32)
    test_floats = np.append(test, np.nan).astype(np.float32)
    got = core.isin(core.tensor(floats), core.tensor(test_floats), invert=invert)
    assert got.tolist() == np.isin(floats, test_floats, invert=invert).tolist()
