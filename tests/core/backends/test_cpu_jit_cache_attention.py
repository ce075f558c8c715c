"""cpu_jit_cache_attention: grouped-query attention of a few queries per head against a cache,
against the float64 attention of the same values: float32 and half caches, keys after the
last whole block, depths of an odd number of vectors, several queries per head, shared and
per-head masks, rows that may attend nothing; the same bits on one thread and split; and
cpu_jit_parallel.attention handing it grouped heads only."""
import ml_dtypes
import numpy as np
import pytest

from mindnlp.core.backends import cpu_jit
from tests.core.avx2_width import run_at_avx2_width

RNG = np.random.default_rng(0)
KINDS = {np.float32: -1, ml_dtypes.bfloat16: 0, np.float16: 1}     # cpu_jit_parallel's kinds


@pytest.fixture
def kernels():
    module = cpu_jit.cache_attention()
    if module is None:
        pytest.skip("no vector attention here (no numba pool, or no AVX2/AVX-512)")
    return module


def _case(batch, heads, kv_heads, queries, cache, depth_vectors, value_vectors, mask_kind, dtype, width):
    q = RNG.standard_normal((batch, heads, queries, depth_vectors * width)).astype(np.float32)
    k = RNG.standard_normal((batch, kv_heads, cache, depth_vectors * width)).astype(np.float32).astype(dtype)
    v = RNG.standard_normal((batch, kv_heads, cache, value_vectors * width)).astype(np.float32).astype(dtype)
    mask = None
    if mask_kind == "shared":
        mask = RNG.standard_normal((1, 1, cache)).astype(np.float32)
    elif mask_kind == "per head and query":
        mask = np.where(RNG.random((batch * heads, queries, cache)) < 0.2, -np.inf,
                        RNG.standard_normal((batch * heads, queries, cache))).astype(np.float32)
        mask[0, 0] = -np.inf        # a row that may attend nothing
    return q, k, v, mask


def _expected(q, k, v, mask, scale, keys):
    groups = q.shape[1] // k.shape[1]
    k64, v64 = (np.repeat(np.asarray(a, np.float64)[:, :, :keys], groups, axis=1) for a in (k, v))
    scores = np.einsum("bhqd,bhsd->bhqs", q.astype(np.float64), k64) * scale
    if mask is not None:      # (1, 1, S) shared, or (B H, L, S)
        lead = (q.shape[0], q.shape[1]) if mask.shape[0] > 1 else (1, 1)
        scores = scores + np.asarray(mask, np.float64)[..., :keys].reshape(lead + (mask.shape[1], keys))
    top = scores.max(-1, keepdims=True)
    dead = ~np.isfinite(top)
    probs = np.exp(scores - np.where(dead, 0.0, top))
    probs = probs / np.where(dead, 1.0, probs.sum(-1, keepdims=True))
    return np.einsum("bhqs,bhsd->bhqd", probs, v64)


@pytest.mark.parametrize("dtype", list(KINDS))
@pytest.mark.parametrize("batch,heads,kv_heads,queries,cache,keys,depth,value_depth,mask_kind", [
    (1, 9, 3, 1, 150, 141, 2, 2, "shared"),              # a static cache's filled part, keys after whole blocks
    (2, 6, 2, 1, 45, 45, 1, 3, "per head and query"),     # an odd number of value vectors, a dead row
    (1, 4, 1, 3, 7, 7, 2, 1, None),                        # fewer keys than a block, three queries per head
    (2, 8, 2, 2, 200, 200, 1, 2, "per head and query"),   # several chunks of values
])
def test_matches_float64_attention_and_splits_to_the_same_bits(kernels, dtype, batch, heads, kv_heads, queries,
                                                                cache, keys, depth, value_depth, mask_kind):
    q, k, v, mask = _case(batch, heads, kv_heads, queries, cache, depth, value_depth, mask_kind, dtype,
                          kernels.WIDTH)
    assert kernels.serves(q.shape[3], v.shape[3], keys)
    raw = [a if dtype is np.float32 else a.view(np.uint16) for a in (k, v)]
    outs = []
    for split in (False, True):
        out = np.full(q.shape[:3] + (v.shape[3],), np.nan, np.float32)
        kernels.attention(q, *raw, KINDS[dtype], mask, 0.3, out, split, keys)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0], _expected(q, k, v, mask, 0.3, keys), rtol=1e-5, atol=1e-5)
    if mask_kind == "per head and query":
        assert (outs[0][0, 0, 0] == 0).all()        # attends nothing: zeros, as the loops give


def test_serves_whole_vectors_only(kernels):
    width = kernels.WIDTH
    assert kernels.serves(2 * width, width, 1)
    assert not kernels.serves(width + 4, width, 10)
    assert not kernels.serves(width, width // 2, 10)
    assert not kernels.serves(width, width, 0)


def test_parallel_attention_hands_it_grouped_heads_only(kernels, monkeypatch):
    """cpu_jit_parallel.attention: query heads sharing key/value heads go here, heads with
    their own key/value heads stay with the loops; both give the float64 attention."""
    parallel = cpu_jit.parallel()
    calls = []
    monkeypatch.setattr(kernels, "attention", lambda *a, f=kernels.attention: calls.append(a[0].shape) or f(*a))
    width = kernels.WIDTH
    for heads, kv_heads in ((6, 2), (4, 4)):
        q, k, v, mask = _case(1, heads, kv_heads, 1, 30, 1, 1, "shared", np.float32, width)
        out = np.empty(q.shape, np.float32)
        parallel.attention(q, k, v, mask, 0.25, out, False)
        np.testing.assert_allclose(out, _expected(q, k, v, mask, 0.25, 30), rtol=1e-5, atol=1e-5)
    assert calls == [(1, 6, 1, width)]


def test_the_avx2_build_at_width_8():
    """The AVX2 build, in a process asking for width 8 with a numba cache of its own."""
    run_at_avx2_width(
        "import numpy as np\n"
        "from mindnlp.core.backends import cpu_jit\n"
        "module = cpu_jit.cache_attention()\n"
        "assert module is not None and module.WIDTH == 8\n"
        "rng = np.random.default_rng(1)\n"
        "q = rng.standard_normal((1, 6, 2, 24)).astype(np.float32)\n"
        "k, v = (rng.standard_normal((1, 2, 37, 24)).astype(np.float32) for _ in range(2))\n"
        "outs = []\n"
        "for split in (False, True):\n"
        "    out = np.empty((1, 6, 2, 24), np.float32)\n"
        "    module.attention(q, k, v, -1, None, 0.5, out, split, 37)\n"
        "    outs.append(out)\n"
        "assert np.array_equal(outs[0], outs[1])\n"
        "scores = np.einsum('hqd,hsd->hqs', q[0].astype(np.float64), np.repeat(k[0], 3, 0).astype(np.float64)) * 0.5\n"
        "p = np.exp(scores - scores.max(-1, keepdims=True))\n"
        "expected = (p / p.sum(-1, keepdims=True)) @ np.repeat(v[0], 3, 0).astype(np.float64)\n"
        "assert np.allclose(outs[0][0], expected, rtol=1e-5, atol=1e-5)\n"
        "print('ok')\n")
