"""nn.functional ops: numerical gradient checks, fused-vs-composed equivalence, dropout, embedding."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F


def _rand(*shape, seed=0, requires_grad=True, low=None, high=None):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)
    return core.tensor(data, dtype=core.float64, requires_grad=requires_grad)


def _away_from_kinks(x, kinks, margin=1e-2):
    """Move entries off the points where an activation is not differentiable."""
    data = x.detach().numpy().copy()
    for k in kinks:
        near = np.abs(data - k) < margin
        data[near] = k + 2 * margin
    return core.tensor(data, dtype=core.float64, requires_grad=True)


ACTIVATIONS = {
    "relu": (F.relu, [0.0]),
    "relu6": (F.relu6, [0.0, 6.0]),
    "gelu": (F.gelu, []),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), []),
    "silu": (F.silu, []),
    "mish": (F.mish, []),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), [0.0]),
    "elu": (lambda x: F.elu(x, 0.7), [0.0]),
    "celu": (lambda x: F.celu(x, 1.3), [0.0]),
    "selu": (F.selu, [0.0]),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=1.0), [0.5]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.8), [-0.5, 0.8]),
    "hardsigmoid": (F.hardsigmoid, [-3.0, 3.0]),
    "hardswish": (F.hardswish, [-3.0, 3.0]),
    "logsigmoid": (F.logsigmoid, []),
    "threshold": (lambda x: F.threshold(x, 0.1, -1.0), [0.1]),
    "softsign": (F.softsign, [0.0]),
    "tanhshrink": (F.tanhshrink, []),
    "sigmoid": (F.sigmoid, []),
    "tanh": (F.tanh, []),
    "glu": (lambda x: F.glu(x, dim=0), []),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_gradcheck(name):
    fn, kinks = ACTIVATIONS[name]
    x = _away_from_kinks(_rand(4, 3, low=-4.0, high=4.0) if name != "glu" else _rand(4, 3), kinks)
    assert gradcheck(fn, (x,))


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "mish", "elu", "softplus"])
def test_activation_second_derivative(name):
    fn, kinks = ACTIVATIONS[name]
    assert gradgradcheck(fn, (_away_from_kinks(_rand(3, 2, seed=1), kinks),))


@pytest.mark.parametrize("activation", ["silu", "gelu_tanh"])
def test_gated_product_gradcheck_and_second_derivative(activation):
    gate, up = _rand(4, 3, low=-4.0, high=4.0), _rand(4, 3, seed=1)
    fn = lambda g, u: F.gated_product(g, u, activation)   # noqa: E731
    assert gradcheck(fn, (gate, up))
    assert gradgradcheck(fn, (gate, up))


@pytest.mark.parametrize("activation", ["silu", "gelu_tanh"])
def test_gated_product_fused_matches_composed_float64(activation):
    """Large float32 inputs take the fused kernel; the float64 composed ops are the reference."""
    act = F.silu if activation == "silu" else (lambda t: F.gelu(t, approximate="tanh"))
    rng = np.random.default_rng(3)
    gate, up = (rng.standard_normal((64, 1031)) * 4).astype(np.float32), rng.standard_normal((64, 1031)).astype(np.float32)
    gate[0, :4] = [60.0, -60.0, 0.0, -0.0]
    weights = rng.standard_normal(gate.shape)
    results = []
    for dtype in (core.float32, core.float64):
        g, u = (core.tensor(a, dtype=dtype, requires_grad=True) for a in (gate, up))
        out = F.gated_product(g, u, activation)
        (out * core.tensor(weights, dtype=dtype)).sum().backward()
        results.append((out.detach().numpy(), g.grad.numpy(), u.grad.numpy()))
    expected = act(core.tensor(gate.astype(np.float64))) * core.tensor(up.astype(np.float64))
    np.testing.assert_allclose(results[1][0], expected.numpy(), rtol=1e-12, atol=0)
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
@pytest.mark.parametrize("activation", ["silu", "gelu_tanh"])
@pytest.mark.parametrize("shape", [(3, 40), (5, 2100), (64, 8200)])   # inline, across blocks, over the workers
def test_half_activations_round_as_the_composed_ops(activation, dtype, shape):
    """A half SiLU or tanh-GELU is its float32 value rounded once; a half gated product rounds
    that value before multiplying by up, and rounds the product again, as torch's two ops do
    (one rounding of the float32 gated product differs from theirs by an ulp on about a quarter
    of the elements). Specials included, and a transposed up."""
    act = F.silu if activation == "silu" else (lambda t: F.gelu(t, approximate="tanh"))
    half = dtype.np_dtype
    rng = np.random.default_rng(7)
    gate = (rng.standard_normal(shape) * 4).astype(np.float32)
    gate.reshape(-1)[:7] = [60.0, -60.0, 0.0, -0.0, np.inf, -np.inf, np.nan]
    up = rng.standard_normal(shape[::-1]).astype(np.float32).T
    g, u = core.tensor(gate).to(dtype), core.tensor(up).to(dtype)
    g32, u32 = g.float().numpy(), u.float().numpy()
    activated = act(core.tensor(g32)).numpy().astype(half).astype(np.float32)
    with np.errstate(invalid="ignore"):
        expected = (activated * u32).astype(half).astype(np.float32)
    np.testing.assert_array_equal(act(g).float().numpy(), activated)
    np.testing.assert_array_equal(F.gated_product(g, u, activation).float().numpy(), expected)


def test_gated_product_rejects_bad_arguments():
    x = core.ones(2, 3)
    with pytest.raises(ValueError, match="activation must be one of"):
        F.gated_product(x, x, "relu")
    with pytest.raises(RuntimeError, match="must have the same shape"):
        F.gated_product(x, core.ones(3, 2))


def test_activations_do_not_overflow_at_extremes():
    x = core.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0], requires_grad=True)
    for name, (fn, _) in ACTIVATIONS.items():
        if name == "glu":
            continue
        y = fn(x)
        y.sum().backward()
        assert np.isfinite(y.detach().numpy()).all(), name
        assert np.isfinite(x.grad.numpy()).all(), name
        x.grad = None


def _gelu_composed(x):
    return x * 0.5 * (1.0 + core.erf(x / math.sqrt(2.0)))


def _gelu_tanh_composed(x):
    return 0.5 * x * (1.0 + core.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


def _layer_norm_composed(x, dims, w, b, eps):
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) * (x - mean)).mean(dim=dims, keepdim=True)
    out = (x - mean) / core.sqrt(var + eps)
    out = out * w if w is not None else out
    return out + b if b is not None else out


def _rms_norm_composed(x, dims, w, eps):
    out = x * core.rsqrt((x * x).mean(dim=dims, keepdim=True) + eps)
    return out * w if w is not None else out


def _group_norm_composed(x, groups, w, b, eps):
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1)
    normed = _layer_norm_composed(grouped, (2,), None, None, eps).reshape(tuple(x.shape))
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normed * w.reshape(shape) + b.reshape(shape)


FUSED = {
    "gelu": (lambda x, w, b: F.gelu(x), lambda x, w, b: _gelu_composed(x)),
    "gelu_tanh": (lambda x, w, b: F.gelu(x, approximate="tanh"), lambda x, w, b: _gelu_tanh_composed(x)),
    "silu": (lambda x, w, b: F.silu(x), lambda x, w, b: x * core.sigmoid(x)),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b, 1e-5),
                   lambda x, w, b: _layer_norm_composed(x, (-1,), w, b, 1e-5)),
    "rms_norm": (lambda x, w, b: F.rms_norm(x, (4,), w, 1e-6), lambda x, w, b: _rms_norm_composed(x, (-1,), w, 1e-6)),
    "group_norm": (lambda x, w, b: F.group_norm(x.reshape(3, 4, 1), 2, w, b, 1e-5),
                   lambda x, w, b: _group_norm_composed(x.reshape(3, 4, 1), 2, w, b, 1e-5)),
}


@pytest.mark.parametrize("name", sorted(FUSED))
def test_fused_matches_composed_to_second_order(name):
    fused, composed = FUSED[name]
    grads = []
    for fn in (fused, composed):
        x, w, b = _rand(3, 4, seed=2), _rand(4, seed=3), _rand(4, seed=4)
        y = fn(x, w, b)
        go = _rand(*y.shape, seed=5, requires_grad=False)
        first = core.autograd.grad((y * go).sum(), [x, w, b], create_graph=True, allow_unused=True,
                                   materialize_grads=True)
        second = core.autograd.grad(sum((g * g).sum() for g in first if g.requires_grad), [x, w],
                                    allow_unused=True, materialize_grads=True)
        grads.append([y] + list(first) + list(second))
    for got, ref in zip(*grads):
        np.testing.assert_allclose(got.detach().numpy(), ref.detach().numpy(), rtol=1e-9, atol=1e-10)


def test_fused_nodes_are_single_graph_nodes():
    x = core.randn(2, 4, requires_grad=True)
    w = core.ones(4, requires_grad=True)
    for y in (F.gelu(x), F.gelu(x, approximate="tanh"), F.silu(x), F.layer_norm(x, (4,), w),
              F.rms_norm(x, (4,), w), F.group_norm(x, 2, w, w)):
        assert all(edge is None or edge[0] is x or edge[0] is w for edge in y.grad_fn.next_functions)


def test_norms_gradcheck_with_broadcast_parameters():
    x = _rand(2, 3, 4, seed=6)
    w, b = _rand(3, 4, seed=7), _rand(3, 4, seed=8)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), (x, w, b))
    assert gradcheck(lambda x, w: F.rms_norm(x, (4,), w[0]), (x, w))
    assert gradcheck(lambda x: F.layer_norm(x, (4,)), (x,))
    xg, wg, bg = _rand(2, 4, 3, seed=9), _rand(4, seed=10), _rand(4, seed=11)
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (xg, wg, bg))
    assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), (x, w, b))
    assert gradgradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (xg, wg, bg))


def test_batch_norm_gradcheck_and_running_stats():
    x, w, b = _rand(4, 3, 2, seed=12), _rand(3, seed=13), _rand(3, seed=14)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, w, b))
    rm, rv = core.zeros(3, dtype=core.float64), core.ones(3, dtype=core.float64)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=False), (x, w, b))
    F.batch_norm(x, rm, rv, training=True, momentum=0.25)
    data = x.detach().numpy()
    np.testing.assert_allclose(rm.numpy(), 0.25 * data.mean(axis=(0, 2)))
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * data.var(axis=(0, 2), ddof=1))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(core.ones(1, 3), None, None, training=True)


def test_linear_and_bilinear_gradcheck():
    x, w, b = _rand(2, 3, 4, seed=15), _rand(5, 4, seed=16), _rand(5, seed=17)
    assert gradcheck(F.linear, (x, w, b))
    assert gradcheck(lambda x, w: F.linear(x, w), (_rand(4, seed=18), w))
    assert gradgradcheck(F.linear, (_rand(2, 4, seed=19), w, b))
    x1, x2, wb, bb = _rand(3, 2, seed=20), _rand(3, 4, seed=21), _rand(2, 2, 4, seed=22), _rand(2, seed=23)
    assert gradcheck(F.bilinear, (x1, x2, wb, bb))


def test_linear_of_empty_inputs_and_features():
    """No input features: every output is its bias (torch: zeros plus bias), and the gradients
    are the empty ones and the bias's row count; no rows or no outputs give empty results."""
    x, w = core.zeros(2, 3, 0, requires_grad=True), core.zeros(4, 0, requires_grad=True)
    b = core.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = F.linear(x, w, b)
    np.testing.assert_array_equal(y.detach().numpy(), np.broadcast_to([1.0, 2.0, 3.0, 4.0], (2, 3, 4)))
    y.sum().backward()
    assert x.grad.shape == (2, 3, 0) and w.grad.shape == (4, 0)
    np.testing.assert_array_equal(b.grad.numpy(), [6.0, 6.0, 6.0, 6.0])
    assert F.linear(core.ones(0, 5), core.ones(4, 5)).shape == (0, 4)
    assert F.linear(core.ones(2, 5), core.ones(0, 5)).shape == (2, 0)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 5x3\)"):
        F.linear(core.ones(2, 3, 4), core.ones(3, 5))
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Float and Double"):
        F.linear(core.ones(2, 4), core.ones(3, 4, dtype=core.float64))


def test_norm_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\]"):
        F.layer_norm(core.ones(2, 4), (5,))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(core.ones(2, 6, 3), 4)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(4, 6)


def test_rms_norm_default_eps_is_dtype_epsilon():
    x = core.tensor([[1e-4, -2e-4, 3e-4]])
    ref = x.numpy() / np.sqrt((x.numpy() ** 2).mean() + np.finfo(np.float32).eps)
    np.testing.assert_allclose(F.rms_norm(x, (3,)).numpy(), ref, rtol=1e-6)


def test_half_precision_norms_compute_in_float32():
    x = core.randn(4, 8).to(core.bfloat16)
    out = F.layer_norm(x, (8,))
    assert out.dtype is core.bfloat16
    ref = F.layer_norm(x.float(), (8,))
    np.testing.assert_allclose(out.float().numpy(), ref.numpy(), atol=2e-2)


# --- dropout ---------------------------------------------------------------------------


def test_dropout_statistics_and_scaling():
    core.manual_seed(0)
    x = core.ones(200, 500)
    y = F.dropout(x, p=0.3, training=True).numpy()
    kept = y != 0
    # kept fraction ~ Binomial(1e5, 0.7)/1e5: std 0.00145, allow 5 sigma
    assert abs(kept.mean() - 0.7) < 5 * math.sqrt(0.7 * 0.3 / y.size)
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    assert F.dropout(x, p=0.3, training=False) is x
    assert float(F.dropout(x, p=1.0).abs().sum()) == 0.0
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        F.dropout(x, 1.5)


def test_dropout_reproducible_with_seed_and_gradient_uses_mask():
    core.manual_seed(3)
    a = F.dropout(core.ones(50), 0.5).numpy()
    core.manual_seed(3)
    x = core.ones(50, requires_grad=True)
    y = F.dropout(x, 0.5)
    np.testing.assert_array_equal(a, y.detach().numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), a)

    def seeded_dropout(t):
        core.manual_seed(1)  # the same mask on every evaluation
        return F.dropout(t, 0.4, training=True)

    assert gradcheck(seeded_dropout, (_rand(3, 4, seed=24),))


def test_dropout_module_train_eval_and_inplace():
    m = nn.Dropout(0.5)
    x = core.ones(1000)
    assert (m(x).numpy() == 0).any()
    m.eval()
    assert m(x) is x
    y = core.ones(100)
    out = F.dropout(y, 0.5, inplace=True)
    assert out is y and (y.numpy() == 0).any()


def test_channel_dropout_zeroes_whole_channels():
    core.manual_seed(5)
    y = F.dropout2d(core.ones(4, 16, 3, 3), p=0.5).numpy()
    per_channel = y.reshape(4, 16, 9)
    assert ((per_channel == 0).all(axis=2) | (per_channel == 2.0).all(axis=2)).all()
    assert (per_channel == 0).all(axis=2).any()
    y1 = F.dropout1d(core.ones(8, 5), p=0.5).numpy()  # unbatched (C, L)
    assert ((y1 == 0).all(axis=1) | (y1 == 2.0).all(axis=1)).all()
    with pytest.raises(RuntimeError, match="dropout2d: Expected 3D or 4D input"):
        F.dropout2d(core.ones(2, 2), 0.5)


def test_alpha_dropout_keeps_mean_and_variance():
    core.manual_seed(7)
    x = core.randn(400, 500)
    y = F.alpha_dropout(x, p=0.2, training=True).numpy()
    # 2e5 samples of a unit-variance variable: mean std 0.0022, variance std ~0.004; allow 5 sigma
    assert abs(y.mean()) < 0.012 and abs(y.var() - 1.0) < 0.03
    assert F.alpha_dropout(x, 0.2, training=False) is x


# --- embedding -------------------------------------------------------------------------


def test_embedding_gradcheck_and_padding_row():
    # padding_idx and scale_grad_by_freq alter the gradient on purpose (checked against torch in
    # test_layers); the plain lookup has the true derivative.
    w = _rand(6, 3, seed=25)
    idx = core.tensor([[0, 2, 2], [5, 1, 2]])
    assert gradcheck(lambda w: F.embedding(idx, w), (w,))
    assert gradgradcheck(lambda w: F.embedding(idx, w), (w,))
    F.embedding(idx, w, padding_idx=-4).sum().backward()
    assert w.grad[2].tolist() == [0.0, 0.0, 0.0]
    assert w.grad[0].tolist() == [1.0, 1.0, 1.0]
    assert w.grad[3].tolist() == [0.0, 0.0, 0.0]


def test_embedding_module_padding_row_and_from_pretrained():
    emb = nn.Embedding(5, 3, padding_idx=0)
    assert emb.weight[0].tolist() == [0.0, 0.0, 0.0]
    emb(core.tensor([0, 0, 1])).sum().backward()
    assert emb.weight.grad[0].tolist() == [0.0, 0.0, 0.0]
    table = core.randn(4, 2)
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad and frozen.weight._data is table._data
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad


def test_embedding_errors():
    w = core.randn(4, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(core.tensor([4]), w)
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding(core.tensor([1.0]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=4)
