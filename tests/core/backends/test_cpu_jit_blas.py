"""cpu_jit_blas: matrix products split by rows over numba's pool, BLAS called by address on
each band, against the float64 product; every operand layout BLAS can read in place, the
ones it cannot (declined, nothing written), and cpu_kernels.matmul handing its mid-sized
products to it."""
import numpy as np
import pytest

from mindnlp.core.backends import cpu_jit
from mindnlp.core.backends import cpu_kernels as K
from mindnlp.core.backends.cpu_threads import blas_threads, workers

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def blas():
    kernels = cpu_jit.blas()
    if kernels is None:
        pytest.skip("numba's pool does not serve products here (no numba pool, or a long-spinning libgomp)")
    return kernels


def test_products_stay_on_the_workers_where_openmp_threads_spin_long(blas, monkeypatch):
    """A libgomp loaded before numba's (torch's, named libgomp.so.1) keeps its long spin:
    blas() then declines. A vendored copy under a name of its own (scikit-learn's) is a
    separate runtime and does not count."""
    monkeypatch.setattr(cpu_jit, "_spin_is_short", [False])
    assert cpu_jit.blas() is None
    maps = ["7f00-7f01 r-xp 0 fe:00 1 /x/site-packages/scikit_learn.libs/libgomp-e985bcbb.so.1.0.0\n"]
    monkeypatch.setattr("builtins.open", lambda *args, **kwargs: _Lines(maps))
    assert not cpu_jit._libgomp_loaded()
    maps.append("7f02-7f03 r-xp 0 fe:00 2 /x/site-packages/torch/lib/libgomp.so.1\n")
    assert cpu_jit._libgomp_loaded()


class _Lines(list):
    """A stand-in for /proc/self/maps: iterable lines, usable as a context manager."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _layouts(rows, cols, dtype):
    """The same values as a C array, a Fortran array, rows of a wider array, and the
    transpose of a C array's column band (columns contiguous with a stride above rows)."""
    values = RNG.standard_normal((rows, cols)).astype(dtype)
    wide = np.zeros((rows, cols + 5), dtype)
    wide[:, 2:cols + 2] = values
    tall = np.zeros((cols, rows + 3), dtype)
    tall[:, 1:rows + 1] = values.T
    return {"C": values, "F": np.asfortranarray(values), "row stride": wide[:, 2:cols + 2],
            "column stride": tall[:, 1:rows + 1].T}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(1, 5, 3), (3, 7, 2), (130, 70, 90), (64, 1, 33)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_every_layout_blas_reads_in_place(blas, dtype, m, k, n, with_bias):
    """m of 1 and 3 leave a thread with no rows or an uneven band; k = 1 a degenerate
    leading dimension."""
    bias = RNG.standard_normal(n).astype(dtype) if with_bias else None
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for a_name, a in _layouts(m, k, dtype).items():
        for b_name, b in _layouts(k, n, dtype).items():
            out = np.full((m, n), np.nan, dtype)
            with blas_threads.single():
                assert blas.gemm_rows(a, b, bias, out), (a_name, b_name)
            expected = a.astype(np.float64) @ b.astype(np.float64) + (0.0 if bias is None else bias)
            np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance, err_msg=f"{a_name} @ {b_name}")


def test_layouts_blas_cannot_read_are_declined(blas):
    a = RNG.standard_normal((40, 30)).astype(np.float32)
    b = RNG.standard_normal((30, 20)).astype(np.float32)
    out = np.zeros((40, 20), np.float32)
    declined = [
        (a[:, ::2], b[:15]),                 # no unit stride in a
        (a, b[::-1]),                        # negative stride
        (a, b.astype(np.float64)),           # mixed dtypes
        (a.astype(np.float16), b.astype(np.float16)),
    ]
    for x, y in declined:
        assert not blas.gemm_rows(x, y, None, out[:x.shape[0], :y.shape[1]])
    assert not blas.gemm_rows(a, b, None, np.zeros((20, 40), np.float32).T)    # out not C-contiguous
    assert not out.any()


def test_matmul_splits_mid_sized_products_on_the_pool(blas, monkeypatch):
    """A 96x128x90 product by a row-major matrix (cpu_jit_gemm takes a weight's transpose, and
    row-major matrices of a multiple of 8 columns) is split on the pool; where gemm_rows
    declines, the workers split it instead, with the same result."""
    if workers.count < 2:
        pytest.skip("one core: products are not split")
    calls = []
    real = blas.gemm_rows
    monkeypatch.setattr(blas, "gemm_rows", lambda *args: calls.append(args[0].shape) or real(*args))
    a = RNG.standard_normal((96, 128)).astype(np.float32)
    b = RNG.standard_normal((128, 90)).astype(np.float32)
    bias = RNG.standard_normal(90).astype(np.float32)
    on_pool = K.matmul(a, b, bias)
    assert calls == [(96, 128)]
    monkeypatch.setattr(blas, "gemm_rows", lambda *args: False)
    on_workers = K.matmul(a, b, bias)
    expected = a.astype(np.float64) @ b.astype(np.float64) + bias
    np.testing.assert_allclose(on_pool, expected, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(on_workers, expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,n,k", [(3, 5, 2), (130, 70, 90)])
def test_two_products_at_once(blas, dtype, m, n, k):
    """gemm_pair as a linear layer's backward uses it: grad @ W and grad^T @ x (a transposed
    operand), against float64."""
    from mindnlp.core.backends.cpu_jit_parallel import parts

    if parts() < 2:
        pytest.skip("one thread: the products run one after the other")
    grad = RNG.standard_normal((m, n)).astype(dtype)
    x = RNG.standard_normal((m, k)).astype(dtype)
    weight = RNG.standard_normal((n, k)).astype(dtype)
    gx, gw = np.full((m, k), np.nan, dtype), np.full((n, k), np.nan, dtype)
    with blas_threads.single():
        assert blas.gemm_pair(grad, weight, gx, grad.T, x, gw)
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(gx, grad.astype(np.float64) @ weight, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(gw, grad.T.astype(np.float64) @ x, rtol=tolerance, atol=tolerance)
    assert not blas.gemm_pair(grad, weight, gx, grad.T, x.astype(np.float16), gw)


def test_linear_backward_takes_both_gradients_at_once(blas, monkeypatch):
    """A float32 linear layer's backward computes its input and weight gradients in one op
    (cpu_kernels.linear_grads), equal to float64's composed gradients."""
    from mindnlp import core
    from mindnlp.core.nn import functional as F

    calls = []
    real = K.KERNELS["linear_grads"]
    monkeypatch.setitem(K.KERNELS, "linear_grads", lambda *args: calls.append(1) or real(*args))
    data = RNG.standard_normal((4, 80, 96)).astype(np.float32)
    w = RNG.standard_normal((64, 96)).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    upstream = RNG.standard_normal((4, 80, 64)).astype(np.float32)
    results = []
    for dtype in (core.float32, core.float64):
        x, weight, bias = (core.tensor(a, dtype=dtype, requires_grad=True) for a in (data, w, b))
        F.linear(x, weight, bias).backward(core.tensor(upstream, dtype=dtype))
        results.append([t.grad.numpy() for t in (x, weight, bias)])
    assert calls == [1]
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("heads,kv_heads,dropout", [(12, 12, 0.0), (9, 3, 0.0), (4, 2, 0.3)])
def test_attention_backward_head_by_head_matches_float64(blas, monkeypatch, heads, kv_heads, dropout):
    """Training attention's gradients from cpu_kernels.attention_backward (each head's products
    and softmax gradient in one pass on numba's pool), with grouped key/value heads, dropout,
    a padding mask and a query given as a transposed view, against float64's; the kernel is
    checked to have served."""
    from mindnlp import core
    from mindnlp.core.nn import functional as F

    served = []
    real = K.KERNELS["attention_backward"]
    monkeypatch.setitem(K.KERNELS, "attention_backward", lambda *args: served.append(1) or real(*args))
    batch, length, depth = 3, 48, 24
    arrays = [RNG.standard_normal(shape).astype(np.float32) for shape in
              ((batch, length, heads, depth), (batch, kv_heads, length, depth), (batch, kv_heads, length, depth))]
    mask = np.zeros((batch, 1, 1, length), np.float32)
    mask[1, ..., -7:] = -np.inf
    upstream = RNG.standard_normal((batch, heads, length, depth)).astype(np.float32)
    results = []
    for dtype in (core.float32, core.float64):
        core.manual_seed(3)
        q, k, v = (core.tensor(a, dtype=dtype, requires_grad=True) for a in arrays)
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k, v, attn_mask=core.tensor(mask, dtype=dtype),
                                             dropout_p=dropout, enable_gqa=heads != kv_heads)
        out.backward(core.tensor(upstream, dtype=dtype))
        results.append([t.grad.numpy() for t in (q, k, v)])
    assert served
    for fused, exact in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=1e-4, atol=1e-4)


def test_attention_backward_declines_other_layouts(blas):
    shape = (2, 3, 8, 4)
    g, q, k, v, out = (RNG.standard_normal(shape).astype(np.float32) for _ in range(5))
    probs = RNG.random((2, 3, 8, 8)).astype(np.float32)
    assert blas.attention_grads(g, q, k, v, probs, out, None, 0.5, 1) is not None
    assert blas.attention_grads(g, q, k, v, probs, out.astype(np.float64), None, 0.5, 1) is None
    assert blas.attention_grads(g, q, k[:, :1], v, probs, out, None, 0.5, 1) is None         # heads differ
    assert blas.attention_grads(g, q[..., ::2], k, v, probs, out, None, 0.5, 1) is None      # no unit stride
    assert blas.attention_grads(g, q, k, v, probs, out, probs[:, :1], 0.5, 1) is None        # keep of another shape
