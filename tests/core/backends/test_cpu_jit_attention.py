"""cpu_jit_attention: attention of short sequences in one call over every head, against the
float64 softmax attention of the same values: layouts read in place, masks of every
broadcast shape, grouped key/value heads, dead queries, NaN, the same bits on one thread or
split, the cases it declines, and small_attention taking it."""
import math

import ml_dtypes
import numpy as np
import pytest

from mindnlp.core.backends import cpu_jit, cpu_kernels

RNG = np.random.default_rng(0)
_F32 = np.float32


def _kernel():
    kernel = cpu_jit.short_attention()
    if kernel is None:
        pytest.skip("no short-sequence attention here (no numba pool, or not an AVX-512 CPU)")
    return kernel


def _reference(q, k, v, mask, scale):
    groups = q.shape[1] // k.shape[1]
    k64, v64 = (np.repeat(a.astype(np.float64), groups, axis=1) for a in (k, v))
    scores = q.astype(np.float64) @ np.swapaxes(k64, -1, -2) * scale
    if mask is not None:
        scores = scores + mask
    top = scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores - np.where(np.isfinite(top), top, 0))
    total = weights.sum(axis=-1, keepdims=True)
    probs = np.where(total > 0, weights / np.where(total > 0, total, 1), 0)
    return probs @ v64


def _heads_inside_rows(batch, length, heads, depth):
    """(batch, heads, length, depth) views of (batch, length, heads, depth) memory, as a
    model's projections give them."""
    return np.swapaxes(RNG.standard_normal((batch, length, heads, depth)).astype(_F32), 1, 2)


def _padding_mask(batch, keys, dead=np.finfo(_F32).min):
    lengths = RNG.integers(1, keys + 1, batch)
    return np.where(np.arange(keys)[None, :] < lengths[:, None], 0, dead).astype(_F32).reshape(batch, 1, 1, keys)


@pytest.mark.parametrize("batch, heads, kv_heads, queries, keys, depth, out_depth", [
    (2, 3, 3, 8, 8, 16, 16), (3, 4, 4, 24, 24, 32, 32), (2, 6, 2, 17, 40, 64, 32), (1, 2, 1, 33, 128, 16, 48),
    (4, 12, 12, 12, 12, 64, 64)])
@pytest.mark.parametrize("mask_kind", [None, "padding", "padding -inf", "per query", "per head"])
@pytest.mark.parametrize("threads", [True, False])
def test_matches_float64_attention(batch, heads, kv_heads, queries, keys, depth, out_depth, mask_kind, threads):
    kernel = _kernel()
    q = _heads_inside_rows(batch, queries, heads, depth)
    k = _heads_inside_rows(batch, keys, kv_heads, depth)
    v = _heads_inside_rows(batch, keys, kv_heads, out_depth)
    mask = {None: None, "padding": lambda: _padding_mask(batch, keys), "padding -inf": lambda: _padding_mask(
        batch, keys, -np.inf), "per query": lambda: RNG.standard_normal((batch, 1, queries, keys)).astype(_F32),
            "per head": lambda: RNG.standard_normal((heads, 1, keys)).astype(_F32)}[mask_kind]
    mask = mask() if mask is not None else None
    scale = 1 / math.sqrt(depth)
    out = kernel.attention(q, k, v, mask, scale, threads)
    assert out.shape == (batch, heads, queries, out_depth)
    assert np.swapaxes(out, 1, 2).flags.c_contiguous      # laid out as (batch, queries, heads, depth)
    np.testing.assert_allclose(out, _reference(q, k, v, mask, scale), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("heads, kv_heads, queries, keys, depth", [(3, 3, 24, 24, 32), (6, 2, 17, 40, 64),
                                                                   (2, 1, 33, 128, 16)])
@pytest.mark.parametrize("threads", [True, False])
def test_bfloat16_scores_match_float64_attention(heads, kv_heads, queries, keys, depth, threads):
    """Queries and keys given as bfloat16 bits (values float32) take their scores from the
    bfloat16 dot instruction: the attention of those values within float32 summation error;
    a depth that is not a multiple of its 32 pairs is declined."""
    kernel = _kernel()
    if not cpu_jit.gemm("bfloat16"):
        pytest.skip("no bfloat16 dot instruction here")
    q, k = (np.ascontiguousarray(_heads_inside_rows(2, n, h, depth).astype(ml_dtypes.bfloat16)) for n, h in (
        (queries, heads), (keys, kv_heads)))
    v = _heads_inside_rows(2, keys, kv_heads, 32)
    mask = _padding_mask(2, keys)
    out = kernel.attention(q.view(np.uint16), k.view(np.uint16), v, mask, 0.2, threads)
    if depth % 32:
        assert out is None
        return
    np.testing.assert_allclose(out, _reference(q.astype(_F32), k.astype(_F32), v, mask, 0.2), rtol=2e-5, atol=2e-6)


def test_reads_contiguous_heads_and_fused_projections_in_place():
    kernel = _kernel()
    batch, heads, length, depth = 2, 4, 20, 32
    fused = RNG.standard_normal((batch, length, 3, heads, depth)).astype(_F32)   # one qkv projection
    q, k, v = (np.swapaxes(fused[:, :, t], 1, 2) for t in range(3))
    contiguous = np.ascontiguousarray(q)                                         # (batch, heads, length, depth)
    mask = _padding_mask(batch, length)
    expected = _reference(q, k, v, mask, 0.2)
    np.testing.assert_allclose(kernel.attention(q, k, v, mask, 0.2, True), expected, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(kernel.attention(contiguous, k, v, mask, 0.2, True), expected, rtol=2e-5, atol=2e-6)


def test_same_bits_on_one_thread_or_split():
    kernel = _kernel()
    q, k, v = (_heads_inside_rows(5, 24, 6, 32) for _ in range(3))
    mask = _padding_mask(5, 24)
    assert np.array_equal(kernel.attention(q, k, v, mask, 0.3, True), kernel.attention(q, k, v, mask, 0.3, False))


@pytest.mark.parametrize("queries, dead_query", [(128, None), (100, None), (128, "everywhere"),
                                                (128, "in one sequence"), (64, None)])
@pytest.mark.parametrize("threads", [True, False])
def test_a_causal_prompt_leaves_out_the_keys_its_query_chunks_cannot_see(queries, dead_query, threads,
                                                                          monkeypatch):
    """Under a causal mask (prompts after a cache's first positions) each chunk of queries is
    taken over the keys its queries may attend only: the same bits as over every key (the
    left-out keys add exact zeros), the float64 attention within float32 error; a query that
    may attend nothing, in any sequence (a left-padded batch's padding), keeps every key for
    all, and 64 queries or fewer stay one chunk."""
    from mindnlp.core.backends import cpu_jit_attention

    kernel = _kernel()
    keys = queries + 8
    q = _heads_inside_rows(2, queries, 6, 32)
    k, v = (_heads_inside_rows(2, keys, 3, 32) for _ in range(2))
    mask = np.where(np.arange(keys)[None, :] <= np.arange(queries)[:, None] + 8, 0, np.finfo(_F32).min)
    mask = np.repeat(mask.astype(_F32)[None, None], 2, axis=0)
    if dead_query == "everywhere":
        mask[..., 70, :] = np.finfo(_F32).min
    elif dead_query == "in one sequence":
        mask[0, :, 70, :] = np.finfo(_F32).min
    chunks = []
    monkeypatch.setattr(cpu_jit_attention, "_key_limits", lambda *a, f=cpu_jit_attention._key_limits: chunks.append(
        f(*a)) or chunks[-1])
    out = kernel.attention(q, k, v, mask, 0.3, threads)
    limits, chunk = chunks[0]
    if dead_query is None and queries > 64:
        assert chunk == 32 and list(limits) == [min(c + 32 + 8, keys) for c in range(0, queries, 32)]
    else:
        assert list(limits) == [keys] and chunk == queries
    monkeypatch.setattr(cpu_jit_attention, "_key_limits", lambda m, n, s: (np.array([s], np.int64), n))
    assert np.array_equal(out, kernel.attention(q, k, v, mask, 0.3, threads))
    np.testing.assert_allclose(out, _reference(q, k, v, mask, 0.3), rtol=2e-5, atol=2e-6)


def test_a_query_that_may_attend_nothing_gets_zeros_and_nan_stays_nan():
    kernel = _kernel()
    q, k, v = (_heads_inside_rows(1, 8, 2, 16) for _ in range(3))
    mask = np.zeros((1, 1, 8, 8), _F32)
    mask[0, 0, 3] = -np.inf                 # query 3 may attend no key
    out = kernel.attention(q, k, v, mask, 0.25, False)
    assert np.all(out[:, :, 3] == 0)
    expected = _reference(q, k, v, mask, 0.25)
    np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-6)
    q = q.copy()
    q[0, 1, 5, 0] = np.nan
    out = kernel.attention(q, k, v, None, 0.25, False)
    assert np.all(np.isnan(out[0, 1, 5])) and not np.isnan(np.delete(out[0, 1], 5, axis=0)).any()
    assert not np.isnan(out[0, 0]).any()


@pytest.mark.parametrize("case", ["depth not whole vectors", "float64", "strided rows", "mask does not broadcast",
                                  "batch mismatch"])
def test_declines_what_it_does_not_serve(case):
    kernel = _kernel()
    batch, heads, queries, keys, depth = (1, 2, 8, 8, 24) if case == "depth not whole vectors" else (2, 2, 8, 8, 16)
    q = RNG.standard_normal((batch, heads, queries, depth)).astype(_F32)
    k, v = (RNG.standard_normal((batch, heads, keys, depth)).astype(_F32) for _ in range(2))
    mask = None
    if case == "float64":
        q = q.astype(np.float64)
    elif case == "strided rows":
        q = RNG.standard_normal((batch, heads, queries, 2 * depth)).astype(_F32)[..., ::2]
    elif case == "mask does not broadcast":
        mask = np.zeros((3, 1, 1, keys), _F32)
    elif case == "batch mismatch":
        k = k[:1]
    assert kernel.attention(q, k, v, mask, 0.5, True) is None


def test_small_attention_takes_it_for_an_encoders_batch():
    kernel = _kernel()
    q, k, v = (_heads_inside_rows(8, 24, 4, 32) for _ in range(3))
    mask = _padding_mask(8, 24)
    out = cpu_kernels.small_attention(q, k, v, mask, 0.2)
    blas = cpu_kernels.attention(q, k, v, mask, None, 0.2, 1, need_probs=False)[0]
    np.testing.assert_allclose(out, blas, rtol=2e-5, atol=2e-6)
    assert np.array_equal(out, kernel.attention(q, k, v, mask, 0.2, True))


def test_small_attention_gives_bfloat16_heads_scores_from_the_dot_instruction(monkeypatch):
    """A bfloat16 prompt's heads (a depth of whole pairs of 16 lanes) reach the short kernel as
    bits, the values widened: within float32 summation error of the widened attention."""
    kernel = _kernel()
    if not cpu_jit.gemm("bfloat16"):
        pytest.skip("no bfloat16 dot instruction here")
    dtypes = []
    monkeypatch.setattr(kernel, "attention", lambda q, k, v, *a, f=kernel.attention, **kw: dtypes.append(
        (q.dtype, k.dtype, v.dtype)) or f(q, k, v, *a, **kw))
    q, k, v = (_heads_inside_rows(2, 24, 4, 64).astype(ml_dtypes.bfloat16) for _ in range(3))
    mask = _padding_mask(2, 24)
    out = cpu_kernels.small_attention(q, k, v, mask, 0.2)
    np.testing.assert_allclose(out, _reference(*(a.astype(_F32) for a in (q, k, v)), mask, 0.2), rtol=2e-5, atol=2e-6)
    assert dtypes == [(np.uint16, np.uint16, _F32)]


@pytest.mark.parametrize("queries, keys", [(4, 4), (1, 40), (8, 129)])
def test_small_attention_keeps_decoding_steps_and_long_keys_elsewhere(queries, keys, monkeypatch):
    """A decoding step's few queries, and keys beyond the bound, go to the other paths (in the
    same layout): the short kernel is not asked."""
    _kernel()
    monkeypatch.setattr(cpu_jit, "short_attention", lambda: pytest.fail("the short kernel was asked"))
    q = _heads_inside_rows(2, queries, 4, 16)
    k, v = (_heads_inside_rows(2, keys, 4, 16) for _ in range(2))
    out = cpu_kernels.small_attention(np.ascontiguousarray(q), np.ascontiguousarray(k), np.ascontiguousarray(v),
                                      None, 0.25)
    np.testing.assert_allclose(out, _reference(q, k, v, None, 0.25), rtol=2e-5, atol=2e-6)
    assert np.swapaxes(out, 1, 2).flags.c_contiguous
