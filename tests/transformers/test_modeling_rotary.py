"""The fused rotary node equals the composed expression and has correct gradients."""
import numpy as np

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.transformers.modeling_rotary import apply_rotary, apply_rotary_pos_emb, rotate_half


def _inputs(dtype=core.float64, requires_grad=True):
    rng = np.random.default_rng(0)
    x = core.tensor(rng.standard_normal((2, 3, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    cos = core.tensor(rng.standard_normal((2, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    sin = core.tensor(rng.standard_normal((2, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    return x, cos, sin


def test_fused_equals_composed():
    x, cos, sin = _inputs(core.float32, requires_grad=False)
    expected = x * cos[:, None] + rotate_half(x) * sin[:, None]
    np.testing.assert_allclose(apply_rotary(x, cos, sin).numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_gradients_of_every_input():
    x, cos, sin = _inputs()
    assert gradcheck(apply_rotary, (x, cos, sin))
    assert gradgradcheck(apply_rotary, (x, cos, sin))
    # cos/sin broadcast over the batch too (one set of positions for every row)
    x, cos, sin = _inputs()
    assert gradcheck(apply_rotary, (x, cos[:1].detach().requires_grad_(), sin[:1].detach().requires_grad_()))


def test_query_and_key_share_the_angles():
    rng = np.random.default_rng(1)
    q = core.tensor(rng.standard_normal((1, 4, 3, 8)), dtype=core.float32)
    k = core.tensor(rng.standard_normal((1, 2, 3, 8)), dtype=core.float32)
    cos = core.tensor(rng.standard_normal((1, 3, 8)), dtype=core.float32)
    sin = core.tensor(rng.standard_normal((1, 3, 8)), dtype=core.float32)
    rq, rk = apply_rotary_pos_emb(q, k, cos, sin)
    np.testing.assert_allclose(rq.numpy(), (q * cos[:, None] + rotate_half(q) * sin[:, None]).numpy(), atol=1e-6)
    np.testing.assert_allclose(rk.numpy(), (k * cos[:, None] + rotate_half(k) * sin[:, None]).numpy(), atol=1e-6)


def test_split_heads_is_the_view_and_transpose_it_replaces():
    from mindnlp.transformers.modeling_attention import split_heads

    rng = np.random.default_rng(2)
    x = core.tensor(rng.standard_normal((2, 3, 8)), requires_grad=True)
    np.testing.assert_array_equal(split_heads(x, 4).detach().numpy(),
                                  x.detach().view(2, 3, -1, 4).transpose(1, 2).numpy())
    assert gradcheck(lambda t: split_heads(t, 4), (x,))
