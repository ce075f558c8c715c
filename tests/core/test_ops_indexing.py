"""Indexing: getitem/gather/scatter/... against torch's values (fixtures); __setitem__."""
import numpy as np
import pytest

from mindnlp import core
from tests.core.torch_fixtures import check_op_case, op_case_names


@pytest.mark.parametrize("name", op_case_names("indexing"))
def test_matches_torch(name):
    check_op_case(name)


def _ref():
    return np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("key", [
    1, -1, (0, 2), (slice(None), 1), (Ellipsis, 0), (0, slice(1, None), slice(None, None, 2)), (None, 1),
])
def test_setitem_basic(key):
    x, want = core.tensor(_ref()), _ref()
    x[key] = -1.0
    want[key] = -1.0
    np.testing.assert_array_equal(x.numpy(), want)


def test_setitem_tensor_value_broadcast_and_cast():
    x, want = core.tensor(_ref()), _ref()
    x[:, 1] = core.tensor([1, 2, 3, 4])  # int values cast to the float tensor
    want[:, 1] = [1, 2, 3, 4]
    np.testing.assert_array_equal(x.numpy(), want)
    assert x.dtype is core.float32


def test_setitem_advanced_and_bool():
    x, want = core.tensor(_ref()), _ref()
    idx = np.array([1, 0, 1])
    x[core.tensor(idx), 0] = 5.0
    want[idx, 0] = 5.0
    x[x > 20] = 0.0
    want[want > 20] = 0.0
    x[[0, 1], :, [3, 2]] = core.tensor([7.0, 8.0, 9.0])
    want[[0, 1], :, [3, 2]] = [7.0, 8.0, 9.0]
    mask = np.array([True, False, True])
    x[:, core.tensor(mask)] = core.tensor([[1.0], [2.0]]).unsqueeze(1)
    want[:, mask] = np.array([[1.0], [2.0]])[:, None]
    np.testing.assert_array_equal(x.numpy(), want)


def test_setitem_bumps_version_and_shows_through_views():
    x = core.zeros(2, 3)
    view = x[1]
    v = x._version[0]
    x[1, 2] = 4.0
    assert view.tolist() == [0.0, 0.0, 4.0] and x._version[0] == v + 1


def test_setitem_out_of_bounds():
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        core.zeros(3)[3] = 1.0


def test_setitem_backward_to_base_and_value():
    x = core.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = core.tensor([10.0, 20.0], requires_grad=True)
    y = x * 2
    y[1:3] = v * v
    (y * core.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 0.0, 0.0, 8.0])
    np.testing.assert_allclose(v.grad.numpy(), [2 * 10.0 * 2.0, 2 * 20.0 * 3.0])


def test_setitem_backward_advanced_and_bool_keys():
    x = core.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    s = core.tensor(3.0, requires_grad=True)
    y = x.clone()
    y[core.tensor([0, 3])] = s
    y[core.tensor([False, True, False, False])] = 0.0
    (y * core.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 3.0, 0.0])
    assert s.grad.item() == 5.0  # the scalar was broadcast into two slots


def test_setitem_into_constant_makes_it_require_grad():
    w = core.tensor([2.0], requires_grad=True)
    buf = core.zeros(3)
    buf[1] = w * 3
    assert buf.requires_grad
    buf.sum().backward()
    assert w.grad.tolist() == [3.0]


def test_setitem_on_leaf_requiring_grad_raises():
    w = core.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        w[0] = 2.0
    with core.no_grad():
        w[0] = 2.0
    assert w.tolist() == [2.0, 1.0, 1.0]


def test_getitem_repeated_index_accumulates_grad():
    x = core.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[core.tensor([0, 0, 2, 0])].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_index_with_list_of_tensor_ints_and_index_dunder():
    x = core.arange(5)
    assert x[core.tensor(2)].item() == 2
    assert x[[core.tensor(1), core.tensor(3)]].tolist() == [1, 3]
    assert [10, 20, 30][core.tensor(1)] == 20


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_scatter_add_accumulates_duplicates_and_negative_rows(dtype):
    """index_add along dim 0 and the gradient of x[rows] (compiled row loop) against np.add.at."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((7, 3, 2)).astype(dtype)
    rows = np.array([1, 6, 1, -1, 0, 1])
    values = rng.standard_normal((6, 3, 2)).astype(dtype)
    expected = base.copy()
    np.add.at(expected, (rows,), values)
    out = core.index_add(core.tensor(base), 0, core.tensor(rows % 7), core.tensor(values))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    x = core.tensor(base, requires_grad=True)
    (x[core.tensor(rows)] * core.tensor(values)).sum().backward()
    grad = np.zeros_like(base)
    np.add.at(grad, (rows,), values)
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-6)


def test_row_scatter_add_rejects_rows_out_of_range():
    with pytest.raises(IndexError):
        core.index_add(core.zeros(3, 2), 0, core.tensor([0, 3]), core.ones(2, 2))
