"""ops._helpers.narrow and widen: the casts between float32 and the half dtypes through the
compiled loops are bit for bit what NumPy's casts give (ties to even, infinities, NaNs,
subnormals, overflow), and keep the layout NumPy's cast keeps."""
import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit, cpu_kernels
from mindnlp.core.ops._helpers import narrow, widen

HALVES = [ml_dtypes.bfloat16, np.float16]


def _awkward_float32():
    rng = np.random.default_rng(0)
    values = (rng.standard_normal(1 << 16) * np.exp2(rng.integers(-140, 120, 1 << 16))).astype(np.float32)
    bf16_ties = (np.arange(1, 4097, dtype=np.uint32) << 16 | 0x8000).view(np.float32)     # exactly halfway
    f16_ties = (np.arange(1, 4097, dtype=np.uint32) << 13 | 0x1000 | 0x38000000).view(np.float32)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 3.4e38, -3.4e38, 1e-45, 1e-40, 65520.0,
                         65519.0, 6e-8, 3e-8], np.float32)
    return np.concatenate([values, bf16_ties, -bf16_ties, f16_ties, -f16_ties, specials])


@pytest.fixture
def compiled_casts(monkeypatch):
    """The calls the compiled loops take (none without numba: then the casts are NumPy's)."""
    calls = []
    for name in ("round_half", "widen_half"):
        kernel = cpu_kernels.KERNELS[name]
        monkeypatch.setitem(cpu_kernels.KERNELS, name, lambda *a, k=kernel, n=name: calls.append(n) or k(*a))
    return calls


@pytest.mark.parametrize("dtype", HALVES)
def test_compiled_rounding_equals_the_cast(dtype, compiled_casts):
    x = _awkward_float32()
    with np.errstate(over="ignore"):      # float16 overflows to infinity, as it should
        got, expected = narrow(x, dtype), x.astype(dtype)
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
    assert compiled_casts == (["round_half"] if cpu_jit.half_bits() is not None else [])


@pytest.mark.parametrize("dtype", HALVES)
def test_compiled_widening_equals_the_cast(dtype, compiled_casts):
    """Every 16-bit pattern, and permuted or strided views: the same values, and the layout
    NumPy's cast keeps for a permuted view of contiguous memory (a weight's transpose, heads
    split from a projection's rows)."""
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
    got, expected = widen(every), every.astype(np.float32)
    numbers = ~np.isnan(expected)       # a signalling NaN may come back quieted: still a NaN of its sign
    np.testing.assert_array_equal(got[numbers].view(np.uint32), expected[numbers].view(np.uint32))
    assert np.all(np.isnan(got[~numbers])) and np.array_equal(np.signbit(got), np.signbit(expected))
    base = np.random.default_rng(1).standard_normal((4, 64, 8, 16)).astype(np.float32).astype(dtype)
    for x in (base.transpose(0, 2, 1, 3), base[0, 0].T, base[:, ::2], base[..., 0]):
        got, expected = narrow(x, np.float32), x.astype(np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
        if x.transpose(np.argsort(x.strides)[::-1]).flags.c_contiguous:
            assert got.strides == expected.strides
    if cpu_jit.half_bits() is not None:
        assert compiled_casts and set(compiled_casts) == {"widen_half"}


def test_other_dtypes_and_same_dtype_are_plain_casts():
    x = np.linspace(-3, 3, 1 << 15, dtype=np.float32)
    assert narrow(x, np.float32) is x and widen(x) is x
    np.testing.assert_array_equal(narrow(x, np.float64), x.astype(np.float64))


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
def test_half_ops_round_like_the_cast(dtype):
    a = core.tensor(np.linspace(-7, 7, 1 << 15, dtype=np.float32)).to(dtype)
    b = core.tensor(np.linspace(3, 5, 1 << 15, dtype=np.float32)).to(dtype)
    expected = (a.numpy().astype(np.float32) * b.numpy().astype(np.float32)).astype(dtype.np_dtype)
    np.testing.assert_array_equal((a * b).numpy().view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("shapes", [((3, 40, 64), (3, 40, 64)), ((3, 40, 64), (64,)), ((64,), (3, 40, 64)),
                                    ((40, 64), (3, 40, 64)), ((3, 40, 64), (3, 1, 64)), ((3, 40, 64), ()),
                                    ((3, 40, 8), (8,))])
def test_half_binary_ops_equal_the_float32_op_rounded_once(dtype, op, shapes, monkeypatch):
    """Same shapes, and one operand repeated along the other's rows (either side: the order
    matters to sub), in one compiled pass where it serves (not a broadcast over a middle axis,
    nor a scalar or a short row repeated, a loop of a few elements a row): bit for bit the
    float32 result rounded once."""
    calls = []
    kernel = cpu_kernels.KERNELS["binary_half"]
    monkeypatch.setitem(cpu_kernels.KERNELS, "binary_half", lambda *a: calls.append(kernel(*a)) or calls[-1])
    rng = np.random.default_rng(3)
    a, b = (core.tensor((rng.standard_normal(s) * 50).astype(np.float32)).to(dtype) for s in shapes)
    got = getattr(core, op)(a, b)
    wide = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](a.float().numpy(), b.float().numpy())
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy().view(np.uint16), wide.astype(dtype.np_dtype).view(np.uint16))
    served = any(out is not None for out in calls)
    assert served == (cpu_jit.half_bits() is not None and shapes[1] not in ((3, 1, 64), (), (8,)))
