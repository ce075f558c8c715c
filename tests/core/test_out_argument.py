"""torch's `out=`: the result lands in the given tensor, which is returned; autograd refuses it.

Expected behaviour checked against torch 2.13."""
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.nn import functional as F

NO_AUTOGRAD = r"functions with out=\.\.\. arguments don't support automatic differentiation"


def fresh(*shape, dtype=core.float32):
    return core.full(shape, -7, dtype=dtype)


@pytest.mark.parametrize("call, expected", [
    (lambda o: core.add(core.ones(2), core.ones(2), out=o), [2.0, 2.0]),
    (lambda o: core.add(core.ones(2), 1, alpha=3, out=o), [4.0, 4.0]),
    (lambda o: core.sub(core.ones(2), core.ones(2), alpha=2, out=o), [-1.0, -1.0]),
    (lambda o: core.mul(core.ones(2), 2, out=o), [2.0, 2.0]),
    (lambda o: core.div(core.tensor([3.0, 6.0]), 3, out=o), [1.0, 2.0]),
    (lambda o: core.exp(core.zeros(2), out=o), [1.0, 1.0]),
    (lambda o: core.sqrt(core.tensor([4.0, 9.0]), out=o), [2.0, 3.0]),
    (lambda o: core.clamp(core.tensor([3.0, -1.0]), 0, 2, out=o), [2.0, 0.0]),
    (lambda o: core.eq(core.tensor([1.0, 2.0]), core.tensor([1.0, 3.0]), out=o), [1.0, 0.0]),
    (lambda o: core.logical_and(core.tensor([True, True]), core.tensor([True, False]), out=o), [1.0, 0.0]),
    (lambda o: core.logical_not(core.tensor([True, False]), out=o), [0.0, 1.0]),
    (lambda o: core.matmul(core.ones(2, 3), core.ones(3), out=o), [3.0, 3.0]),
    (lambda o: core.sum(core.ones(2, 3), 1, out=o), [3.0, 3.0]),
    (lambda o: core.mean(core.tensor([[1.0, 3.0], [2.0, 4.0]]), 1, out=o), [2.0, 3.0]),
    (lambda o: core.cat([core.ones(1), core.zeros(1)], out=o), [1.0, 0.0]),
    (lambda o: core.stack([core.ones(()), core.zeros(())], out=o), [1.0, 0.0]),
    (lambda o: F.normalize(core.tensor([[3.0, 4.0]]), dim=1, out=o.view(1, 2)).view(2), [0.6, 0.8]),
])
def test_result_is_written_into_out_and_out_returned(call, expected):
    out = fresh(2)
    result = call(out)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert result is out or result._data.base is out._data


def test_out_keeps_its_memory_so_views_see_the_result():
    base = core.zeros(4)
    view = base[:2]
    core.add(core.ones(2), core.ones(2), out=view)
    assert base.tolist() == [2.0, 2.0, 0.0, 0.0]
    assert view._version[0] == 1


def test_version_counter_is_bumped():
    out = core.zeros(2)
    before = out._version[0]
    core.add(core.ones(2), core.ones(2), out=out)
    assert out._version[0] == before + 1


def test_autograd_refuses_out_unless_grad_is_off():
    a = core.ones(2, requires_grad=True)
    out = core.empty(2)
    for call in (lambda: core.add(a, core.ones(2), out=out), lambda: core.exp(a, out=out),
                 lambda: core.cat([a, core.ones(2)], out=core.empty(4)),
                 lambda: core.max(a, 0, out=(core.empty(()), core.empty((), dtype=core.int64))),
                 lambda: core.add(core.ones(2), core.ones(2), out=core.empty(2, requires_grad=True))):
        with pytest.raises(RuntimeError, match=NO_AUTOGRAD):
            call()
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out="):
        core.add(a, a, out=out)
    with core.no_grad():
        assert core.add(a, a, out=out) is out
    assert out.tolist() == [2.0, 2.0] and out.grad_fn is None


def test_out_dtype_follows_the_same_kind_rule():
    ints = core.empty(2, dtype=core.int64)
    core.add(core.tensor([1, 2]), core.tensor([1, 2]), out=ints)
    assert ints.tolist() == [2, 4]
    floats = core.empty(2)
    core.add(core.tensor([1, 2]), core.tensor([1, 2]), out=floats)
    assert floats.dtype == core.float32 and floats.tolist() == [2.0, 4.0]
    doubles = core.empty(2, dtype=core.float64)
    core.add(core.tensor([1.5, 2.0]), core.tensor([1.0, 2.0]), out=doubles)
    assert doubles.tolist() == [2.5, 4.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        core.add(core.ones(2), core.ones(2), out=core.empty(2, dtype=core.int64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        core.div(core.tensor([5, 3]), 2, out=core.empty(2, dtype=core.int64))
    assert core.div(core.tensor([5, 3]), 2, rounding_mode="floor", out=ints).tolist() == [2, 1]


def test_out_of_another_shape_is_resized():
    out = core.empty(3)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[3\], "
                                         r"which does not match the required output shape \[2\]"):
        core.add(core.ones(2), core.ones(2), out=out)
    assert out.shape == (2,) and out.tolist() == [2.0, 2.0]
    empty = core.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        core.add(core.ones(2, 2), 1, out=empty)          # an empty out is resized silently
    assert empty.shape == (2, 2)


def test_ops_with_two_results_take_a_pair():
    values, indices = core.empty(3), core.empty(3, dtype=core.int64)
    result = core.sort(core.tensor([3.0, 1.0, 2.0]), out=(values, indices))
    assert result.values is values and result.indices is indices
    assert values.tolist() == [1.0, 2.0, 3.0] and indices.tolist() == [1, 2, 0]
    top = core.topk(core.tensor([3.0, 1.0, 2.0]), 2, out=(core.empty(2), core.empty(2, dtype=core.int64)))
    assert top.values.tolist() == [3.0, 2.0] and top.indices.tolist() == [0, 2]
    best = core.max(core.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(core.empty(2), core.empty(2, dtype=core.int64)))
    assert best.values.tolist() == [5.0, 7.0] and best.indices.tolist() == [1, 0]
    with pytest.raises(TypeError, match="must be a tuple of 2 Tensors"):
        core.sort(core.tensor([3.0, 1.0]), out=core.empty(2))


def test_full_reductions_norm_and_tensordot():
    out = core.empty(())
    assert core.max(core.tensor([3.0, 1.0, 2.0]), out=out) is out and out.item() == 3.0
    assert core.norm(core.tensor([3.0, 4.0]), out=out).item() == 5.0
    product = core.tensordot(core.ones(2, 3), core.ones(3, 2), dims=1, out=core.empty(2, 2))
    assert product.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_factories_fill_out_in_its_dtype():
    ints = core.empty(2, dtype=core.int64)
    assert core.zeros(2, 3, out=ints) is ints and ints.shape == (2, 3) and ints.dtype == core.int64
    assert core.ones(2, out=ints).tolist() == [1, 1]
    assert core.full((2,), 7, out=ints).tolist() == [7, 7]
    assert core.arange(5, out=core.empty(1)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert core.arange(5, out=ints).tolist() == [0, 1, 2, 3, 4]
    assert core.linspace(0, 1, 3, out=core.empty(3)).tolist() == [0.0, 0.5, 1.0]
    assert core.eye(2, out=core.empty(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert core.empty(4, out=ints).shape == (4,)
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Long\)"):
        core.zeros(2, dtype=core.float32, out=ints)


def test_random_factories_fill_out():
    out = core.empty(2)
    assert core.rand(2, out=out) is out
    assert core.randn(3, out=out).shape == (3,)
    core.manual_seed(0)
    drawn = core.rand(4)
    core.manual_seed(0)
    assert core.rand(4, out=out).tolist() == drawn.tolist()
