"""Reductions against torch's values (fixtures)."""
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.parametrize("name", op_case_names("reduction"))
def test_matches_torch(name):
    check_op_case(name, rtol=1e-5)


def test_max_with_dim_returns_named_pair():
    x = core.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    out = x.max(1)
    values, indices = out
    assert out.values is values and out.indices is indices
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype is core.int64 and not indices.requires_grad


def test_keepdim_shapes():
    x = core.ones(2, 3, 4)
    assert x.sum((0, 2), keepdim=True).shape == (1, 3, 1)
    assert x.mean(-1, keepdim=True).shape == (2, 3, 1)
    assert x.amax(1, keepdim=True).shape == (2, 1, 4)
    assert x.argmax(2, keepdim=True).shape == (2, 3, 1)
    assert x.max(0, keepdim=True).values.shape == (1, 3, 4)
    assert x.all(1, keepdim=True).shape == (2, 1, 4)
    assert x.sum(dim=[]).shape == ()


def test_sum_of_ints_and_bools_is_int64():
    assert core.tensor([True, True, False]).sum().item() == 2
    assert core.tensor([True, True]).sum().dtype is core.int64
    assert core.tensor([1, 2], dtype=core.int8).sum().dtype is core.int64


def test_empty_reductions():
    assert core.zeros(0).sum().item() == 0.0
    assert core.zeros(0, dtype=core.bool).all().item() is True
    assert core.zeros(0, dtype=core.bool).any().item() is False
    with pytest.raises(IndexError, match="Expected reduction dim"):
        core.zeros(0, 3).max(0)


def test_axis_is_an_alias_of_dim():
    x = core.arange(12.0).reshape(3, 4)
    assert core.equal(core.mean(x, axis=0), core.mean(x, dim=0))
    assert core.equal(x.sum(axis=1), x.sum(dim=1))
    assert core.equal(core.cat([x, x], axis=1), core.cat([x, x], dim=1))
