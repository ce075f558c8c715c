"""The CPU backend's fused float32 kernels against their composed references and the math.

Sizes are chosen above the kernels' thresholds (several cache blocks, odd lengths) so that
the blocked and multi-threaded paths run; float64 results of the composed ops are the
expected values, with float32's resolution plus the erf approximations' error (1.5e-7 for
the NumPy kernels, 3e-7 for the compiled ones) as tolerance. Every test runs with the
numba-compiled kernels (skipped where numba is absent) and with the NumPy ones.
"""
import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special

from mindnlp import core
from mindnlp.core.backends import cpu_jit, get_backend
from mindnlp.core.backends import cpu_kernels as K
from mindnlp.core.backends import cpu_threads
from mindnlp.core.nn import functional as F
from mindnlp.core.nn.functional.attention import _composed_forward

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True, params=["compiled", "numpy"])
def kernel_flavour(request, monkeypatch):
    """Every test runs with the numba-compiled kernels (when installed) and with the NumPy ones."""
    if request.param == "compiled" and cpu_jit.load() is None:
        pytest.skip("numba is not installed (the compiled kernels are optional)")
    if request.param == "numpy":
        monkeypatch.setattr(cpu_jit, "_compiled", False)
    return request.param
ODD_SIZE = 2 * K._BLOCKS_PER_THREAD * K.BLOCK + 17     # enough blocks for every thread


def _inputs(n=ODD_SIZE, scale=4.0):
    x = (RNG.standard_normal(n) * scale).astype(np.float32)
    x[:8] = [np.inf, -np.inf, np.nan, 0.0, -0.0, 30.0, -30.0, 1e-30]
    return x


def _gelu64(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return 0.5 * x * (1.0 + scipy.special.erf(x / math.sqrt(2.0)))


def _gelu_grad64(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return 0.5 * (1.0 + scipy.special.erf(x / math.sqrt(2.0))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _tanh_parts64(x):
    x = x.astype(np.float64)
    t = np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))
    with np.errstate(invalid="ignore"):
        value = 0.5 * x * (1 + t)
        slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x * x)
    return value, slope


def _assert_close_f32(actual, expected, x, abs_per_unit=2e-7):
    """Equal NaN and infinite entries; elsewhere within abs_per_unit * (1 + |x|) plus 2 float32 ulps.

    The erf approximation's absolute error (1.5e-7) reaches GELU multiplied by |x| / 2.
    """
    actual = np.asarray(actual, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(actual[np.isinf(expected)], expected[np.isinf(expected)])
    err = np.abs(actual[finite] - expected[finite])
    scale = np.abs(np.broadcast_to(x, expected.shape)[finite]).astype(np.float64)
    bound = abs_per_unit * (1 + scale) + 2 * np.spacing(np.abs(expected[finite]).astype(np.float32))
    assert (err <= bound).all(), f"max error {err.max():.3g}, worst over bound {(err / bound).max():.3g}"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_gelu_and_backward_match_math():
    x = _inputs()
    grad = RNG.standard_normal(x.size).astype(np.float32)
    _assert_close_f32(K.gelu(x), _gelu64(x), x, abs_per_unit=3e-7)
    _assert_close_f32(K.gelu_backward(grad, x), grad * _gelu_grad64(x), grad * x, abs_per_unit=5e-7)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_gelu_tanh_and_backward_match_math():
    x = _inputs()
    grad = RNG.standard_normal(x.size).astype(np.float32)
    value, slope = _tanh_parts64(x)
    _assert_close_f32(K.gelu_tanh(x), value, x)
    _assert_close_f32(K.gelu_tanh_backward(grad, x), grad * slope, grad * x, abs_per_unit=1e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_silu_and_backward_match_math():
    x = _inputs(scale=30.0)                      # reaches past the clip at |x| = 88
    grad = RNG.standard_normal(x.size).astype(np.float32)
    xd = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        sig = 1.0 / (1.0 + np.exp(-np.clip(xd, -88, 88)))   # the composed op's clip: silu(-inf) = -inf
        value, slope = xd * sig, sig * (1.0 + xd * (1.0 - sig))
    _assert_close_f32(K.silu(x), value, x)
    _assert_close_f32(K.silu_backward(grad, x), grad * slope, grad * x, abs_per_unit=5e-7)


def test_silu_op_fused_gradient_matches_float64():
    data = RNG.standard_normal((64, 777)).astype(np.float32) * 4
    x, x64 = core.tensor(data, requires_grad=True), core.tensor(data.astype(np.float64), requires_grad=True)
    F.silu(x).sum().backward()
    F.silu(x64).sum().backward()
    _assert_close_f32(x.grad.numpy(), x64.grad.numpy(), data, abs_per_unit=5e-7)


def test_elementwise_kernels_take_strided_inputs_and_keep_shape():
    x = RNG.standard_normal((300, 257)).astype(np.float32).T     # not contiguous
    out = K.gelu(x)
    assert out.shape == (257, 300) and out.flags.c_contiguous
    _assert_close_f32(out, _gelu64(x), x)


def _softmax64(x):
    x = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape", [(8, 12, 64, 129), (3, 40001)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_softmax_and_backward_match_reference(shape):
    x = RNG.standard_normal(shape).astype(np.float32) * 5
    x[0, ..., :3] = -np.inf                    # masked entries
    x[-1, ..., :] = -np.inf                    # a row with nothing finite: NaN, as torch gives
    probs = K.softmax(x)
    expected = _softmax64(x)
    np.testing.assert_allclose(probs, expected, rtol=2e-6, atol=1e-7)
    grad = RNG.standard_normal(shape).astype(np.float32)
    p = np.nan_to_num(expected)
    expected_grad = p * (grad - (grad * p).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(K.softmax_backward(grad, p.astype(np.float32)), expected_grad, rtol=1e-5, atol=1e-6)


def _attention_case(q_shape, kv_shape, mask_shape, dead_rows=False, dropout=False):
    q = RNG.standard_normal(q_shape).astype(np.float32)
    k = RNG.standard_normal(kv_shape).astype(np.float32)
    v = RNG.standard_normal(kv_shape[:-1] + (24,)).astype(np.float32)
    mask = keep = None
    if mask_shape is not None:
        mask = np.where(RNG.random(mask_shape) < 0.2, -np.inf, RNG.standard_normal(mask_shape)).astype(np.float32)
        if dead_rows:
            mask[..., 0, :] = -np.inf
    if dropout:
        lead = np.broadcast_shapes(q_shape[:-2], kv_shape[:-2])
        keep = (RNG.random(lead + (q_shape[-2], kv_shape[-2])) > 0.3).astype(np.float32) / np.float32(0.7)
    return q, k, v, mask, keep


@pytest.mark.parametrize("q_shape,kv_shape,mask_shape,dead_rows,dropout", [
    ((16, 4, 40, 32), (16, 4, 56, 32), (16, 1, 1, 56), False, False),   # padding mask
    ((16, 4, 40, 32), (16, 4, 56, 32), (40, 56), True, False),          # shared mask, fully masked rows
    ((16, 4, 40, 32), (16, 4, 56, 32), (1, 4, 1, 56), False, False),    # a mask per head, not per sequence
    ((64, 4, 12, 8), (64, 4, 12, 8), (64, 1, 12, 12), False, False),    # short sequences, many to a unit
    ((1, 6, 96, 16), (1, 6, 96, 16), (1, 1, 96, 96), False, True),      # batch 1: split over heads; dropout
    ((1, 6, 96, 16), (3, 6, 96, 16), None, False, False),               # q broadcast over the batch
    ((24, 64, 16), (24, 80, 16), (24, 64, 80), True, True),             # 3-d inputs
])
def test_attention_matches_composed_forward(q_shape, kv_shape, mask_shape, dead_rows, dropout):
    q, k, v, mask, keep = _attention_case(q_shape, kv_shape, mask_shape, dead_rows, dropout)
    out, probs = K.attention(q, k, v, mask, keep, 0.3)
    ref64 = [None if a is None else a.astype(np.float64) for a in (q, k, v, mask, keep)]
    expected_out, expected_probs = _composed_forward(np, *ref64, 0.3)
    np.testing.assert_allclose(probs, expected_probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)
    if dead_rows:
        assert not np.isnan(out).any() and (probs[..., 0, :] == 0).all()


@pytest.mark.parametrize("q_shape,kv_shape,mask_shape,groups,dead_rows", [
    ((1, 6, 1, 16), (1, 2, 40, 16), (1, 1, 1, 40), 3, False),     # a decoding step, GQA, padding mask
    ((2, 4, 7, 16), (2, 4, 30, 16), (7, 30), 1, True),            # shared mask, fully masked rows
    ((2, 4, 5, 16), (2, 2, 9, 16), None, 2, False),               # no mask
    ((5, 4, 24, 16), (5, 4, 24, 16), (5, 1, 1, 24), 1, False),    # a short sequence encoded whole: BLAS
    ((2, 6, 21, 16), (2, 2, 21, 16), (2, 1, 21, 21), 3, True),    # ... with GQA, fully masked rows
])
@pytest.mark.parametrize("cache", ["own", "own, split over threads", "view"])
def test_small_attention_matches_composed_forward(q_shape, kv_shape, mask_shape, groups, dead_rows, cache,
                                                  kernel_flavour, monkeypatch):
    """Keys and values in arrays of their own are read by compiled loops, on the calling
    thread or split by query heads over numba's; views of a longer cache (not contiguous)
    go through BLAS."""
    q, k, v, mask, _ = _attention_case(q_shape, kv_shape, mask_shape, dead_rows)
    # A query split from a projection's rows is a strided view: the loop reads it in place.
    q = np.ascontiguousarray(np.swapaxes(q, 1, 2)).swapaxes(1, 2)
    if cache == "own, split over threads":
        monkeypatch.setattr(K, "_SPLIT_ATTENTION_BYTES", 0)
    if cache == "view":
        k, v = (np.concatenate([a, a[:, :, :3]], axis=2)[:, :, :a.shape[2]] for a in (k, v))
    out = K.small_attention(q, k, v, mask, 0.3, groups)
    if kernel_flavour == "numpy":      # the loop is numba's: the op keeps its composed path
        assert out is None
        return
    repeated = [np.repeat(a, groups, axis=1).astype(np.float64) for a in (k, v)]
    expected, _ = _composed_forward(np, q.astype(np.float64), *repeated,
                                    None if mask is None else mask.astype(np.float64), None, 0.3)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    if dead_rows:
        assert (out[..., 0, :] == 0).all()
    assert K.small_attention(q.astype(np.float64), k, v, mask, 0.3, groups) is None


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("dead_row", [False, True])
def test_a_prompt_in_a_static_cache_attends_only_the_filled_keys(dtype, dead_row, kernel_flavour, monkeypatch):
    """A prompt of 40 positions in a static cache of 200: the causal mask hides the 160
    unfilled keys from every query, which then leaves them out (their probabilities are
    exactly zero) and takes the short-sequence kernel; a row that attends nothing depends on
    every key, so then all 200 are kept. Either way the composed forward's result."""
    L, S = 40, 200
    q = RNG.standard_normal((1, 6, L, 16)).astype(np.float32).astype(dtype)
    k, v = (RNG.standard_normal((1, 2, S, 16)).astype(np.float32).astype(dtype) for _ in range(2))
    mask = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None], 0.0, np.finfo(np.float32).min)
    mask = mask.astype(np.float32).astype(dtype)[None, None]
    if dead_row:
        mask[..., 3, :] = np.finfo(np.float32).min
    short = cpu_jit.short_attention()
    keys_seen = []
    if short is not None:
        monkeypatch.setattr(short, "attention", lambda q, k, *a, f=short.attention, **kw: keys_seen.append(
            k.shape[2]) or f(q, k, *a, **kw))
    out = K.small_attention(q, k, v, mask, 0.25, 3)
    if kernel_flavour == "numpy":
        assert out is None
        return
    wide = [np.asarray(a, np.float64) for a in (q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), mask)]
    expected, _ = _composed_forward(np, *wide, None, 0.25)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    assert keys_seen == ([] if dead_row or short is None else [L])


@pytest.mark.parametrize("kv_shape,mask_shape,groups", [
    ((2, 2, 40, 16), (2, 1, 1, 40), 3),     # a padding mask per sequence, GQA
    ((1, 2, 40, 16), (1, 1, 1, 40), 3),     # one row of mask for every head
    ((1, 6, 40, 16), (1, 6, 1, 40), 1),     # a row per head
    ((1, 6, 40, 16), None, 1),
])
@pytest.mark.parametrize("split", [False, True])
def test_planned_decoding_attention_gives_small_attentions_bits(kv_shape, mask_shape, groups, split, kernel_flavour,
                                                                monkeypatch):
    """A replay's decoding-step attention, planned once for its shapes (one query per head
    against keys and values in arrays of their own), computes small_attention's bits into the
    array it is handed, on the calling thread or split over numba's, and hands keys and values that are views of a longer
    cache to small_attention itself; other shapes get no plan."""
    batch, kv_heads, keys, depth = kv_shape
    q, k, v, mask, _ = _attention_case((batch, kv_heads * groups, 1, depth), kv_shape, mask_shape)
    if split:
        monkeypatch.setattr(K, "_SPLIT_ATTENTION_BYTES", 0)
    plan = K.decode_attention_plan(q.shape, k.shape, v.shape, None if mask is None else mask.shape, 0.3)
    if kernel_flavour == "numpy":      # the plan runs numba's loops
        assert plan is None
        return
    out = np.full(q.shape[:3] + v.shape[3:], np.nan, np.float32)
    assert plan(q, k, v, mask, out) is out
    np.testing.assert_array_equal(out, K.small_attention(q, k, v, mask, 0.3, groups))
    k_view, v_view = (np.concatenate([a, a], axis=2)[:, :, :keys] for a in (k, v))
    np.testing.assert_array_equal(plan(q, k_view, v_view, mask, out),
                                  K.small_attention(q, k_view, v_view, mask, 0.3, groups))
    assert K.decode_attention_plan((batch, kv_heads * groups, 2, depth), k.shape, v.shape, None, 0.3) is None


@pytest.mark.parametrize("batch,kv_heads,groups,masked,rotated", [
    (1, 3, 3, True, True), (1, 2, 2, False, True), (2, 1, 4, True, True),
    (1, 4, 1, True, False), (2, 3, 1, True, True),        # heads sharing nothing (GPT-2, OPT), rotated or not
])
def test_a_whole_decoding_step_gives_the_bits_of_its_separate_calls(batch, kv_heads, groups, masked, rotated,
                                                                    kernel_flavour, monkeypatch):
    """decode_step_plan's one call (rotation or not, cache write, attention over the live keys,
    on one thread or, where they reach the size that splits attention, over numba's) against the
    calls a replay makes one by one: rotary, the cache rows written, decode_attention_plan. A
    position outside the cache or an array that is not C-contiguous writes nothing and returns
    False (the caller takes the separate path); other shapes get no plan."""
    keys, depth, position = 40, 16, 29
    cache_shape, heads = (batch, kv_heads, keys, depth), kv_heads * groups
    mask_shape = (1, 1, 1, keys) if masked else None
    plan = K.decode_step_plan(((batch, 1, heads * depth), (batch, 1, kv_heads * depth)),
                              (1, 1, depth) if rotated else None, cache_shape, mask_shape, 0.3)
    if kernel_flavour == "numpy":
        assert plan is None
        return
    xq, xk, xv = (RNG.standard_normal((batch, 1, n * depth)).astype(np.float32) for n in (heads, kv_heads, kv_heads))
    angles = RNG.standard_normal((1, 1, depth)).astype(np.float32)
    cos, sin = (np.cos(angles), np.sin(angles)) if rotated else (None, None)
    k_cache, v_cache = (RNG.standard_normal(cache_shape).astype(np.float32) for _ in range(2))
    mask = None
    if masked:      # a static cache's causal row: the positions after this step's are dead
        mask = np.where(np.arange(keys) <= position, 0.0, np.finfo(np.float32).min).astype(np.float32)
        mask = mask.reshape(mask_shape)
    at = np.array([position])
    mine = [k_cache.copy(), v_cache.copy()]
    q_rows, k_rows = np.empty((batch, 1, heads, depth), np.float32), np.empty((batch, 1, kv_heads, depth), np.float32)
    out = np.full((batch, heads, 1, depth), np.nan, np.float32)
    assert plan(xq, xk, xv, cos, sin, *mine, at, *([mask] if masked else []), q_rows, k_rows, out) is True

    q, k = xq.reshape(batch, 1, heads, depth).transpose(0, 2, 1, 3), xk.reshape(batch, 1, kv_heads, depth).transpose(0, 2, 1, 3)
    if rotated:
        q, k = K.rotary(q, cos, sin), K.rotary(k, cos, sin)
    k_cache[:, :, position], v_cache[:, :, position] = k[:, :, 0], xv.reshape(batch, kv_heads, depth)
    np.testing.assert_array_equal(mine[0], k_cache)
    np.testing.assert_array_equal(mine[1], v_cache)
    expected = np.empty_like(out)
    K.decode_attention_plan((batch, heads, 1, depth), cache_shape, cache_shape, mask_shape, 0.3)(
        np.ascontiguousarray(q), k_cache, v_cache, *([mask] if masked else []), expected)
    np.testing.assert_array_equal(out, expected)

    before = [a.copy() for a in mine]
    for wrong in (np.array([keys]), np.array([-1])):
        assert plan(xq, xk, xv, cos, sin, *mine, wrong, *([mask] if masked else []), q_rows, k_rows, out) is False
    strided = np.concatenate([xq, xq], axis=2)[:, :, ::2]
    assert plan(strided, xk, xv, cos, sin, *mine, at, *([mask] if masked else []), q_rows, k_rows, out) is False
    np.testing.assert_array_equal(mine[0], before[0])
    np.testing.assert_array_equal(mine[1], before[1])
    # live keys and values of the split size: the attention split over the threads, the same bits
    monkeypatch.setattr(K, "_SPLIT_ATTENTION_BYTES", 8 * batch * kv_heads * (position + 1 if masked else keys) * depth)
    split = np.full_like(out, np.nan)
    assert plan(xq, xk, xv, cos, sin, *mine, at, *([mask] if masked else []), q_rows, k_rows, split) is True
    np.testing.assert_array_equal(split, expected)
    np.testing.assert_array_equal(mine[0], k_cache)
    assert K.decode_step_plan(((batch, 2, heads * depth), (batch, 2, kv_heads * depth)), (1, 2, depth), cache_shape,
                              mask_shape, 0.3) is None
    assert K.decode_step_plan(((batch, 1, heads * depth), (batch, 1, kv_heads * depth)), (1, 1, depth), cache_shape,
                              (batch, heads, 1, keys), 0.3) is None


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("batch,kv_heads,groups", [(1, 3, 3), (2, 2, 1), (2, 1, 4)])
@pytest.mark.parametrize("start", [0, 5])
def test_a_growing_caches_views_are_read_in_place_with_the_bits_of_a_copy(dtype, batch, kv_heads, groups, start,
                                                                          kernel_flavour, monkeypatch):
    """A dynamic cache hands attention views of the first positions of its storage (room
    kept for the positions to come; a sliding window's start moves): the decoding loops read
    them in place, with the bits a C-contiguous copy gives, where BLAS took them before.
    Keys and values of storages of different lengths are not such views: BLAS takes them
    (widened copies, the loops, for half arrays), the same attention within rounding."""
    if kernel_flavour == "numpy":      # the loops are numba's
        return
    parallel = cpu_jit.parallel()
    keys, capacity, depth = 300, 340, 16      # large enough not to be copied (_COPIED_KEYS_BYTES)
    storage_k, storage_v = (RNG.standard_normal((batch, kv_heads, capacity, depth)).astype(np.float32).astype(dtype)
                            for _ in range(2))
    k, v = storage_k[:, :, start:start + keys], storage_v[:, :, start:start + keys]
    q = RNG.standard_normal((batch, kv_heads * groups, 1, depth)).astype(np.float32).astype(dtype)
    mask = np.zeros((batch, 1, 1, keys), np.float32).astype(dtype)
    mask[0, ..., :7] = np.finfo(np.float32).min       # padding on the left of the first sequence
    read = []
    monkeypatch.setattr(parallel, "attention", lambda q, k, *a, f=parallel.attention, **kw: read.append(k.shape) or
                        f(q, k, *a, **kw))
    out = K.small_attention(q, k, v, mask, 0.3, groups)
    assert read == [(batch, kv_heads, capacity, depth)]      # rows a storage apart, read in place
    copied = K.small_attention(q, np.ascontiguousarray(k), np.ascontiguousarray(v), mask, 0.3, groups)
    np.testing.assert_array_equal(out, copied)
    wide = [np.asarray(a, np.float64) for a in (q, np.repeat(k, groups, axis=1), np.repeat(v, groups, axis=1), mask)]
    expected, _ = _composed_forward(np, *wide, None, 0.3)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    read.clear()
    shorter_v = np.ascontiguousarray(storage_v[:, :, :keys + 3])[:, :, :keys]    # another storage length
    out = K.small_attention(q, k, shorter_v, mask, 0.3, groups)
    assert all(shape[2] == keys for shape in read)      # not the storages' rows: BLAS, or widened half copies
    wide[2] = np.repeat(np.asarray(shorter_v, np.float64), groups, axis=1)
    expected, _ = _composed_forward(np, *wide, None, 0.3)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("rows", [1, 3])
def test_decoding_over_a_static_cache_gives_the_bits_of_its_filled_keys(dtype, split, rows, kernel_flavour,
                                                                         monkeypatch):
    """Queries over a static cache of 40 positions with 23 filled, the rest hidden by the mask
    as HF hides them (the dtype's lowest value: float16's is only -65504; or -inf): the
    loops read the filled keys only, so the result is bit for bit that of a cache holding just
    them, without a mask (a dynamic cache), whether small_attention or a replay's plan runs
    it. A row that attends nothing keeps every key."""
    if kernel_flavour == "numpy":      # the loops are numba's
        return
    if split:
        monkeypatch.setattr(K, "_SPLIT_ATTENTION_BYTES", 0)
    filled, S = 23, 40
    q = RNG.standard_normal((2, 6, rows, 16)).astype(np.float32).astype(dtype)
    k, v = (RNG.standard_normal((2, 2, S, 16)).astype(np.float32).astype(dtype) for _ in range(2))
    lowest = np.finfo(np.float16 if dtype == np.float16 else np.float32).min
    for fill in (lowest, -np.inf):
        causal = np.arange(S)[None, :] <= np.arange(filled - rows, filled)[:, None]
        mask = np.where(causal, 0.0, fill).astype(np.float32).astype(dtype)[None, None]
        out = K.small_attention(q, k, v, mask, 0.3, 3)
        live = [np.ascontiguousarray(a[:, :, :filled]) for a in (k, v)]
        dynamic = K.small_attention(q, *live, np.ascontiguousarray(mask[..., :filled]) if rows > 1 else None, 0.3, 3)
        np.testing.assert_array_equal(out, dynamic)
        if rows == 1:
            kind = None if dtype == np.float32 else K._half_kind(np.dtype(dtype))
            plan = K.decode_attention_plan(q.shape, k.shape, v.shape, mask.shape, 0.3, half=kind)
            planned = np.empty(out.shape, np.float32)
            np.testing.assert_array_equal(plan(q.astype(np.float32), k, v, mask.astype(np.float32), planned), out)
    if dtype == np.float16:     # -65504 + a score keeps a few bits of it: no stable reference
        return
    dead = np.full((1, 1, rows, S), lowest, np.float32).astype(dtype)
    wide = [np.asarray(a, np.float64) for a in (q, np.repeat(k, 3, axis=1), np.repeat(v, 3, axis=1), dead)]
    expected, _ = _composed_forward(np, *wide, None, 0.3)
    np.testing.assert_allclose(K.small_attention(q, k, v, dead, 0.3, 3), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("q_shape,kv_shape,mask_shape,groups", [
    ((1, 6, 1, 16), (1, 2, 40, 16), (1, 1, 1, 40), 3),     # a decoding step: the loops read the half cache
    ((2, 4, 5, 16), (2, 2, 9, 16), None, 2),               # a few queries: the loops too
    ((5, 4, 24, 16), (5, 4, 24, 16), (5, 1, 1, 24), 1),    # a short sequence: float32 copies
])
@pytest.mark.parametrize("cache", ["own", "own, split over threads", "view"])
def test_small_attention_of_half_arrays_computes_on_their_float32_values(dtype, q_shape, kv_shape, mask_shape,
                                                                         groups, cache, kernel_flavour, monkeypatch):
    """bfloat16/float16 queries, keys and values give small_attention's float32 output for
    their widened values, whether its loops read a half cache's bits in place or it widens
    copies (other paths, views of a longer cache); a replay's plan with the dtype's kind
    gives small_attention's bits."""
    q, k, v, mask, _ = _attention_case(q_shape, kv_shape, mask_shape)
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    if kernel_flavour == "numpy":      # the loops are numba's: the op keeps its composed path
        assert K.small_attention(q, k, v, mask, 0.3, groups) is None
        return
    if cache == "own, split over threads":
        monkeypatch.setattr(K, "_SPLIT_ATTENTION_BYTES", 0)
    if cache == "view":
        k, v = (np.concatenate([a, a[:, :, :3]], axis=2)[:, :, :a.shape[2]] for a in (k, v))
    out = K.small_attention(q, k, v, mask, 0.3, groups)
    widened = K.small_attention(*(a.astype(np.float32) for a in (q, k, v)), mask, 0.3, groups)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, widened, rtol=1e-6, atol=1e-7)
    if q_shape[2] == 1 and cache != "view":
        kind = K._half_kind(np.dtype(dtype))
        plan = K.decode_attention_plan(q.shape, k.shape, v.shape, mask.shape, 0.3, half=kind)
        planned = np.empty(out.shape, np.float32)
        np.testing.assert_array_equal(plan(q.astype(np.float32), k, v, mask, planned), out)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("rows", [1, 3])
def test_half_product_by_a_weight_stored_in_by_out_reads_it_in_place(dtype, rows, kernel_flavour):
    """A few half rows times a half weight stored (K, N) (GPT-2's Conv1D in bfloat16): the
    matrix-vector loops' column bands read its 16-bit values where they lie, giving the float32
    product (+ bias) of the widened values; more rows are left to the op."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((rows, 131)).astype(np.float32).astype(dtype)
    b = rng.standard_normal((131, 70)).astype(np.float32).astype(dtype)
    bias = rng.standard_normal(70).astype(np.float32).astype(dtype)
    out = K.half_matmul(a, b, bias)
    if kernel_flavour == "numpy":      # the column bands are numba's: the op widens the operands
        assert out is None
        return
    expected = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # many rows (a prefill): no kernel takes the weight as it lies, and a transposed copy of
    # 16-bit values costs more than the op's own widening of it to float32
    assert K.half_matmul(np.ones((K._FEW_ROWS + 1, 131), dtype), b) is None


def _causal_mask(L, S, fill, dead_row=None):
    mask = np.where(np.tril(np.ones((L, S), bool)), 0.0, fill).astype(np.float32)
    if dead_row is not None:
        mask[dead_row] = fill
    return mask[None, None]


@pytest.mark.parametrize("fill", [-np.inf, np.finfo(np.float32).min])
@pytest.mark.parametrize("dead_row", [None, 200])
def test_attention_skips_keys_a_causal_mask_hides_without_changing_results(fill, dead_row):
    """Query blocks attend only keys up to their last live one: the results are the full
    computation's, also when a row sees nothing (then its block keeps every key)."""
    L = 401                                      # several query blocks, the last one odd
    q, k, v, _, _ = _attention_case((1, 4, L, 16), (1, 4, L, 16), None)
    mask = _causal_mask(L, L, fill, dead_row)
    limits = K._key_limits(mask, L, L, 4)
    dead_block = next(i for i, (lo, hi) in enumerate(K._query_blocks(L, 4)) if lo <= 200 < hi)
    assert limits[0] < L and (limits[dead_block] == L) == (dead_row is not None)
    out, probs = K.attention(q, k, v, mask, None, 0.25)
    expected_out, expected_probs = _composed_forward(np, *(a.astype(np.float64) for a in (q, k, v, mask)), None, 0.25)
    np.testing.assert_allclose(probs, expected_probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_key_ends_find_each_rows_last_attended_key(dtype):
    """One past each row's last key above the dead level (float16's lowest value: what HF's
    masks of every dtype hold at or below), a NaN counting as attended, 0 for a row that
    attends nothing, in masks of either dtype and broadcast ones."""
    levels = np.array([0.0, -1.0, np.finfo(np.float16).min, np.finfo(np.float32).min, -np.inf, np.nan], np.float32)
    mask = RNG.choice(levels, (2, 3, 7, 9), p=[0.3, 0.2, 0.15, 0.15, 0.15, 0.05]).astype(dtype)
    mask[0, 0, 0] = -np.inf
    mask[1, 2, 3, -1] = np.nan
    expected = np.zeros(mask.shape[:-1], np.int64)
    for index in np.ndindex(*mask.shape[:-1]):
        live = [j for j, value in enumerate(np.asarray(mask[index], np.float32)) if not value <= np.finfo(np.float16).min]
        expected[index] = live[-1] + 1 if live else 0
    assert expected[0, 0, 0] == 0 and expected[1, 2, 3] == 9
    np.testing.assert_array_equal(K.key_ends(mask, 9), expected)
    np.testing.assert_array_equal(K.key_ends(np.broadcast_to(mask[:1, :1], (2, 3, 7, 9)), 9),
                                  np.broadcast_to(expected[:1, :1], (2, 3, 7)))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("L,S", [(1, 40), (3, 40), (40, 40), (40, 200), (401, 401)])
def test_a_nan_in_the_mask_past_every_live_key_still_makes_its_row_nan(L, S):
    """A NaN in an additive mask makes its row's scores, and so its output, NaN, as in torch,
    even where it lies past the last key any row attends: the paths that leave out keys a mask
    hides (a causal prompt's later keys, a static cache's unfilled end; decoding over a static
    cache) count it as attended. The other rows keep their results."""
    q, k, v, _, _ = _attention_case((1, 4, L, 16), (1, 4, S, 16), None)
    # the queries are the last L of `filled` positions, causal; a cache longer than the prompt
    # (S > L) keeps S - filled unfilled keys at its end, hidden from every query
    filled = S if S == L else S - (S - L) // 2
    positions = np.arange(filled - L, filled)
    mask = np.where(np.arange(S)[None, :] <= positions[:, None], 0.0,
                    np.finfo(np.float32).min).astype(np.float32)[None, None]
    mask[..., 0, S - 1] = np.nan
    expected, _ = _composed_forward(np, *(a.astype(np.float64) for a in (q, k, v, mask)), None, 0.25)
    assert np.isnan(expected[:, :, 0]).all() and not np.isnan(expected[:, :, 1:]).any()
    out = F.scaled_dot_product_attention(*(core.tensor(a) for a in (q, k, v, mask)), scale=0.25).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mask_shape", [None, (2, 1, 1, 70), (2, 6, 50, 70)])
def test_attention_serves_query_head_groups_from_shared_key_heads(mask_shape):
    q, _, _, mask, keep = _attention_case((2, 6, 50, 16), (2, 6, 70, 16), mask_shape, dropout=True)
    k = RNG.standard_normal((2, 2, 70, 16)).astype(np.float32)
    v = RNG.standard_normal((2, 2, 70, 24)).astype(np.float32)
    out, probs = K.attention(q, k, v, mask, keep, 0.3, groups=3)
    repeated = [np.repeat(a, 3, axis=1).astype(np.float64) for a in (k, v)]
    ref64 = [None if a is None else a.astype(np.float64) for a in (q, mask, keep)]
    expected_out, expected_probs = _composed_forward(np, ref64[0], *repeated, ref64[1], ref64[2], 0.3)
    np.testing.assert_allclose(probs, expected_probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)
    out_only, no_probs = K.attention(q, k, v, mask, keep, 0.3, groups=3, need_probs=False)
    assert no_probs is None
    np.testing.assert_array_equal(out_only, out)


@pytest.mark.parametrize("m,k,n", [(300, 70, 90), (40, 64, 200), (8, 64, 500), (1, 96, 130), (3, 2000, 7)])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("weight_layout", ["rows", "columns"])
def test_matmul_split_by_rows_or_columns(m, k, n, with_bias, weight_layout):
    """Every path: bands of rows or columns on the workers, and the compiled matrix-vector
    kernels for few rows, against a weight stored (n, k) as Linear does or (k, n)."""
    a = RNG.standard_normal((m, k)).astype(np.float32)
    w = RNG.standard_normal((n, k)).astype(np.float32)
    b = w.T if weight_layout == "rows" else np.ascontiguousarray(w.T)
    bias = RNG.standard_normal(n).astype(np.float32) if with_bias else None
    expected = a.astype(np.float64) @ w.T.astype(np.float64) + (0.0 if bias is None else bias)
    np.testing.assert_allclose(K.matmul(a, b, bias), expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("k", [96, 90])
@pytest.mark.parametrize("four_side_by_side", [True, False])
def test_matrix_vector_rows_read_side_by_side_or_one_at_a_time(k, four_side_by_side, monkeypatch):
    """Both ways a machine may choose to read the weight rows (cpu_jit_parallel.side_by_side)
    give the product, with rows left over after the passes of four, in whole vectors (K = 96,
    the dot kernels with AVX-512) or not (90); the choice itself is made once and kept. A row
    of x gives the same bits alone (a decoding step) as in a batch of 3 or 13 (passes of eight,
    four, two and one rows of x against a weight row)."""
    from mindnlp.core.backends import cpu_jit

    kernels = cpu_jit.parallel()
    if kernels is None:
        pytest.skip("no numba pool here")
    chosen = kernels.side_by_side("rows", kernels._probe_rows)
    assert chosen in (True, False) and kernels.side_by_side("rows", None) is chosen     # measured once, then kept
    monkeypatch.setattr(kernels, "_side_by_side", {"rows": four_side_by_side})
    if hasattr(kernels, "_dot_rows_way"):
        monkeypatch.setattr(kernels._dot_rows_way, "choice", four_side_by_side)
    w = RNG.standard_normal((131, k)).astype(np.float32)
    a = RNG.standard_normal((15, k)).astype(np.float32)
    outs = {}
    for m in (1, 3, 15):
        outs[m] = np.empty((m, 131), np.float32)
        kernels.matvec_rows(a[:m], w, None, outs[m])
        np.testing.assert_allclose(outs[m], a[:m].astype(np.float64) @ w.T.astype(np.float64), rtol=1e-5, atol=1e-4)
        np.testing.assert_array_equal(outs[1], outs[m][:1])
    np.testing.assert_array_equal(outs[3], outs[15][:3])


def test_dot_rows_read_both_ways_to_the_same_bits_and_keep_the_faster(monkeypatch):
    """With AVX-512 the float32 rows' two ways of reading a weight give the same bits, so the
    calls themselves may take turns until each way has read _CHOICE_BYTES, the faster then
    kept (a probe of 40 MB stays in a large third-level cache)."""
    from mindnlp.core.backends import cpu_jit

    kernels = cpu_jit.parallel()
    if kernels is None or kernels.WIDTH != 16:
        pytest.skip("no AVX-512 dot rows here")
    w = RNG.standard_normal((131, 96)).astype(np.float32)
    a = RNG.standard_normal((1, 96)).astype(np.float32)
    four, one = np.empty((1, 131), np.float32), np.empty((1, 131), np.float32)
    for out, mode in ((four, True), (one, False)):
        kernels.dot_rows(kernels._NO_HALF, a, kernels._FLOAT32, (w,), (kernels._NO_BIAS,), (out,), (kernels._NO_HALF,),
                         kernels.parts(), mode)
    np.testing.assert_array_equal(four, one)

    monkeypatch.delenv("MINDNLP_SIDE_BY_SIDE", raising=False)
    monkeypatch.setattr(kernels, "_CHOICE_BYTES", 300)
    now, calls = [0.0], []
    monkeypatch.setattr(kernels.time, "perf_counter", lambda: now[0])

    def kernel(four):           # reading four rows at a time takes 1 s a call here, one row 2 s
        calls.append(four)
        now[0] += 1.0 if four else 2.0

    way, weights = kernels._ChosenWhileRunning(), (np.empty(25, np.float32),)     # 100 bytes a call
    for _ in range(6):
        assert way.choice is None
        way.run(kernel, weights)
    assert calls == [True, False] * 3 and way.choice is True
    way.run(kernel, weights)
    assert calls[-1] is True
    monkeypatch.setenv("MINDNLP_SIDE_BY_SIDE", "0")
    assert kernels._ChosenWhileRunning().choice is False


@pytest.mark.parametrize("k", [5, 16, 131])
@pytest.mark.parametrize("eight_side_by_side", [True, False])
@pytest.mark.parametrize("half", [False, True])
def test_matrix_vector_columns_in_passes_of_eight_rows_or_one(k, eight_side_by_side, half, monkeypatch):
    """x @ b for a weight stored (k, n) (GPT-2's Conv1D), float32 or bfloat16 bits: each
    thread's band of b's rows in passes of eight spread rows and the rows left over (a machine
    where several streams read faster), for bands shorter than a pass, a whole pass and several
    with a rest, or a row at a time; a row of x gives the same bits alone as in a batch."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.backends.cpu_jit_bits import BFLOAT16

    kernels = cpu_jit.parallel()
    if kernels is None:
        pytest.skip("no numba pool here")
    monkeypatch.setattr(kernels, "_side_by_side", {"half columns" if half else "columns": eight_side_by_side})
    b = RNG.standard_normal((k, 70)).astype(np.float32)
    if half:
        bits = (b.view(np.uint32) >> 16).astype(np.uint16)
        b = (bits.astype(np.uint32) << 16).view(np.float32)        # the values the bits hold
    bias = RNG.standard_normal(70).astype(np.float32)
    a = RNG.standard_normal((3, k)).astype(np.float32)
    outs = {}
    for m in (1, 3):
        outs[m] = np.empty((m, 70), np.float32)
        kernels.matvec_columns(a[:m], bits if half else b, bias, outs[m], half=BFLOAT16 if half else None)
        expected = a[:m].astype(np.float64) @ b.astype(np.float64) + bias
        np.testing.assert_allclose(outs[m], expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(outs[1], outs[3][:1])


def test_run_each_calls_every_item_once():
    seen = np.zeros(37, dtype=int)

    def mark(i):
        seen[i] += 1

    cpu_threads.workers.run_each(mark, 37)
    assert (seen == 1).all()


def test_backend_run_each_runs_tasks_whole_on_one_thread_each():
    backend = get_backend("cpu")
    before = [c.num_threads for c in cpu_threads.blas_threads._blas()]
    parts, blas = [], []
    a, w = RNG.standard_normal((256, 64)).astype(np.float32), RNG.standard_normal((96, 64)).astype(np.float32)

    def task(i):
        seen[i] += 1
        cpu_threads.workers.run(lambda lo, hi: parts.append((lo, hi)), 64)   # a kernel's split
        blas.append([c.num_threads for c in cpu_threads.blas_threads._blas()])
        np.testing.assert_allclose(K.matmul(a, w.T), a @ w.T, rtol=1e-5, atol=1e-4)

    n_tasks = backend.TASKS_PER_THREAD * cpu_threads.workers.count
    seen = np.zeros(n_tasks, dtype=int)
    backend.run_each(task, n_tasks)
    assert (seen == 1).all()
    if cpu_threads.workers.count > 1:
        assert parts == [(0, 64)] * n_tasks and all(n == 1 for counts in blas for n in counts)
        parts.clear()
        backend.run_each(task, 1)                 # too few tasks to share out: ops are split
        assert len(parts) == cpu_threads.workers.count
    assert [c.num_threads for c in cpu_threads.blas_threads._blas()] == before

    def fail(i):
        raise ValueError(f"bad task {i}")

    with pytest.raises(ValueError, match="bad task"):
        backend.run_each(fail, n_tasks)
    assert [c.num_threads for c in cpu_threads.blas_threads._blas()] == before


@pytest.mark.parametrize("lead,min_items,max_matrices", [
    ((32, 12), 1, 100), ((32, 12), 8, 100), ((32, 12), 8, 1), ((2, 12), 8, 1000), ((3,), 8, 1), ((), 4, 1),
    ((5, 7, 3), 16, 10),
])
def test_lead_parts_cover_every_matrix_once_in_parts_of_bounded_size(lead, min_items, max_matrices):
    """Attention's work units: every matrix of the leading dims in exactly one part, at least
    min_items parts where there are that many matrices, none over max_matrices unless a
    single matrix is; consecutive entries grouped so small matrices share a part."""
    seen = np.zeros(lead, dtype=int)
    parts = K._lead_parts(lead, min_items, max_matrices)
    for index in parts:
        seen[index] += 1
        assert seen[index].size <= max(max_matrices, 1)
    assert (seen == 1).all()
    assert len(parts) >= min(min_items, math.prod(lead))
    if lead == (32, 12) and max_matrices == 100:
        assert len(parts) == (4 if min_items == 1 else 8)    # 8 sequences of 12 heads (96) a part


def test_attention_restores_blas_threads():
    before = [c.num_threads for c in cpu_threads.blas_threads._blas()]
    K.attention(*_attention_case((8, 4, 64, 32), (8, 4, 64, 32), None)[:3], None, None, 0.2)
    assert [c.num_threads for c in cpu_threads.blas_threads._blas()] == before


def test_workers_cover_the_range_once_and_raise_errors():
    seen = np.zeros(1001, dtype=int)

    inside = []

    def mark(lo, hi):
        seen[lo:hi] += 1
        inside.append(cpu_threads.workers.inside())
        cpu_threads.workers.run(lambda a, b: None, 10)      # nested calls run inline

    assert not cpu_threads.workers.inside()
    cpu_threads.workers.run(mark, 1001)
    assert (seen == 1).all()
    assert not cpu_threads.workers.inside() and inside and (all(inside) or cpu_threads.workers.count == 1)

    def fail(lo, hi):
        raise ValueError(f"bad part {lo}")

    with pytest.raises(ValueError, match="bad part"):
        cpu_threads.workers.run(fail, 1001)


def test_backend_routes_small_and_float64_arrays_to_the_reference(kernel_flavour):
    backend = get_backend("cpu")
    assert backend.fused("gelu", np.zeros(K.MIN_SIZE, np.float32)) is K.gelu
    assert backend.fused("gelu", np.zeros(K.MIN_SIZE, np.float16)) is K.gelu
    # a compiled loop serves any size; the NumPy kernel only arrays worth its extra calls
    small = K.gelu if kernel_flavour == "compiled" else None
    assert backend.fused("gelu", np.zeros(K.MIN_SIZE - 1, np.float32)) is small
    assert backend.fused("softmax", np.zeros(K.MIN_SIZE - 1, np.float32)) is None
    assert backend.fused("gelu", np.zeros(K.MIN_SIZE, np.float64)) is None
    q = np.zeros(K.MIN_SIZE, np.float32)
    assert backend.fused("attention", q, work=K.MIN_WORK["attention"] - 1) is None
    assert backend.fused("attention", q, work=K.MIN_WORK["attention"]) is K.attention


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_op_fused_forward_backward_and_double_backward(approximate):
    data = RNG.standard_normal((64, 777)).astype(np.float32) * 3
    x = core.tensor(data, requires_grad=True)
    x64 = core.tensor(data.astype(np.float64), requires_grad=True)
    y, y64 = F.gelu(x, approximate=approximate), F.gelu(x64, approximate=approximate)
    _assert_close_f32(y.detach().numpy(), y64.detach().numpy(), data)
    (g,) = core.autograd.grad(y.sum(), x, create_graph=True)      # recorded: the composed backward
    (g64,) = core.autograd.grad(y64.sum(), x64, create_graph=True)
    _assert_close_f32(g.detach().numpy(), g64.detach().numpy(), data, abs_per_unit=1e-6)
    (gg,) = core.autograd.grad(g.sum(), x)
    (gg64,) = core.autograd.grad(g64.sum(), x64)
    np.testing.assert_allclose(gg.numpy(), gg64.numpy(), rtol=1e-4, atol=1e-5)
    y.backward(core.ones_like(y))                                  # first order: the fused backward
    _assert_close_f32(x.grad.numpy(), g64.detach().numpy(), data, abs_per_unit=1e-6)


@pytest.mark.parametrize("dtype", [core.float16, core.bfloat16])
def test_gelu_and_softmax_ops_in_half_precision(dtype):
    data = RNG.standard_normal((64, 512)).astype(np.float32)
    x = core.tensor(data, dtype=dtype)
    upcast = x.float().numpy().astype(np.float64)
    # One unit in the last place of the half-precision result: its rounding, and nothing more.
    ulp = 2.0 ** -10 if dtype is core.float16 else 2.0 ** -7
    gelu, probs = F.gelu(x), F.softmax(x, dim=-1)
    assert gelu.dtype == dtype and probs.dtype == dtype
    np.testing.assert_allclose(gelu.float().numpy(), _gelu64(upcast), rtol=ulp, atol=1e-6)
    np.testing.assert_allclose(probs.float().numpy(), _softmax64(upcast), rtol=ulp, atol=1e-6)


def test_softmax_op_fused_gradient_matches_float64():
    data = RNG.standard_normal((32, 1025)).astype(np.float32)
    weights = RNG.standard_normal((32, 1025))
    x, x64 = core.tensor(data, requires_grad=True), core.tensor(data.astype(np.float64), requires_grad=True)
    (F.softmax(x, dim=-1) * core.tensor(weights.astype(np.float32))).sum().backward()
    (F.softmax(x64, dim=-1) * core.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x64.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_sdpa_op_fused_matches_float64_forward_and_gradients():
    shapes = [(4, 6, 160, 32), (4, 6, 192, 32), (4, 6, 192, 32)]     # scores above MIN_WORK
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    mask = RNG.random((4, 1, 1, 192)) > 0.2
    results = []
    for dtype in (core.float32, core.float64):
        q, k, v = (core.tensor(a, dtype=dtype, requires_grad=True) for a in arrays)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=core.tensor(mask))
        (out * out).sum().backward()
        results.append([out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()])
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("shape,n_dims", [((40, 33, 384), 1), ((6, 7, 96, 50), 2), ((3, 50000), 1)])
def test_layer_norm_matches_reference(centered, shape, n_dims):
    from mindnlp.core.nn.functional.normalization import _forward_stats

    x = (RNG.standard_normal(shape) * 3 + 1).astype(np.float32)
    weight = RNG.standard_normal(shape[-n_dims:]).astype(np.float32)
    bias = RNG.standard_normal(shape[-n_dims:]).astype(np.float32) if centered else None
    out, mean, rstd = K.layer_norm(x, weight, bias, 1e-5, centered, n_dims)
    axes = tuple(range(x.ndim - n_dims, x.ndim))
    xhat, ref_mean, ref_rstd = _forward_stats(np, x.astype(np.float64), axes, 1e-5, centered)
    expected = xhat * weight + (bias if centered else 0.0)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(rstd, ref_rstd, rtol=1e-5)
    if centered:
        np.testing.assert_allclose(mean, ref_mean, rtol=1e-5, atol=1e-6)
    else:
        assert mean is None


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("shape", [(3, 100), (5, 7, 576), (2 * K._BLOCKS_PER_THREAD * (K.BLOCK // 96) + 3, 96)])
def test_half_layer_norm_is_the_float32_norm_rounded(dtype, centered, shape, kernel_flavour):
    """A bfloat16/float16 x gives its dtype's out: the float32 norm of its values rounded once,
    to the bit, whether in a block of rows, across blocks or over the workers; the statistics
    are the float32 ones. Without numba the float32 result comes back, for the op to round."""
    x = (RNG.standard_normal(shape) * 3 + 1).astype(np.float32).astype(dtype)
    weight = RNG.standard_normal(shape[-1]).astype(np.float32).astype(dtype)
    bias = RNG.standard_normal(shape[-1]).astype(np.float32).astype(dtype) if centered else None
    out, mean, rstd = K.layer_norm(x, weight, bias, 1e-5, centered, 1)
    out32, mean32, rstd32 = K.layer_norm(x.astype(np.float32), weight.astype(np.float32),
                                         None if bias is None else bias.astype(np.float32), 1e-5, centered, 1)
    if kernel_flavour == "compiled":
        assert out.dtype == np.dtype(dtype) and out.shape == x.shape
        np.testing.assert_array_equal(out.astype(np.float32), out32.astype(dtype).astype(np.float32))
    else:       # the float32 result, which the op rounds
        np.testing.assert_array_equal(out, out32)
    np.testing.assert_array_equal(rstd, rstd32)
    if centered:
        np.testing.assert_array_equal(mean, mean32)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("rows", [1, 3, 77])
def test_activations_and_norms_split_over_the_pool_give_the_one_thread_bits(dtype, rows, kernel_flavour):
    """A prompt's activations and norms (at least _POOL_VALUES values) run split over numba's
    pool: every element of SiLU and tanh-GELU, gated or not, and every normalised row with its
    statistics are the bits the loop gives on one thread; a decoding step's row runs the loop
    itself."""
    if kernel_flavour == "numpy" or cpu_jit.parallel() is None:
        return
    bits = cpu_jit.half_bits()
    kind = None if dtype == np.float32 else bits.kind_of(np.dtype(dtype))
    width = 3 * K._POOL_VALUES // 7 + 5         # 77 rows are 33 times the pool's minimum, odd in every split
    x, up = ((RNG.standard_normal((rows, width)) * 3).astype(np.float32).astype(dtype) for _ in range(2))
    as_bits = (lambda a: a) if kind is None else (lambda a: a.view(np.uint16))
    compiled = cpu_jit.load()
    for tanh_gelu in (False, True):
        for gate in (None, up):
            flat_gate = None if gate is None else as_bits(gate.reshape(-1))
            split = K.activation_into(as_bits(x.reshape(-1)), flat_gate, tanh_gelu, as_bits(np.empty(x.size, dtype)), kind)
            alone = as_bits(np.empty(x.size, dtype))
            if kind is None:
                (compiled.gated_gelu_tanh if tanh_gelu else compiled.gated_silu)(x.reshape(-1), flat_gate, alone)
            else:
                bits.activation_half(x.reshape(-1).view(np.uint16), flat_gate, kind, tanh_gelu, alone)
            np.testing.assert_array_equal(split, alone)
    weight, bias = (RNG.standard_normal(width).astype(np.float32) for _ in range(2))
    for centered in (False, True):
        results = []
        for norm in ("split", "alone"):
            out, mean, rstd = as_bits(np.empty(x.shape, dtype)), np.zeros(rows, np.float32), np.empty(rows, np.float32)
            if norm == "split":
                K.layer_norm_into(as_bits(x), weight, bias, 1e-5, centered, out, mean, rstd, kind)
            elif kind is None:
                compiled.layer_norm(x, weight, bias, np.float32(1e-5), centered, out, mean, rstd)
            else:
                bits.layer_norm_half(x.view(np.uint16), kind, weight, bias, np.float32(1e-5), centered, out, mean, rstd)
            results.append((out, mean, rstd))
        for split, alone in zip(*results):
            np.testing.assert_array_equal(split, alone)


def test_layer_norm_op_fused_gradient_matches_float64():
    data = RNG.standard_normal((64, 2, 384)).astype(np.float32)
    w = RNG.standard_normal(384).astype(np.float32)
    results = []
    for dtype in (core.float32, core.float64):
        x = core.tensor(data, dtype=dtype, requires_grad=True)
        weight, bias = core.tensor(w, dtype=dtype, requires_grad=True), core.tensor(w[::-1].copy(), dtype=dtype)
        out = F.layer_norm(x, (384,), weight, bias)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), weight.grad.numpy()])
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("centered", [True, False])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,n_dims", [((2 * K._BLOCKS_PER_THREAD * (K.BLOCK // 96) + 3, 96), 1),
                                          ((3, 5, 7, 6), 2)])
def test_norm_backward_kernel_matches_float64(centered, affine, shape, n_dims):
    """layer_norm's and rms_norm's gradients (input, weight, bias) in float32, from the
    one-pass kernel (compiled flavour; the NumPy one composes them), against float64's
    composed ones; the first shape's rows are split over the threads, each summing its own
    weight and bias gradients."""
    normalized = shape[-n_dims:]
    data = (RNG.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    upstream = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal(normalized).astype(np.float32)
    results = []
    for dtype in (core.float32, core.float64):
        x = core.tensor(data, dtype=dtype, requires_grad=True)
        weight = core.tensor(w, dtype=dtype, requires_grad=True) if affine else None
        bias = core.tensor(w * 0.5, dtype=dtype, requires_grad=True) if affine and centered else None
        out = F.layer_norm(x, normalized, weight, bias) if centered else F.rms_norm(x, normalized, weight)
        out.backward(core.tensor(upstream, dtype=dtype))
        results.append([t.grad.numpy() for t in (x, weight, bias) if t is not None])
    for fused, exact in zip(*results):
        assert fused.dtype == np.float32
        np.testing.assert_allclose(fused, exact, rtol=1e-4, atol=1e-4 * np.abs(exact).max())


def test_norm_backward_with_a_graph_of_the_gradient_composes_it():
    """create_graph keeps the composed (differentiable) gradient: its own gradient exists."""
    x = core.tensor(RNG.standard_normal((4, 8)).astype(np.float32), requires_grad=True)
    (gx,) = core.autograd.grad(F.layer_norm(x, (8,)).pow(2).sum(), x, create_graph=True)
    (ggx,) = core.autograd.grad(gx.sum(), x)
    assert ggx is not None and np.isfinite(ggx.numpy()).all()


@pytest.mark.parametrize("a_shape,b_shape", [
    ((32, 12, 64, 32), (32, 12, 32, 64)),      # attention scores: split over the batch
    ((1, 12, 64, 32), (5, 1, 32, 48)),         # both operands broadcast
    ((40, 64), (9, 64, 16)),                   # a plain matrix against a stack
    ((3, 512, 512), (3, 512, 512)),            # a few large products: each split over the workers
    ((1, 300, 200), (200, 260)),               # a stack against a matrix: one product
    ((1, 40, 30), (3, 30, 20)),                # a few small products
])
def test_batched_matmul_matches_numpy(a_shape, b_shape):
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = RNG.standard_normal(b_shape).astype(np.float32)
    before = [c.num_threads for c in cpu_threads.blas_threads._blas()]
    out = K.batched_matmul(a, b)
    assert [c.num_threads for c in cpu_threads.blas_threads._blas()] == before
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_matmul_op_batched_gradients_match_float64():
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in ((8, 6, 40, 24), (8, 6, 24, 40))]
    results = []
    for dtype in (core.float32, core.float64):
        a, b = (core.tensor(x, dtype=dtype, requires_grad=True) for x in arrays)
        out = core.matmul(a, b)
        (out * out).sum().backward()
        results.append([out.detach().numpy(), a.grad.numpy(), b.grad.numpy()])
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-4, atol=1e-3)


def test_blas_hold_is_counted_across_nested_holders():
    before = [c.num_threads for c in cpu_threads.blas_threads._blas()]
    with cpu_threads.blas_threads.single():
        with cpu_threads.blas_threads.single():
            assert all(c.num_threads == 1 for c in cpu_threads.blas_threads._blas())
        assert all(c.num_threads == 1 for c in cpu_threads.blas_threads._blas())
    assert [c.num_threads for c in cpu_threads.blas_threads._blas()] == before


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_kernels_work_in_a_forked_child():
    import os

    x, w = np.ones((2, 300), np.float32), np.full((400, 300), 0.5, np.float32)
    K.gelu(np.ones(ODD_SIZE, np.float32))          # the parent's pools exist before the fork
    K.matmul(x, w.T)                               # (numba's, for a few-row product, too)
    pid = os.fork()
    if pid == 0:
        ok = np.allclose(K.gelu(np.ones(ODD_SIZE, np.float32)), 0.8413447)
        ok = ok and np.allclose(K.matmul(x, w.T), 150.0)    # GNU OpenMP cannot run after fork
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_set_num_threads_sets_workers_and_blas():
    import numba

    from mindnlp.core.backends import cpu_jit_parallel

    saved = core.get_num_threads()
    blas_saved = [c.num_threads for c in cpu_threads.blas_threads._blas()]
    numba_saved = numba.get_num_threads()
    try:
        core.set_num_threads(1)
        assert core.get_num_threads() == 1 and all(c.num_threads == 1 for c in cpu_threads.blas_threads._blas())
        # the numba kernels' split follows (they keep the count: numba's getter takes a lock)
        assert cpu_jit_parallel.parts() == numba.get_num_threads() == 1
        _assert_close_f32(K.gelu(np.ones(ODD_SIZE, np.float32)), _gelu64(np.ones(ODD_SIZE)), np.ones(ODD_SIZE))
        core.set_num_threads(3)
        assert core.get_num_threads() == 3
        seen = np.zeros(100, dtype=int)
        cpu_threads.workers.run(lambda lo, hi: seen.__setitem__(slice(lo, hi), seen[lo:hi] + 1), 100)
        assert (seen == 1).all()
    finally:
        cpu_threads.workers.resize(saved)
        for c, n in zip(cpu_threads.blas_threads._blas(), blas_saved):
            c.set_num_threads(n)
        numba.set_num_threads(numba_saved)
        cpu_jit_parallel.set_parts(numba_saved)
    with pytest.raises(RuntimeError, match="positive integer"):
        core.set_num_threads(0)


def test_attention_output_is_laid_out_for_merging_heads():
    """Models turn (batch, heads, L, E) back into (batch, L, heads * E): no copy needed."""
    q, k, v, _, _ = _attention_case((4, 6, 96, 16), (4, 6, 96, 16), None)
    out, _ = K.attention(q, k, v, None, None, 0.25, need_probs=False)
    assert np.swapaxes(out, 1, 2).flags.c_contiguous
    expected, _ = _composed_forward(np, *(a.astype(np.float64) for a in (q, k, v)), None, None, 0.25)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_attention_reads_strided_heads_and_a_learned_position_bias():
    """T5's layout: heads are views of (batch, L, heads, E) rows, the bias a per-row float mask
    with no dead entry (so query blocks are large) given as a transposed view; keys whose
    last axis is strided (not readable by BLAS in place) are copied once."""
    L, heads = 300, 3
    q, k, v = (np.swapaxes(RNG.standard_normal((2, L, heads, 16)).astype(np.float32), 1, 2) for _ in range(3))
    bias = np.transpose(RNG.standard_normal((L, L, heads)).astype(np.float32), (2, 0, 1))[None]
    k_strided = np.swapaxes(np.ascontiguousarray(np.swapaxes(k, -1, -2)), -1, -2)
    out, probs = K.attention(q, k_strided, v, bias, None, 1.0)
    expected_out, expected_probs = _composed_forward(np, *(a.astype(np.float64) for a in (q, k, v, bias)), None, 1.0)
    np.testing.assert_allclose(probs, expected_probs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, expected_out, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not __import__("mindnlp.core.backends.numpy_backend", fromlist=["x"]).keep_freed_memory(),
                    reason="malloc tuning applies to glibc only")
def test_freed_array_memory_is_reused_without_page_faults():
    import resource

    def minor_faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    np.ones(1 << 20, np.float32)                  # 4 MiB: mmapped under glibc's default settings
    before = minor_faults()
    for _ in range(10):
        np.ones(1 << 20, np.float32)              # each would fault in 1,024 fresh pages
    assert minor_faults() - before < 200


def test_rotary_matches_formula_and_keeps_the_projection_layout(kernel_flavour):
    rows = RNG.standard_normal((2, 37, 5, 16)).astype(np.float32)      # (B, L, H, D) memory
    x = np.swapaxes(rows, 1, 2)                                         # heads split from it
    cos, sin = (RNG.standard_normal((2, 37, 16)).astype(np.float32) for _ in range(2))
    out = K.rotary(x, cos, sin)
    if kernel_flavour == "numpy":
        assert out is None                       # the op computes it with NumPy instead
        return
    x64 = x.astype(np.float64)
    rotated = np.concatenate((-x64[..., 8:], x64[..., :8]), axis=-1)
    expected = x64 * cos[:, None].astype(np.float64) + rotated * sin[:, None].astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-6)
    assert np.swapaxes(out, 1, 2).flags.c_contiguous
    assert K.rotary(np.ascontiguousarray(x), cos, sin) is None          # other layouts: the op's NumPy path


def test_matrix_vector_loops_refuse_bits_without_their_kind():
    """uint16 bits read as float32 values, or float32 values given a half kind, would be silently
    wrong: the loops raise instead."""
    parallel = cpu_jit.parallel()
    if parallel is None:
        pytest.skip("the loops are numba's, and numba is not installed")
    x, out = np.ones((1, 8), np.float32), np.empty((1, 4), np.float32)
    with pytest.raises(TypeError, match="uint16"):
        parallel.matvec_columns(x, np.ones((8, 4), np.uint16), None, out)
    with pytest.raises(TypeError, match="uint16"):
        parallel.matvec_columns(x, np.ones((8, 4), np.float32), None, out, half=0)
    q, kv = np.ones((1, 2, 1, 8), np.float32), np.ones((1, 2, 4, 8), np.uint16)
    with pytest.raises(TypeError, match="uint16"):
        parallel.attention(q, kv, kv, None, 0.5, np.empty((1, 2, 1, 8), np.float32), False)
