"""The paths ops take for an array module other than NumPy (CuPy on a GPU), checked on the CPU
with a stand-in module whose functions are NumPy's but which is not NumPy itself, so that
CI, which has no GPU, covers them. The GPU run of the same ops is tests/core/test_cuda.py."""
import types

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.ops.indexing import add_at
from mindnlp.core.ops.reduction import _running

STAND_IN = types.SimpleNamespace(maximum=np.maximum, minimum=np.minimum, add=np.add, asarray=np.asarray)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_the_doubling_scan_equals_accumulate(axis, ufunc):
    data = np.random.default_rng(0).standard_normal((5, 37, 3))
    data[1, 5, 1] = np.nan                       # NaN propagates from where it appears, as accumulate's
    np.testing.assert_array_equal(_running(STAND_IN, ufunc, data, axis), ufunc.accumulate(data, axis=axis))


def test_the_doubling_scan_of_one_element_and_of_integers():
    np.testing.assert_array_equal(_running(STAND_IN, np.maximum, np.array([4]), 0), [4])
    ints = np.array([[3, 1, 4, 1, 5, 9, 2, 6]])
    np.testing.assert_array_equal(_running(STAND_IN, np.maximum, ints, 1), np.maximum.accumulate(ints, axis=1))


def test_bfloat16_add_at_sums_in_float32_and_rounds_once():
    """CuPy's add.at has no bfloat16: its path widens, adds and rounds back once. Three adds
    of 1/256 to 1 round to 1 one at a time in bfloat16, and to 1 + 3/256 -> 1.0117 once."""
    bf16 = core.bfloat16.np_dtype
    out = np.ones(2, dtype=bf16)
    add_at(STAND_IN, out, (np.array([0, 0, 0]),), np.full(3, 1 / 256, dtype=bf16))
    widened = np.float32(1 + 3 / 256).astype(bf16)
    assert out[0] == widened and out[1] == 1
    stepwise = np.ones(1, dtype=bf16)
    for _ in range(3):
        stepwise = (stepwise + np.array([1 / 256], dtype=bf16)).astype(bf16)
    assert stepwise[0] != widened               # the case tells the two roundings apart


def test_float32_add_at_accumulates_repeated_indices():
    out = np.zeros(3, dtype=np.float32)
    add_at(STAND_IN, out, (np.array([2, 0, 2]),), np.array([1.0, 2.0, 3.0], dtype=np.float32))
    np.testing.assert_array_equal(out, [2.0, 0.0, 4.0])
