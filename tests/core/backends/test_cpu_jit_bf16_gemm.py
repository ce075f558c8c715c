"""cpu_jit_bf16_gemm: bfloat16 products on AVX512-BF16's dot instruction against the float64
product of the same bfloat16 values, every kind of tile (4x4, 4x1, 1x4, 1x1) and block edge;
and Linear's bfloat16 prefill taking it."""
import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit
from mindnlp.core.nn import functional as F

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def gemm():
    kernels = cpu_jit.bf16_gemm()
    if kernels is None:
        pytest.skip("no AVX512-BF16 here (or no numba pool)")
    return kernels


def _bf16(*shape):
    return RNG.standard_normal(shape).astype(np.float32).astype(ml_dtypes.bfloat16)


def _assert_float32_close(out, x, w, bias):
    """Within float32 summation error of the exact sum of the exact products."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    expected = x64 @ w64.T + (0 if bias is None else bias.astype(np.float64))
    bound = 8 * np.finfo(np.float32).eps * (np.abs(x64) @ np.abs(w64).T + 1)
    assert np.all(np.abs(out - expected) <= bound)


@pytest.mark.parametrize("m, n, k", [(1, 1, 32), (4, 4, 64), (5, 7, 96), (17, 130, 256), (64, 300, 1024)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_products_of_every_tile_shape(gemm, m, n, k, with_bias):
    """Rows of x and of w left over after the tiles of four, and (300 rows of 1024) a thread's
    band walked in more than one block."""
    x, w = _bf16(m, k), _bf16(n, k)
    bias = RNG.standard_normal(n).astype(np.float32) if with_bias else None
    out = np.empty((m, n), np.float32)
    assert gemm.gemm(x, w, bias, out)
    _assert_float32_close(out, x, w, bias)


def test_widths_it_cannot_serve_are_left_to_the_composed_product(gemm):
    """K not a multiple of 32, or a strided operand: declined, not computed wrong."""
    x, w = _bf16(20, 48), _bf16(8, 48)
    assert not gemm.gemm(x, w, None, np.empty((20, 8), np.float32))
    assert not gemm.gemm(_bf16(20, 128)[:, ::2], _bf16(8, 64), None, np.empty((20, 8), np.float32))


@pytest.mark.parametrize("k", [128, 80])
def test_linear_prefill_in_bfloat16(gemm, k, monkeypatch):
    """F.linear on many bfloat16 rows goes through the kernel (K a multiple of 32) or the
    composed product (K = 80), and equals the float32 product of the values rounded to
    bfloat16 once, either way."""
    calls = []
    monkeypatch.setattr(gemm, "gemm", lambda *args, kernel=gemm.gemm: calls.append(1) or kernel(*args))
    weight = core.tensor(RNG.standard_normal((96, k)).astype(np.float32)).to(core.bfloat16)
    bias = core.tensor(RNG.standard_normal(96).astype(np.float32)).to(core.bfloat16)
    x = core.tensor(RNG.standard_normal((3, 40, k)).astype(np.float32)).to(core.bfloat16)
    out = F.linear(x, weight, bias)
    assert calls and out.dtype == core.bfloat16 and tuple(out.shape) == (3, 40, 96)
    expected = x.float().numpy().reshape(120, k) @ weight.float().numpy().T + bias.float().numpy()
    got = out.float().numpy().reshape(120, 96)
    assert np.all(np.abs(got - expected) <= np.abs(expected) * 2.0 ** -7 + 1e-5)
