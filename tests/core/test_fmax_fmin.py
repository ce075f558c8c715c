"""fmax/fmin: NaN-ignoring maximum/minimum with torch's gradient routing (checked against torch 2.13)."""
import math

import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck

NAN = float("nan")


def same(values, expected):
    return all((math.isnan(v) and math.isnan(e)) or v == e for v, e in zip(values, expected))


def test_nan_is_ignored_unless_both_are_nan():
    a = core.tensor([1.0, NAN, NAN, 2.0, 3.0])
    b = core.tensor([NAN, 1.0, NAN, 2.0, 1.0])
    assert same(core.fmax(a, b).tolist(), [1.0, 1.0, NAN, 2.0, 3.0])
    assert same(core.fmin(a, b).tolist(), [1.0, 1.0, NAN, 2.0, 1.0])
    assert same(core.maximum(a, b).tolist(), [NAN, NAN, NAN, 2.0, 3.0])     # maximum propagates NaN
    assert same(a.fmax(b).tolist(), [1.0, 1.0, NAN, 2.0, 3.0])


def test_gradient_goes_to_input_on_ties_and_where_other_is_nan():
    a = core.tensor([1.0, NAN, NAN, 2.0, 3.0], requires_grad=True)
    b = core.tensor([NAN, 1.0, NAN, 2.0, 1.0], requires_grad=True)
    weights = core.tensor([1.0, 2.0, 3.0, 4.0, 5.0])
    y = core.fmax(a, b)
    assert y.grad_fn.name() == "FmaxBackward0"
    y.backward(weights)
    assert a.grad.tolist() == [1.0, 0.0, 3.0, 4.0, 5.0] and b.grad.tolist() == [0.0, 2.0, 0.0, 0.0, 0.0]
    a.grad = b.grad = None
    core.fmin(a, b).backward(weights)
    assert a.grad.tolist() == [1.0, 0.0, 3.0, 4.0, 0.0] and b.grad.tolist() == [0.0, 2.0, 0.0, 0.0, 5.0]


def test_gradcheck_with_nan_in_one_operand_and_broadcasting():
    a = core.tensor([[0.3, NAN, -0.2], [NAN, 0.9, 0.1]], dtype=core.float64, requires_grad=True)
    b = core.tensor([0.5, -0.4, NAN], dtype=core.float64, requires_grad=True)
    assert gradcheck(core.fmax, (a, b))
    assert gradcheck(core.fmin, (a, b))


def test_dtypes_follow_promotion():
    assert core.fmax(core.tensor([1, 5]), core.tensor([3, 2])).tolist() == [3, 5]
    mixed = core.fmax(core.tensor([1, 5]), core.tensor([3.0, 2.0]))
    assert mixed.dtype == core.float32 and mixed.tolist() == [3.0, 5.0]
    assert core.fmax(core.tensor([1.0, 2.0]), core.tensor(1.5, dtype=core.float64)).dtype == core.float32
    half = core.fmin(core.tensor([1.0, NAN], dtype=core.bfloat16), core.tensor([NAN, 0.5], dtype=core.bfloat16))
    assert half.dtype == core.bfloat16 and half.tolist() == [1.0, 0.5]


def test_operands_must_be_tensors():
    with pytest.raises(TypeError, match=r"fmax\(\): argument 'other' \(position 2\) must be Tensor, not float"):
        core.fmax(core.ones(2), 2.0)
