"""The autograd engine: backward options, higher order, hooks, grad modes, custom Functions,
the version counter, and that graphs neither recurse too deep nor leak."""
import gc
import weakref

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import autograd, func

SECOND_BACKWARD = "Trying to backward through the graph a second time"


def leaf(*values):
    return core.tensor(list(values), requires_grad=True)


def test_backward_with_gradient_argument():
    x = leaf(1.0, 2.0)
    (x * x).backward(gradient=core.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 40.0]


def test_non_scalar_backward_needs_gradient():
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (leaf(1.0, 2.0) * 2).backward()


def test_second_backward_needs_retain_graph():
    x = leaf(1.0, 2.0)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp([1.0, 2.0]), rtol=1e-6)
    with pytest.raises(RuntimeError, match=SECOND_BACKWARD):
        y.backward()


def test_gradients_accumulate_across_calls():
    x = leaf(1.0, 2.0)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_shared_subexpression_sums_paths():
    x = leaf(3.0)
    y = x * x
    (y + y * x).backward()  # d/dx (x^2 + x^3) = 2x + 3x^2
    assert x.grad.tolist() == [6.0 + 27.0]


def test_higher_order_through_autograd_grad():
    x = core.tensor(2.0, requires_grad=True)
    (g1,) = autograd.grad(x ** 3, x, create_graph=True)
    (g2,) = autograd.grad(g1, x, create_graph=True)
    (g3,) = autograd.grad(g2, x)
    assert (g1.item(), g2.item(), g3.item()) == (12.0, 12.0, 6.0)
    assert g1.requires_grad and not g3.requires_grad


def test_higher_order_through_func_grad():
    def cube(x):
        return x ** 3

    x = core.tensor(2.0)
    assert func.grad(cube)(x).item() == 12.0
    assert func.grad(func.grad(cube))(x).item() == 12.0
    assert func.grad(func.grad(func.grad(cube)))(x).item() == 6.0
    assert not func.grad(cube)(x).requires_grad


def test_create_graph_backward_leaves_differentiable_grad():
    x = core.tensor(2.0, requires_grad=True)
    (x ** 3).backward(create_graph=True)
    g = x.grad
    assert g.item() == 12.0 and g.requires_grad
    (g2,) = autograd.grad(g, x)
    assert g2.item() == 12.0


def test_value_and_grad_with_aux_and_argnums():
    def loss(w, b, x):
        pred = x @ w + b
        return (pred * pred).sum(), pred

    w, b, x = core.tensor([1.0, 2.0]), core.tensor(0.5), core.tensor([[1.0, 1.0], [2.0, 0.0]])
    (value, aux), (gw, gb) = func.value_and_grad(loss, argnums=(0, 1), has_aux=True)(w, b, x)
    pred = np.array([3.5, 2.5])
    assert value.item() == float((pred ** 2).sum())
    np.testing.assert_allclose(aux.numpy(), pred)
    np.testing.assert_allclose(gw.numpy(), 2 * pred @ np.array([[1.0, 1.0], [2.0, 0.0]]))
    assert gb.item() == float(2 * pred.sum())
    grads, aux2 = func.grad(loss, argnums=(0, 1), has_aux=True)(w, b, x)
    np.testing.assert_allclose(grads[0].numpy(), gw.numpy())
    value_only, g_single = func.value_and_grad(lambda t: (t * t).sum())(w)
    assert value_only.item() == 5.0 and g_single.tolist() == [2.0, 4.0]


def test_retain_grad_on_non_leaf():
    x = leaf(1.0, 2.0)
    h = x * 2
    h.retain_grad()
    assert h.retains_grad
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 8.0] and x.grad.tolist() == [8.0, 16.0]
    plain = x * 3
    assert plain.grad is None and not plain.retains_grad


def test_hooks_on_leaf_and_non_leaf():
    x = leaf(1.0, 2.0)
    seen = []
    handle = x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 1).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0] and seen == [[10.0, 10.0]]
    handle.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]

    x = leaf(1.0, 2.0)
    h = x * 2
    h.register_hook(lambda g: g + 1)
    (h * 3).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        core.ones(2).register_hook(lambda g: g)


def test_grad_modes():
    x = leaf(1.0)
    with core.no_grad():
        assert not (x * 2).requires_grad and not core.is_grad_enabled()
        with core.enable_grad():
            assert (x * 2).requires_grad
    with core.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert core.is_grad_enabled()
    core.set_grad_enabled(False)
    assert not core.is_grad_enabled()
    core.set_grad_enabled(True)
    with core.inference_mode():
        assert not (x * 2).requires_grad
    with core.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_modes_as_decorators():
    x = leaf(1.0)

    @core.no_grad()
    def doubled(t):
        return t * 2

    @core.enable_grad()
    def tripled(t):
        return t * 3

    @core.set_grad_enabled(False)
    def quadrupled(t):
        return t * 4

    @core.inference_mode()
    def halved(t):
        return t / 2

    assert not doubled(x).requires_grad and not quadrupled(x).requires_grad and not halved(x).requires_grad
    with core.no_grad():
        assert tripled(x).requires_grad
    assert core.is_grad_enabled()


def test_detach_cuts_history():
    x = leaf(1.0, 2.0)
    y = (x * 2).detach()
    assert not y.requires_grad and y.grad_fn is None
    z = (x * 2).detach().requires_grad_()
    (z * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0] and z.grad.tolist() == [1.0, 2.0]


def test_nothing_recorded_without_requires_grad():
    a, b = core.ones(2), core.ones(2)
    out = (a * b).exp().sum()
    assert out.grad_fn is None and not out.requires_grad and out.is_leaf


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        core.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        core.ones(2, dtype=core.int64, requires_grad=True)
    x = leaf(1.5, 2.5)
    assert not x.long().requires_grad and not (x > 2).requires_grad and not x.argmax().requires_grad


def test_grad_flows_back_through_casts_in_the_input_dtype():
    x = leaf(1.0, 2.0)
    (x.double() * 3).sum().backward()
    assert x.grad.dtype is core.float32 and x.grad.tolist() == [3.0, 3.0]


# --- custom Functions --------------------------------------------------------------------


class ScaledMul(autograd.Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        ctx.seen_needs = ctx.needs_input_grad
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (grad * b * ctx.scale if ctx.needs_input_grad[0] else None,
                grad * a * ctx.scale if ctx.needs_input_grad[1] else None, None)


def test_custom_function_save_for_backward_and_needs_input_grad():
    a, b = leaf(1.0, 2.0), core.tensor([3.0, 4.0])
    out = ScaledMul.apply(a, b, 2.0)
    assert out.grad_fn.seen_needs == (True, False, False)
    assert repr(out.grad_fn) == "<ScaledMulBackward>"
    out.sum().backward()
    assert a.grad.tolist() == [6.0, 8.0] and b.grad is None


class SplitWithIndex(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        order = core.tensor([1, 0])
        ctx.mark_non_differentiable(order)
        return x * 2, x * 3, order

    @staticmethod
    def backward(ctx, g_double, g_triple, g_order):
        return g_double * 2 + g_triple * 3


def test_custom_function_multiple_outputs_and_non_differentiable():
    x = leaf(1.0, 2.0)
    double, triple, order = SplitWithIndex.apply(x)
    assert double.requires_grad and triple.requires_grad and not order.requires_grad
    (double.sum() + 10 * triple.sum()).backward()
    assert x.grad.tolist() == [32.0, 32.0]
    x.grad = None
    double, _, _ = SplitWithIndex.apply(x)
    double.sum().backward()  # the unused output's gradient arrives as zeros
    assert x.grad.tolist() == [2.0, 2.0]


class Cube(autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


def test_custom_function_is_twice_differentiable():
    x = core.tensor(2.0, requires_grad=True)
    (g,) = autograd.grad(Cube.apply(x), x, create_graph=True)
    (gg,) = autograd.grad(g, x)
    assert (g.item(), gg.item()) == (12.0, 12.0)


def test_custom_function_wrong_number_of_grads():
    class Bad(autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(RuntimeError, match="returned 1 gradients, expected 2"):
        Bad.apply(leaf(1.0), leaf(2.0)).sum().backward()


# --- autograd.grad ------------------------------------------------------------------------


def test_grad_allow_unused_and_non_leaf_inputs():
    x, unused = leaf(1.0, 2.0), leaf(5.0)
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0, 2.0] and gu is None
    h = x * 2
    (gh,) = autograd.grad((h * h).sum(), h)
    assert gh.tolist() == [4.0, 8.0]
    assert x.grad is None  # grad() does not accumulate
    (gm,) = autograd.grad((x * 2).sum(), unused, allow_unused=True, materialize_grads=True)
    assert gm.tolist() == [0.0]


def test_grad_with_grad_outputs_and_several_outputs():
    x = leaf(1.0, 2.0)
    gx, = autograd.grad([x * 2, x * x], x, grad_outputs=[core.tensor([1.0, 1.0]), core.tensor([1.0, 0.5])])
    assert gx.tolist() == [4.0, 4.0]


# --- version counter ----------------------------------------------------------------------

MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def test_modified_saved_output_raises():
    x = leaf(1.0, 2.0)
    y = x.exp()  # exp saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()


def test_modified_saved_input_raises():
    x = leaf(1.0, 2.0)
    h = x * 2
    out = h * h
    h.mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.sum().backward()


def test_modified_through_a_view_raises():
    x = leaf(1.0, 2.0)
    h = x * 2
    out = h.sin()  # sin saves its input
    h[0:1].mul_(2)
    with pytest.raises(RuntimeError, match=MODIFIED):
        out.sum().backward()


def test_modifying_unsaved_tensors_is_allowed():
    # As in torch: add saves nothing, exp's input is not saved, mul by a constant does not save
    # the factor that requires grad.
    x = leaf(1.0, 2.0)
    h = x * 2
    out = (h + 1).sum() + h.exp().sum() + (h * core.tensor([3.0, 4.0])).sum()
    h.add_(1)
    out.backward()
    expected = 2 * (1 + np.exp([2.0, 4.0]) + [3.0, 4.0])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


# --- scale and memory ---------------------------------------------------------------------


def test_deep_graph_has_no_recursion_limit():
    x = core.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1
    y.backward()
    assert x.grad.item() == 1.0


def test_intermediates_are_freed_after_backward():
    x = core.ones(64, requires_grad=True)
    for _ in range(3):
        hidden = (x * 2).tanh()
        ref = weakref.ref(hidden)
        loss = (hidden * hidden).exp().sum()
        del hidden
        assert ref() is not None  # the graph holds it until backward
        loss.backward()
        del loss
        assert ref() is None  # freed by reference counting alone, with no cycle left for the GC


def test_training_loop_does_not_grow_live_tensors():
    w = core.ones(8, requires_grad=True)

    def step():
        loss = ((w * core.arange(8.0)).sigmoid() ** 2).mean()
        loss.backward()
        with core.no_grad():
            w.sub_(w.grad * 0.1)
        w.grad = None

    def live_tensors():
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, core.Tensor))

    step()
    before = live_tensors()
    for _ in range(20):
        step()
    assert live_tensors() <= before


# --- in-place ops through views rewrite the base's history ---------------------------------

def _scale_column_through_view(x):
    y = x * 1.0
    y[:, 1].mul_(3.0)                         # through a basic-indexing view
    y.t()[2].add_(x[:, 0] ** 2)               # through a view of a transposed view
    return (y * y).sum()


def _scale_column_out_of_place(x):
    y = x * 1.0
    scale = core.tensor([1.0, 3.0, 1.0, 1.0], dtype=x.dtype)
    y = y * scale
    extra = core.zeros_like(y)
    extra[:, 2] = x[:, 0] ** 2
    return ((y + extra) ** 2).sum()


def test_inplace_op_on_a_view_reaches_the_base_gradient():
    data = np.random.default_rng(0).standard_normal((3, 4))
    x1 = core.tensor(data, requires_grad=True)
    x2 = core.tensor(data, requires_grad=True)
    _scale_column_through_view(x1).backward()
    _scale_column_out_of_place(x2).backward()
    np.testing.assert_allclose(x1.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    x3 = core.tensor(data, dtype=core.float64, requires_grad=True)
    assert core.autograd.gradcheck(_scale_column_through_view, (x3,))


def test_inplace_op_on_a_view_of_a_constant_gives_the_base_a_history():
    w = core.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buffer = core.zeros(3, 4)
    buffer[:, 1].add_(w * 2.0)
    buffer.view(-1)[::4].mul_(w)              # column 0 (zeros) times w: no gradient left
    (buffer * core.arange(12.0).reshape(3, 4)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2.0 * np.array([1.0, 5.0, 9.0]))


def test_inplace_op_on_a_view_of_a_leaf_is_refused():
    x = core.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x[0].mul_(2.0)
    with core.no_grad():
        x[0].mul_(2.0)                        # allowed outside autograd, as in torch
    assert x.sum().item() == 9.0
