"""ctx.mark_dirty in custom autograd Functions, with torch's guarantees (checked against torch 2.13)."""
import pytest

from mindnlp import core
from mindnlp.core import autograd


class AddOneInPlace(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class SquareInPlace(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(x)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * 2 * y.sqrt()


class ReturnsACopy(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad


class TwoOutputs(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x, x * 2

    @staticmethod
    def backward(ctx, grad_x, grad_double):
        return grad_x + 2 * grad_double


def test_the_dirty_input_is_returned_with_the_node_as_its_history():
    a = core.ones(2, requires_grad=True)
    b = a * 3
    version = b._version[0]
    c = AddOneInPlace.apply(b)
    assert c is b
    assert b._version[0] - version == 2                       # the add_ and mark_dirty, as in torch
    assert b.grad_fn.name() == "AddOneInPlaceBackward"
    assert b.grad_fn.next_functions[0][0].name() == "MulBackward0"
    assert b.tolist() == [4.0, 4.0]
    c.sum().backward()
    assert a.grad.tolist() == [6.0, 6.0]


def test_a_saved_dirty_tensor_is_saved_at_its_new_version():
    a = core.tensor([2.0, 3.0], requires_grad=True)
    SquareInPlace.apply(a * 1).sum().backward()
    assert a.grad.tolist() == [4.0, 6.0]


def test_leaves_that_require_grad_are_refused_while_recording():
    a = core.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place"):
        AddOneInPlace.apply(a)
    with core.no_grad():
        out = AddOneInPlace.apply(a)
    assert out is not a and not out.requires_grad and a.requires_grad   # a detached alias, as torch returns


def test_without_grad_the_input_itself_comes_back():
    x = core.ones(2)
    version = x._version[0]
    assert AddOneInPlace.apply(x) is x and x._version[0] - version == 2


def test_dirty_inputs_must_be_returned():
    message = "Some elements marked as dirty during the forward method were not returned as output"
    with pytest.raises(RuntimeError, match=message):
        ReturnsACopy.apply(core.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError, match=message):
        ReturnsACopy.apply(core.ones(2))


def test_a_dirty_view_rewrites_its_base_history():
    leaf = core.zeros(4, requires_grad=True)
    base = leaf * 1
    view = base[:2]
    assert AddOneInPlace.apply(view) is view
    assert base.tolist() == [1.0, 1.0, 0.0, 0.0]
    base.sum().backward()
    assert leaf.grad.tolist() == [2.0, 2.0, 1.0, 1.0]


def test_a_dirty_view_allows_a_single_output_only():
    with pytest.raises(RuntimeError, match="modifies inplace an input that is a view of another Tensor"):
        TwoOutputs.apply((core.zeros(4, requires_grad=True) * 1)[:2])
    leaf = core.zeros(4, requires_grad=True)
    first, double = TwoOutputs.apply(leaf * 1)
    assert first.tolist() == [1.0] * 4 and double.tolist() == [2.0] * 4
    (first.sum() + double.sum()).backward()
    assert leaf.grad.tolist() == [3.0] * 4


def test_marking_a_tensor_that_is_no_input_warns():
    class MarksOutput(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with pytest.warns(UserWarning, match="Only input Tensors should be given to ctx.mark_dirty"):
        MarksOutput.apply(core.ones(2))
