"""cpu_jit_half: a few float32 rows against a bfloat16 or float16 weight widened in registers,
against the float64 product of the same 16-bit values; and Linear's half-precision decoding
step taking it."""

import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit
from mindnlp.core.nn import functional as F
from tests.core.avx2_width import run_at_avx2_width

RNG = np.random.default_rng(0)
DTYPES = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16}


@pytest.fixture(scope="module")
def half():
    kernels = cpu_jit.half()
    if kernels is None:
        pytest.skip("no AVX-512 or AVX2 here (or no numba pool)")
    return kernels


def _assert_float32_close(out, x, w, bias):
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    expected = x64 @ w64.T + (0 if bias is None else bias.astype(np.float64))
    bound = 8 * np.finfo(np.float32).eps * (np.abs(x64) @ np.abs(w64).T + 1)
    assert np.all(np.abs(out - expected) <= bound)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("rows", [1, 2, 3, 7, 15])
@pytest.mark.parametrize("four_side_by_side", [True, False])
def test_rows_against_a_16_bit_weight(half, dtype, rows, four_side_by_side, monkeypatch):
    """103 weight rows, two threads' bands of 51 and 52, leave three after the passes of four
    spread rows (one row of x, where this machine reads several weight rows per pass; both
    ways are tried); 1-15 rows of x take the blocks of eight, four, two and one."""
    from mindnlp.core.backends import cpu_jit_parallel

    monkeypatch.setattr(cpu_jit_parallel, "_side_by_side", {"half rows": four_side_by_side})
    w = RNG.standard_normal((103, 256)).astype(np.float32).astype(DTYPES[dtype])
    x = RNG.standard_normal((rows, 256)).astype(np.float32)
    bias = RNG.standard_normal(103).astype(np.float32)
    out = np.empty((rows, 103), np.float32)
    assert half.rows_half(x, w, bias, out)
    _assert_float32_close(out, x, w, bias)


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("rows", [1, 3])
@pytest.mark.parametrize("biased", [True, False])
def test_half_linears_in_one_launch_equal_each_linear(half, dtype, rows, biased):
    """Several weights against the same half rows (a step's query/key/value projections): x
    widened in the kernel and each output rounded there, bit for bit what each product alone
    gives (rows_half on the widened rows) once rounded as Linear rounds it."""
    from mindnlp.core.ops._helpers import narrow

    widths = (96, 32, 40)
    weights = [RNG.standard_normal((n, 128)).astype(np.float32).astype(DTYPES[dtype]) for n in widths]
    biases = [RNG.standard_normal(n).astype(np.float32) if biased else None for n in widths]
    x = RNG.standard_normal((rows, 128)).astype(np.float32).astype(DTYPES[dtype])
    narrowed = [np.empty((rows, n), DTYPES[dtype]) for n in widths]
    assert half.serves(128, weights)
    half.half_linears(x, np.empty((rows, 128), np.float32), weights, biases,
                      [np.empty((rows, n), np.float32) for n in widths], narrowed)
    for w, b, got in zip(weights, biases, narrowed):
        alone = np.empty((rows, w.shape[0]), np.float32)
        assert half.rows_half(x.astype(np.float32), w, b, alone)
        np.testing.assert_array_equal(got.view(np.uint16), narrow(alone, np.dtype(DTYPES[dtype])).view(np.uint16))


def test_widths_it_cannot_serve_are_left_to_the_composed_product(half):
    w = np.ones((8, half.WIDTH + 4), ml_dtypes.bfloat16)
    assert not half.serves(half.WIDTH + 4, [w]) and not half.serves(half.WIDTH, [w[:, :half.WIDTH]])
    assert not half.serves(0, [np.ones((8, 0), ml_dtypes.bfloat16)])     # no row to sum: the composed product
    assert not half.rows_half(np.ones((1, half.WIDTH + 4), np.float32), w, None, np.empty((1, 8), np.float32))


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_linear_decoding_step_in_half_precision(half, dtype, monkeypatch):
    """F.linear on a few 16-bit rows goes through the kernel and equals the product of the
    widened values, rounded to the dtype once (as the composed op rounds its float32 sums)."""
    calls = []
    monkeypatch.setattr(half, "rows_half", lambda *args, kernel=half.rows_half: calls.append(1) or kernel(*args))
    core_dtype = getattr(core, dtype)
    weight = core.tensor(RNG.standard_normal((96, 128)).astype(np.float32)).to(core_dtype)
    bias = core.tensor(RNG.standard_normal(96).astype(np.float32)).to(core_dtype)
    x = core.tensor(RNG.standard_normal((2, 1, 128)).astype(np.float32)).to(core_dtype)
    out = F.linear(x, weight, bias)
    assert calls and out.dtype == core_dtype and tuple(out.shape) == (2, 1, 96)
    expected = x.float().numpy().reshape(2, 128) @ weight.float().numpy().T + bias.float().numpy()
    got = out.float().numpy().reshape(2, 96)
    ulp = np.abs(expected) * (2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10) + 1e-6
    assert np.all(np.abs(got - expected) <= ulp)


def test_half_kernels_at_the_avx2_width(half):
    """The AVX2 build, in a process asking for width 8 with a numba cache of its own."""
    run_at_avx2_width(
        "import numpy as np, ml_dtypes\n"
        "from mindnlp.core.backends import cpu_jit_half\n"
        "assert cpu_jit_half.WIDTH == 8 and cpu_jit_half.usable()\n"
        "rng = np.random.default_rng(1)\n"
        "for dtype in (ml_dtypes.bfloat16, np.float16):\n"
        "    w = rng.standard_normal((37, 64)).astype(np.float32).astype(dtype)\n"
        "    for rows in (1, 5, 9):\n"
        "        x = rng.standard_normal((rows, 64)).astype(np.float32)\n"
        "        out = np.empty((rows, 37), np.float32)\n"
        "        assert cpu_jit_half.rows_half(x, w, None, out)\n"
        "        w64 = w.astype(np.float64)\n"
        "        bound = 8 * np.finfo(np.float32).eps * (np.abs(x.astype(np.float64)) @ np.abs(w64).T + 1)\n"
        "        assert np.all(np.abs(out - x.astype(np.float64) @ w64.T) <= bound)\n"
        "        narrowed = np.empty((rows, 37), dtype)\n"
        "        cpu_jit_half.half_linears(x.astype(dtype), np.empty((rows, 64), np.float32), [w], [None],\n"
        "                                  [np.empty((rows, 37), np.float32)], [narrowed])\n"
        "        alone = np.empty((rows, 37), np.float32)\n"
        "        assert cpu_jit_half.rows_half(x.astype(dtype).astype(np.float32), w, None, alone)\n"
        "        assert np.array_equal(narrowed.view(np.uint16), alone.astype(dtype).view(np.uint16))\n"
        "print('ok')\n")
