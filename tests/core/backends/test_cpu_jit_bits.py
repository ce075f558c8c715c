"""cpu_jit_bits: compiled loops read and write bfloat16/float16 arrays as their bits; widening
and rounding must give exactly what NumPy's (and ml_dtypes') casts give, and the rotation of
half heads what the op's forward rounds step by step."""

import ml_dtypes
import numpy as np
import pytest

from mindnlp.core.backends import cpu_jit

HALF = [ml_dtypes.bfloat16, np.float16]


@pytest.fixture(scope="module")
def bits():
    if cpu_jit.half_bits() is None:
        pytest.skip("the loops are numba's")
    return cpu_jit.half_bits()


@pytest.mark.parametrize("dtype", HALF)
def test_every_half_value_widens_as_astype(bits, dtype):
    """All 65536 patterns; float16's signalling NaNs come out quiet (the CPU's conversion),
    NaNs still."""
    patterns = np.arange(1 << 16, dtype=np.uint16)
    out = np.empty(patterns.size, np.float32)
    bits.widen_into(patterns, bits.kind_of(dtype), out)
    expected = patterns.view(dtype).astype(np.float32)
    nan = np.isnan(expected)
    np.testing.assert_array_equal(out[~nan].view(np.uint32), expected[~nan].view(np.uint32))
    assert np.isnan(out[nan]).all()


@pytest.mark.parametrize("dtype", HALF)
def test_float32_values_round_as_astype(bits, dtype):
    """Random float32 bit patterns (every exponent: subnormal and overflowing results of both
    dtypes) and ties, rounded to nearest even as astype rounds them; a NaN keeps its sign."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 1 << 32, 400_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ties = (np.arange(-64, 64, dtype=np.int32).astype(np.uint32) << 16 | 0x8000).view(np.float32)   # bfloat16 ties
    half_ties = np.float32([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 65520.0, 65519.0, 2.0 ** -25, 3 * 2.0 ** -26])
    special = np.float32([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 3.4e38, -3.4e38])
    values = np.concatenate([values, ties, half_ties, special])
    out = np.empty(values.size, np.uint16)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = values.astype(dtype).view(np.uint16)
    bits.narrow_into(values, bits.kind_of(dtype), out)
    nan = np.isnan(values)
    np.testing.assert_array_equal(out[~nan], expected[~nan])
    assert np.isnan(out[nan].view(dtype).astype(np.float32)).all()
    np.testing.assert_array_equal(out[nan] >> 15, expected[nan] >> 15)


@pytest.mark.parametrize("dtype", HALF)
def test_rotary_of_half_heads_rounds_each_step(bits, dtype):
    """x cos + rotate_half(x) sin with each product and the sum rounded to the dtype, against
    NumPy computing the same steps in float32."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 1, 3, 16)).astype(np.float32).astype(dtype)
    cos, sin = (rng.standard_normal((1, 1, 16)).astype(np.float32).astype(dtype) for _ in range(2))
    out = np.empty(x.shape, dtype)
    bits.rotary_half(x.view(np.uint16), cos.view(np.uint16), sin.view(np.uint16), bits.kind_of(dtype),
                     out.view(np.uint16))
    wide = x.astype(np.float32)
    rotated = np.concatenate([-wide[..., 8:], wide[..., :8]], axis=-1)
    c, s = cos.astype(np.float32)[:, :, None], sin.astype(np.float32)[:, :, None]
    first = (wide * c).astype(dtype).astype(np.float32)
    expected = (first + (rotated * s).astype(dtype).astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(out.view(np.uint16), expected.view(np.uint16))
