"""scaled_dot_product_attention: torch parity, gradients, fusion, dropout, errors."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from .functional_fixtures import case_names, check_case

OP = "scaled_dot_product_attention"


@pytest.mark.parametrize("case", case_names(OP))
def test_matches_torch(case):
    check_case(OP, case)


def _t(*shape, seed=0, grad=True):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=grad)


def _composed(q, k, v, mask=None, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-1, -2) * scale
    if mask is not None:
        scores = scores + mask
    return F.softmax(scores, dim=-1) @ v


def test_gradcheck_float_mask_broadcast():
    q, k, v = _t(2, 2, 3, 4), _t(1, 2, 5, 4, seed=1), _t(2, 1, 5, 3, seed=2)
    mask = _t(3, 5, seed=3)
    assert gradcheck(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3], scale=0.7), (q, k, v, mask))


def test_gradcheck_causal_gqa_and_bool_mask():
    q, k, v = _t(1, 4, 3, 4), _t(1, 2, 5, 4, seed=1), _t(1, 2, 5, 2, seed=2)
    assert gradcheck(lambda *a: F.scaled_dot_product_attention(*a, is_causal=True, enable_gqa=True), (q, k, v))
    mask = core.tensor(np.random.default_rng(4).random((3, 5)) > 0.4)
    assert gradcheck(lambda *a: F.scaled_dot_product_attention(*a, attn_mask=mask, enable_gqa=True), (q, k, v))


def test_gradgradcheck():
    q, k, v = _t(1, 2, 2, 3), _t(1, 1, 3, 3, seed=1), _t(1, 1, 3, 2, seed=2)
    mask = _t(2, 3, seed=3)
    assert gradgradcheck(lambda *a: F.scaled_dot_product_attention(*a[:3], attn_mask=a[3]), (q, k, v, mask))
    q4 = _t(1, 2, 3, 3, seed=5)
    assert gradgradcheck(lambda *a: F.scaled_dot_product_attention(*a, is_causal=True, enable_gqa=True),
                         (q4, k, v))


def test_fused_matches_composition():
    q, k, v = _t(2, 3, 5, 8), _t(2, 3, 7, 8, seed=1), _t(2, 3, 7, 4, seed=2)
    mask = _t(5, 7, seed=3)
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    composed = _composed(q, k, v, mask)
    np.testing.assert_allclose(fused.detach().numpy(), composed.detach().numpy(), atol=1e-12)
    w = _t(*fused.shape, seed=9, grad=False)
    g_fused = core.autograd.grad((fused * w).sum(), (q, k, v, mask))
    g_composed = core.autograd.grad((composed * w).sum(), (q, k, v, mask))
    for a, b in zip(g_fused, g_composed):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)


def test_single_node_saving_probabilities():
    q, k, v = _t(1, 2, 3, 4), _t(1, 2, 3, 4, seed=1), _t(1, 2, 3, 4, seed=2)
    out = F.scaled_dot_product_attention(q, k, v)
    assert [e[0] for e in out.grad_fn.next_functions[:3]] == [q, k, v]


def test_fully_masked_rows_give_zeros_and_zero_gradients():
    q, k, v = _t(1, 1, 3, 4), _t(1, 1, 4, 4, seed=1), _t(1, 1, 4, 4, seed=2)
    mask = core.tensor([[True, True, False, False], [False] * 4, [True] * 4])
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.all(out.detach().numpy()[0, 0, 1] == 0)
    out.sum().backward()
    assert np.all(q.grad.numpy()[0, 0, 1] == 0)
    assert np.isfinite(k.grad.numpy()).all()


def test_dropout_scales_kept_weights_and_is_reproducible():
    q = core.zeros(1, 1, 400, 4)
    k = core.zeros(1, 1, 10, 4)
    v = core.ones(1, 1, 10, 1)
    core.manual_seed(0)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy().reshape(-1)
    # Uniform weights 1/10; each kept weight is scaled by 1/(1 - p): the rows are multiples of 1/7.5.
    kept = out * 7.5
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-5)
    assert abs(out.mean() - 1.0) < 0.05
    core.manual_seed(0)
    again = F.scaled_dot_product_attention(q, k, v, dropout_p=0.25).numpy().reshape(-1)
    np.testing.assert_array_equal(out, again)


def test_dropout_gradcheck_with_fixed_seed():
    q, k, v = _t(1, 2, 3, 4), _t(1, 2, 4, 4, seed=1), _t(1, 2, 4, 3, seed=2)

    def fn(*args):
        core.manual_seed(3)
        return F.scaled_dot_product_attention(*args, dropout_p=0.3)

    assert gradcheck(fn, (q, k, v))


def test_default_scale_and_half_precision():
    q, k, v = (core.randn(2, 4, 6, 8) for _ in range(3))
    ref = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(ref.numpy(), _composed(q, k, v).numpy(), atol=1e-6)
    half = F.scaled_dot_product_attention(q.half(), k.half(), v.half())
    assert half.dtype == core.float16
    np.testing.assert_allclose(half.float().numpy(), ref.numpy(), atol=1e-2)


def test_errors():
    q, k, v = core.randn(1, 4, 3, 8), core.randn(1, 3, 5, 8), core.randn(1, 3, 5, 8)
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q.double(), k, v)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(k, k, v, attn_mask=core.ones(5, 5, dtype=core.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="same embedding size"):
        F.scaled_dot_product_attention(core.randn(1, 3, 4), k[0], v[0])


@pytest.mark.parametrize("mask_heads", [None, 1, 6])
def test_grouped_query_path_equals_repeated_heads(mask_heads):
    """Without the fused kernel, GQA broadcasts query groups against shared key/value heads;
    the result must equal attention over explicitly repeated heads, masks and dropout included."""
    from mindnlp.core.nn.functional import attention as attn

    rng = np.random.default_rng(3)
    q = rng.standard_normal((2, 6, 3, 4)).astype(np.float32)
    k = rng.standard_normal((2, 2, 5, 4)).astype(np.float32)
    v = rng.standard_normal((2, 2, 5, 4)).astype(np.float32)
    mask = None if mask_heads is None else rng.standard_normal((2, mask_heads, 3, 5)).astype(np.float32)
    keep = (rng.random((2, 6, 3, 5)) > 0.3).astype(np.float32) / 0.7
    out, probs = attn._grouped_forward(np, q, k, v, mask, keep, 0.5, 3)
    ref_out, ref_probs = attn._composed_forward(np, q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), mask,
                                                keep, 0.5)
    np.testing.assert_allclose(out, ref_out, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(probs, ref_probs, rtol=1e-6, atol=1e-6)
