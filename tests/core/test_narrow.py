"""ops._helpers.narrow: float32 results rounded to bfloat16 through the compiled rounding are
bit for bit what NumPy's cast gives (ties to even, infinities, NaNs, subnormals, overflow)."""
import ml_dtypes
import numpy as np

from mindnlp import core
from mindnlp.core.ops._helpers import narrow


def test_compiled_rounding_equals_the_cast():
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(1 << 16) * np.exp2(rng.integers(-140, 120, 1 << 16))).astype(np.float32)
    ties = (np.arange(1, 4097, dtype=np.uint32) << 16 | 0x8000).view(np.float32)   # exactly halfway
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.4e38, 1e-45, 1e-40], np.float32)
    x = np.concatenate([values, ties, -ties, specials])
    got, expected = narrow(x, ml_dtypes.bfloat16), x.astype(ml_dtypes.bfloat16)
    assert got.dtype == ml_dtypes.bfloat16 and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))


def test_other_dtypes_and_same_dtype_are_plain_casts():
    x = np.linspace(-3, 3, 1 << 15, dtype=np.float32)
    assert narrow(x, np.float32) is x
    np.testing.assert_array_equal(narrow(x, np.float16), x.astype(np.float16))


def test_bfloat16_ops_round_like_the_cast():
    a = core.tensor(np.linspace(-7, 7, 1 << 15, dtype=np.float32)).to(core.bfloat16)
    b = core.tensor(np.linspace(3, 5, 1 << 15, dtype=np.float32)).to(core.bfloat16)
    expected = (a.numpy().astype(np.float32) * b.numpy().astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal((a * b).numpy().view(np.uint16), expected.view(np.uint16))
