"""cpu_jit_gemm: products x @ w.T on the weight as stored, float32 (the transposed tiles'
FMAs) and bfloat16 (AVX512-BF16's dot instruction), and x @ b on b stored row after row
(both), against the float64 product of the same values, every kind of tile and block edge;
results independent of the split over threads and of the number of rows; and Linear and
matmul taking them."""
import ml_dtypes
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit, cpu_kernels
from mindnlp.core.nn import functional as F

RNG = np.random.default_rng(0)
DTYPES = {"float32": np.float32, "bfloat16": ml_dtypes.bfloat16}


def _kernels(dtype):
    kernels = cpu_jit.gemm(dtype)
    if kernels is None:
        pytest.skip(f"no {dtype} kernels here (no numba pool, or not this CPU's instructions)")
    return kernels


def _values(dtype, *shape):
    return RNG.standard_normal(shape).astype(np.float32).astype(DTYPES[dtype])


def _assert_float32_close(out, x, w, bias):
    """Within float32 summation error of the exact sum of the exact products."""
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    expected = x64 @ w64.T + (0 if bias is None else bias.astype(np.float64))
    bound = 8 * np.finfo(np.float32).eps * (np.abs(x64) @ np.abs(w64).T + 1)
    assert np.all(np.abs(out - expected) <= bound)


PRODUCT_SHAPES = [(1, 1, 32), (4, 4, 64), (5, 7, 96), (17, 130, 256), (64, 600, 1024)]
# float32 takes any K: the transposed tiles' K passes (1100: three of 366-367), x's rows padded
# to a vector (50 -> 64: a tile of three vectors, one of one), in more than one panel of 192
# rows (200), w's rows left over after the tiles of eight (13, 37).
FLOAT32_SHAPES = [(200, 13, 600), (50, 9, 1100), (33, 37, 17), (2, 3, 1)]


@pytest.mark.parametrize("dtype, m, n, k", [(d, *shape) for d in ("float32", "bfloat16") for shape in PRODUCT_SHAPES]
                         + [("float32", *shape) for shape in FLOAT32_SHAPES])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("threads", [True, False])
def test_products_of_every_tile_shape(dtype, m, n, k, with_bias, threads):
    """Rows of x and of w left over after the full tiles, and (600 rows of 1024) a thread's
    band walked in more than one block; on numba's pool and on the calling thread."""
    kernels = _kernels(dtype)
    x, w = _values(dtype, m, k), _values(dtype, n, k)
    bias = RNG.standard_normal(n).astype(np.float32) if with_bias else None
    out = np.empty((m, n), np.float32)
    assert kernels.gemm_nt(x, w, bias, out, threads=threads)
    _assert_float32_close(out, x, w, bias)


@pytest.mark.parametrize("m", [1, 16, 17, 128, 192, 193, 256, 383, 512, 4096])
def test_rows_are_cut_into_even_panels(m):
    """x.T's panels hold every row of x in as few panels of at most 192 rows as can, of one
    width, a multiple of 16, padding fewer than 16 rows per panel (the tiles compute every
    lane: 256 rows in panels of 192 had computed 384)."""
    gemm = pytest.importorskip("mindnlp.core.backends.cpu_jit_gemm")
    panels, k, width = gemm._packed_shape(np.empty((m, 5), np.float32))
    assert k == 5 and width % 16 == 0 and width <= 192
    padded = -(-m // 16) * 16
    assert panels == -(-padded // 192)
    assert m <= panels * width < m + 16 * panels


def test_weight_blocks_take_half_the_second_level_cache(tmp_path):
    """The block of weight rows a thread walks is sized from the core's second-level cache as
    Linux lists it (half of it, at most 512 KB), 256 KB where the size is not listed."""
    gemm = pytest.importorskip("mindnlp.core.backends.cpu_jit_gemm")
    for index, (level, size) in enumerate([("1", "48K"), ("2", "2048K"), ("3", "32M")]):
        (tmp_path / f"index{index}").mkdir()
        (tmp_path / f"index{index}" / "level").write_text(level + "\n")
        (tmp_path / f"index{index}" / "size").write_text(size + "\n")
    assert gemm._second_level_cache_bytes(str(tmp_path)) == 2048 * 1024
    assert gemm._second_level_cache_bytes(str(tmp_path / "missing")) is None
    assert gemm._block_bytes(2048 * 1024) == 512 * 1024
    assert gemm._block_bytes(1024 * 1024) == 512 * 1024
    assert gemm._block_bytes(512 * 1024) == 256 * 1024
    assert gemm._block_bytes(None) == 256 * 1024


@pytest.mark.parametrize("dtype, m, n, k", [("float32", 11, 13, 64), ("float32", 70, 21, 600),
                                            ("bfloat16", 11, 13, 64)])
def test_a_result_does_not_depend_on_the_split(dtype, m, n, k):
    """Each output is the same bits whether its weight row is computed in a full tile or a
    leftover one, on the pool or on one thread, in a long product or a slice of it (a
    different reduction order per tile kind would make results depend on the thread count, and
    in float32 on the number of rows: a sentence's outputs alone or in a batch)."""
    kernels = _kernels(dtype)
    x, w = _values(dtype, m, k), _values(dtype, n, k)
    whole, here = np.empty((m, n), np.float32), np.empty((m, n), np.float32)
    assert kernels.gemm_nt(x, w, None, whole) and kernels.gemm_nt(x, w, None, here, threads=False)
    assert np.array_equal(whole, here)
    for rows, cols in [(slice(3, 4), slice(1, 2)), (slice(1, 10), slice(2, 13)), (slice(0, 5), slice(5, 8)),
                       (slice(m // 2, m), slice(0, n))]:
        part = np.empty((rows.stop - rows.start, cols.stop - cols.start), np.float32)
        assert kernels.gemm_nt(np.ascontiguousarray(x[rows]), np.ascontiguousarray(w[cols]), None, part)
        assert np.array_equal(part, whole[rows, cols])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_widths_it_cannot_serve_are_left_to_the_composed_product(dtype):
    """K not a multiple of bfloat16's step (float32 takes any K), or a strided operand:
    declined, nothing written."""
    kernels = _kernels(dtype)
    out = np.full((20, 8), 7.0, np.float32)
    if dtype == "bfloat16":
        assert not kernels.gemm_nt(_values(dtype, 20, 40), _values(dtype, 8, 40), None, out)
    assert not kernels.gemm_nt(_values(dtype, 20, 128)[:, ::2], _values(dtype, 8, 64), None, out)
    assert not kernels.gemm_nt(_values(dtype, 20, 64), _values("float32" if dtype == "bfloat16" else "bfloat16", 8, 64),
                            None, out)
    assert not kernels.gemm_nt(_values(dtype, 20, 0), _values(dtype, 8, 0), None, out)
    assert np.all(out == 7.0)


@pytest.mark.parametrize("k", [128, 40])
def test_linear_in_float32(k, monkeypatch):
    """F.linear on 120 rows goes through the kernel, whatever K, within float32 rounding of the
    float64 product."""
    kernels = _kernels("float32")
    calls = []
    monkeypatch.setattr(kernels, "gemm_nt", lambda *args, kernel=kernels.gemm_nt, **kw: calls.append(kernel(*args, **kw))
                        or calls[-1])
    weight = RNG.standard_normal((96, k)).astype(np.float32)
    bias = RNG.standard_normal(96).astype(np.float32)
    x = RNG.standard_normal((3, 40, k)).astype(np.float32)
    out = F.linear(core.tensor(x), core.tensor(weight), core.tensor(bias)).numpy()
    assert calls == [True] and out.shape == (3, 40, 96)
    _assert_float32_close(out.reshape(120, 96), x.reshape(120, k), weight, bias)


def test_worker_parts_multiply_on_their_own_thread(monkeypatch):
    """Inside a worker's part (a batch of sentences encoded per thread), the product runs on
    that thread, not on numba's pool, which the other workers share."""
    kernels = _kernels("float32")
    seen = []
    monkeypatch.setattr(kernels, "gemm_nt", lambda *args, kernel=kernels.gemm_nt, **kw: seen.append(kw["threads"])
                        or kernel(*args, **kw))
    x, w = RNG.standard_normal((64, 128)).astype(np.float32), RNG.standard_normal((96, 128)).astype(np.float32)
    outs = [None, None]

    def part(index):
        outs[index] = cpu_kernels.matmul(x, w.T)
    cpu_kernels.workers.run_each(part, 2)
    cpu_kernels.matmul(x, w.T)
    assert seen[:2] == [False, False] and seen[2] == (cpu_kernels.workers.count > 1)
    assert np.array_equal(outs[0], outs[1])


@pytest.mark.parametrize("k", [128, 80])
def test_linear_prefill_in_bfloat16(k, monkeypatch):
    """F.linear on many bfloat16 rows goes through the kernel (K a multiple of 32) or the
    composed product (K = 80), and equals the float32 product of the values rounded to
    bfloat16 once, either way."""
    kernels = _kernels("bfloat16")
    calls = []
    monkeypatch.setattr(kernels, "gemm_nt", lambda *args, kernel=kernels.gemm_nt, **kw: calls.append(1) or kernel(*args, **kw))
    weight = core.tensor(RNG.standard_normal((96, k)).astype(np.float32)).to(core.bfloat16)
    bias = core.tensor(RNG.standard_normal(96).astype(np.float32)).to(core.bfloat16)
    x = core.tensor(RNG.standard_normal((3, 40, k)).astype(np.float32)).to(core.bfloat16)
    out = F.linear(x, weight, bias)
    assert calls and out.dtype == core.bfloat16 and tuple(out.shape) == (3, 40, 96)
    expected = x.float().numpy().reshape(120, k) @ weight.float().numpy().T + bias.float().numpy()
    got = out.float().numpy().reshape(120, 96)
    assert np.all(np.abs(got - expected) <= np.abs(expected) * 2.0 ** -7 + 1e-5)


ROW_MAJOR_SHAPES = {
    "float32": [(1, 1, 16), (7, 5, 48), (6, 300, 64), (13, 513, 80), (100, 64, 1040), (40, 700, 16)],
    "bfloat16": [(1, 2, 16), (7, 6, 48), (6, 300, 64), (13, 1026, 80), (100, 64, 1040), (40, 1400, 16)],
}


@pytest.mark.parametrize("dtype, m, k, n", [(d, *shape) for d, shapes in ROW_MAJOR_SHAPES.items() for shape in shapes])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("threads", [True, False])
def test_row_major_products_of_every_tile_shape(dtype, m, k, n, with_bias, threads):
    """gemm_nn: rows of x left over after the tiles of eight, columns after the tiles of three
    vectors, K in more than one pass (300 or more rows of b in float32, 600 in bfloat16),
    column groups (1040), a split by rows (16 columns) or by columns; bfloat16's pairs of rows
    of b interleaved in registers."""
    kernels = _kernels(dtype)
    x, b = _values(dtype, m, k), _values(dtype, k, n)
    bias = RNG.standard_normal(n).astype(np.float32) if with_bias else None
    out = np.empty((m, n), np.float32)
    assert kernels.gemm_nn(x, b, bias, out, threads=threads)
    _assert_float32_close(out, x, b.T, bias)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_row_major_results_do_not_depend_on_the_split(dtype):
    """Each output of gemm_nn is one chain over K in order (of FMAs, or of bfloat16 dots over
    K's pairs): the same bits in any tile, on the pool or one thread, alone or in a larger
    product."""
    kernels = _kernels(dtype)
    x, b = _values(dtype, 23, 1200), _values(dtype, 1200, 8 * 16)
    whole, here = np.empty((23, b.shape[1]), np.float32), np.empty((23, b.shape[1]), np.float32)
    assert kernels.gemm_nn(x, b, None, whole) and kernels.gemm_nn(x, b, None, here, threads=False)
    assert np.array_equal(whole, here)
    width = 16                          # the kernels' vector width (AVX-512 only)
    part = np.empty((2, width), np.float32)
    assert kernels.gemm_nn(np.ascontiguousarray(x[7:9]), np.ascontiguousarray(b[:, 3 * width:4 * width]), None, part)
    assert np.array_equal(part, whole[7:9, 3 * width:4 * width])


def test_row_major_declines():
    """Columns not a multiple of the vector width, or a strided operand: declined, nothing written."""
    kernels = _kernels("float32")
    out = np.full((4, 20), 7.0, np.float32)
    assert not kernels.gemm_nn(_values("float32", 4, 8), _values("float32", 8, 20), None, out)
    wide = np.full((4, 32), 7.0, np.float32)
    assert not kernels.gemm_nn(_values("float32", 4, 16)[:, ::2], _values("float32", 8, 32), None, wide)
    assert np.all(out == 7.0) and np.all(wide == 7.0)


def test_row_major_bfloat16_declines_an_odd_k():
    """bfloat16 multiplies K's values in pairs: an odd K (or mixed dtypes) is left to the
    composed product, nothing written."""
    kernels = _kernels("bfloat16")
    out = np.full((4, 16), 7.0, np.float32)
    assert not kernels.gemm_nn(_values("bfloat16", 4, 33), _values("bfloat16", 33, 16), None, out)
    assert not kernels.gemm_nn(_values("bfloat16", 4, 32), _values("float32", 32, 16), None, out)
    assert np.all(out == 7.0)


def test_conv1d_prefill_in_bfloat16(monkeypatch):
    """GPT-2's Conv1D (x @ w + b on a weight stored (in, out)) on many bfloat16 rows multiplies
    the 16-bit weight with the dot instruction, and equals the float32 product of the values
    rounded to bfloat16 once."""
    from mindnlp.transformers.pytorch_utils import Conv1D

    kernels = _kernels("bfloat16")
    calls = []
    monkeypatch.setattr(kernels, "gemm_nn", lambda *args, kernel=kernels.gemm_nn, **kw: calls.append(
        kernel(*args, **kw)) or calls[-1])
    layer = Conv1D(96, 64)
    core.nn.init.normal_(layer.bias)
    layer = layer.to(core.bfloat16)
    x = core.tensor(RNG.standard_normal((2, 40, 64)).astype(np.float32)).to(core.bfloat16)
    with core.no_grad():
        out = layer(x)
    assert calls == [True] and out.dtype == core.bfloat16
    weight, bias = (p.detach().float().numpy() for p in (layer.weight, layer.bias))
    expected = x.float().numpy().reshape(80, 64) @ weight + bias
    got = out.float().numpy().reshape(80, 96)
    assert np.all(np.abs(got - expected) <= np.abs(expected) * 2.0 ** -8 + 1e-5)


def test_matmul_by_a_row_major_matrix(monkeypatch):
    """cpu_kernels.matmul hands a row-major b of a multiple of the vector width of columns to
    gemm_nn (GPT-2's Conv1D weights), within float32 rounding of float64."""
    kernels = _kernels("float32")
    calls = []
    monkeypatch.setattr(kernels, "gemm_nn", lambda *args, kernel=kernels.gemm_nn, **kw: calls.append(
        kernel(*args, **kw)) or calls[-1])
    a, b = _values("float32", 70, 96), _values("float32", 96, 64)
    bias = RNG.standard_normal(64).astype(np.float32)
    out = cpu_kernels.matmul(a, b, bias)
    assert calls == [True]
    _assert_float32_close(out, a, b.T, bias)



def test_float32_products_stay_with_blas_at_avx2_width():
    """At vector width 8 the float32 kernels decline (BLAS is faster there) and Linear's
    product is still right."""
    from tests.core.avx2_width import run_at_avx2_width

    run_at_avx2_width("""
import numpy as np
from mindnlp import core
from mindnlp.core.backends import cpu_jit
from mindnlp.core.nn import functional as F
assert cpu_jit.gemm("float32") is None
rng = np.random.default_rng(0)
x, w = rng.standard_normal((40, 64)).astype(np.float32), rng.standard_normal((24, 64)).astype(np.float32)
assert np.allclose(F.linear(core.tensor(x), core.tensor(w)).numpy(), x @ w.T, rtol=1e-5, atol=1e-5)
print("ok")
""")


def test_matmul_over_an_empty_k_is_its_bias():
    """A product over K = 0 (a weight's transpose or a row-major matrix) is zeros plus the
    bias, as BLAS gives it: the kernels decline it rather than walk an empty row."""
    _kernels("float32")
    a, bias = np.ones((40, 0), np.float32), RNG.standard_normal(32).astype(np.float32)
    for b in (np.ones((32, 0), np.float32).T, np.ones((0, 32), np.float32)):
        assert np.array_equal(cpu_kernels.matmul(a, b), np.zeros((40, 32), np.float32))
        assert np.array_equal(cpu_kernels.matmul(a, b, bias), np.broadcast_to(bias, (40, 32)))


def test_kernels_serve_where_the_cpu_has_the_instructions():
    """A kernel whose probe fails is left out (the composed product serves, slower): on a CPU
    with the instructions that is a fault, which fails here instead of skipping the tests above."""
    pytest.importorskip("numba")
    from mindnlp.core.backends import cpu_jit_gemm

    if cpu_jit.parallel() is None or cpu_jit_gemm.WIDTH != 16:
        pytest.skip("no numba pool, or not an AVX-512 CPU")
    assert cpu_jit_gemm.usable("float32")
    assert cpu_jit_gemm.usable("bfloat16") == cpu_jit_gemm._has_bf16_dot()
