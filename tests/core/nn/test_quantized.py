"""Weight-only quantized linear layers: the formats (symmetric, affine, bitsandbytes' NF4/FP4
codebooks), the compiled products against dequantize-then-matmul, gradients with respect to
the input, and QuantizedLinear.

The reference product is computed in float64 from the dequantized weight; the tolerance is
float32 rounding of a dot product, a few ulp of sum |x_j w_ij| per output.
"""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.backends import cpu_jit
from mindnlp.core.backends import cpu_kernels as K
from mindnlp.core.nn import functional as F
from tests.core.avx2_width import run_at_avx2_width

RNG = np.random.default_rng(0)
FORMATS = [(8, None, "symmetric"), (8, 32, "symmetric"), (8, 32, "affine"), (4, 32, "symmetric"),
           (4, 64, "symmetric"), (4, 32, "affine"), (4, 128, "affine"), (4, 64, "nf4"), (4, 64, "fp4")]


@pytest.fixture(params=["compiled", "reference"])
def flavour(request, monkeypatch):
    """Each product runs through the numba kernels (when installed) and the composed reference."""
    if request.param == "compiled" and cpu_jit.load() is None:
        pytest.skip("numba is not installed (the compiled kernels are optional)")
    if request.param == "reference":
        monkeypatch.setattr(cpu_jit, "_compiled", False)
    return request.param


def _weight(n=96, k=256):
    return core.tensor(RNG.standard_normal((n, k)).astype(np.float32))


def _assert_float32_close(actual, x, weight, bias=None):
    x64, w64 = np.asarray(x, np.float64), np.asarray(weight, np.float64)
    expected = x64 @ w64.T + (0 if bias is None else np.asarray(bias, np.float64))
    bound = 8 * np.finfo(np.float32).eps * (np.abs(x64) @ np.abs(w64).T + 1)
    assert np.all(np.abs(np.asarray(actual, np.float64) - expected) <= bound)


def _levels(bits, scheme, scales, offsets):
    """Every value a group can hold, (n, groups, levels), from the format's definition."""
    if scheme in F.quantized.CODEBOOKS:
        codes = F.quantized.CODEBOOKS[scheme].astype(np.float64)
    elif scheme == "affine":
        codes = np.arange(2 ** bits, dtype=np.float64)
    else:
        codes = np.arange(-127, 128.0) if bits == 8 else np.arange(-8, 8.0)
    levels = scales.astype(np.float64)[:, :, None] * codes
    return levels if offsets is None else levels + offsets.astype(np.float64)[:, :, None]


@pytest.mark.parametrize("bits,group_size,scheme", FORMATS)
def test_quantize_rounds_each_weight_to_its_nearest_level(bits, group_size, scheme):
    weight = _weight()
    q, scales, offsets = F.quantize_weight(weight, bits, group_size, scheme)
    assert q.dtype == (core.int8 if (bits, scheme) == (8, "symmetric") else core.uint8)
    assert tuple(q.shape) == (96, 256 if bits == 8 else 128)
    assert tuple(scales.shape) == (96, 1 if group_size is None else 256 // group_size)
    assert (offsets is not None) == (scheme == "affine")
    codebook = scheme if scheme in F.quantized.CODEBOOKS else None
    restored = F.dequantize_weight(q, scales, bits, offsets, codebook).numpy().astype(np.float64)
    levels = _levels(bits, scheme, scales.numpy(), None if offsets is None else offsets.numpy())
    w = weight.numpy().astype(np.float64).reshape(96, scales.shape[1], -1)
    nearest = np.abs(w[:, :, :, None] - levels[:, :, None, :]).min(axis=3).reshape(96, 256)
    error = np.abs(restored - weight.numpy())
    assert np.all(error <= nearest + 1e-6 * np.abs(weight.numpy()).max())


@pytest.mark.parametrize("bits,group_size,scheme", [(8, None, "symmetric"), (4, 64, "affine")])
def test_a_transposed_weight_is_quantized_row_major(bits, group_size, scheme):
    """GPT-2's Conv1D hands its weight over transposed; the kernels stream rows, so the
    quantized bytes must be row-major whatever the source's layout."""
    stored = _weight(256, 96)
    parts = F.quantize_weight(stored.t(), bits, group_size, scheme)
    for part, expected in zip(parts, F.quantize_weight(stored.t().contiguous(), bits, group_size, scheme)):
        if part is not None:
            assert part._data.flags.c_contiguous
            np.testing.assert_array_equal(part.numpy(), expected.numpy())


@pytest.mark.parametrize("weight", ["normal", "grid"])
@pytest.mark.parametrize("reference,bits,group_size,scheme", [
    ("quanto_int8", 8, None, "symmetric"), ("quanto_int4", 4, 128, "affine"), ("bnb_nf4", 4, 64, "nf4"),
    ("bnb_fp4", 4, 64, "fp4")])
def test_quantized_weight_reads_back_as_its_library_computes_it(weight, reference, bits, group_size, scheme):
    """tests/fixtures/quantization: optimum-quanto's and bitsandbytes' own quantize-dequantize
    (make_quantization_fixtures.py), equal to the bit, on a grid weight too, whose ties round
    one way or the other as the quantizer's float operations go."""
    fixture = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "quantization", "reference.npz"))
    _, dense = _quantized(core.tensor(fixture[weight]), bits, group_size, scheme)
    np.testing.assert_array_equal(dense, fixture[f"{weight}/{reference}"])


@pytest.mark.parametrize("weight", ["normal", "narrow", "wide"])
def test_bitsandbytes_layers_read_back_as_bitsandbytes_computes_them(weight):
    """Linear4bit's flat blocks of 64, which span rows of a 32- or 96-wide weight, and its
    double quantization (absmax codes against bitsandbytes' own: its CPU search picks the
    farther of two codes for about one value in 700, hence the tolerance of one code step)."""
    from mindnlp.transformers.integrations.bitsandbytes import Linear4bit

    fixture = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "quantization", "reference.npz"))
    layer = Linear4bit.from_float(core.tensor(fixture[weight]), quant_type="nf4")
    np.testing.assert_array_equal(layer.dequantized_weight().numpy(), fixture[f"{weight}/bnb_nf4"])
    if weight == "normal":
        nested = Linear4bit.from_float(core.tensor(fixture[weight]), quant_type="nf4", compress_statistics=True)
        np.testing.assert_allclose(nested.dequantized_weight().numpy(), fixture["normal/bnb_nf4_double"], rtol=1e-6,
                                   atol=1e-7)


def test_blockwise_8_bit_codes_are_the_nearest_of_the_dynamic_map():
    values = core.tensor(RNG.standard_normal(600).astype(np.float32))
    code = F.quantized.dynamic_code()
    assert code.shape == (256,) and code[0] < -0.99 and code[-1] == 1.0 and np.all(np.diff(code) >= 0)
    codes, absmax = F.quantized.quantize_blockwise(values, code, 256)
    assert tuple(absmax.shape) == (3,)
    np.testing.assert_array_equal(absmax.numpy(), np.abs(np.pad(values.numpy(), (0, 168))).reshape(3, 256).max(1))
    decoded = F.quantized.dequantize_blockwise(codes, absmax, code, 256).numpy()
    normed = values.numpy() / np.repeat(absmax.numpy(), 256)[:600]
    searched = code.copy()
    searched[0] = -1.0
    nearest = np.abs(normed[:, None] - searched[None, :]).min(axis=1)
    chosen = np.abs(normed - searched[codes.numpy()])
    np.testing.assert_array_equal(chosen, nearest)
    np.testing.assert_allclose(decoded, code[codes.numpy()] * np.repeat(absmax.numpy(), 256)[:600])


def test_affine_int4_spans_each_groups_range():
    weight = _weight()
    q, scales, offsets = F.quantize_weight(weight, 4, 32, "affine")
    groups = weight.numpy().reshape(96, 8, 32)
    np.testing.assert_allclose(offsets.numpy(), groups.min(axis=2))
    np.testing.assert_allclose(scales.numpy(), (groups.max(axis=2) - groups.min(axis=2)) / 15, rtol=1e-6)
    packed = q.numpy().reshape(96, 8, 16)
    nibbles = np.concatenate([packed & 15, packed >> 4], axis=2)
    assert np.all(nibbles.min(axis=2) == 0) and np.all(nibbles.max(axis=2) == 15)


def test_nf4_codebook_is_bitsandbytes_normal_map():
    """bitsandbytes builds NF4 from normal quantiles (create_normal_map, offset 0.9677083):
    8 positive and 7 negative quantiles between the offset and 1/2, an exact zero, scaled by
    the largest."""
    stats = pytest.importorskip("scipy.stats")
    offset = 0.9677083
    positive = stats.norm.ppf(np.linspace(offset, 0.5, 9)[:-1])
    negative = -stats.norm.ppf(np.linspace(offset, 0.5, 8)[:-1])
    values = np.sort(np.concatenate([positive, [0.0], negative])) / positive.max()
    np.testing.assert_allclose(F.quantized.CODEBOOKS["nf4"], values, rtol=0, atol=1e-6)
    fp4 = F.quantized.CODEBOOKS["fp4"]
    assert fp4.max() == 1.0 and np.array_equal(fp4[8:], -fp4[:8])


def _quantized(weight, bits, group_size, scheme):
    """(q, scales, offsets, codebook name) of a weight in a format, and its dequantized array."""
    q, scales, offsets = F.quantize_weight(weight, bits, group_size, scheme)
    codebook = scheme if scheme in F.quantized.CODEBOOKS else None
    return (q, scales, offsets, codebook), F.dequantize_weight(q, scales, bits, offsets, codebook).numpy()


@pytest.mark.parametrize("bits,group_size,scheme", FORMATS)
@pytest.mark.parametrize("rows", [1, 5, 16, 17, 130])
@pytest.mark.parametrize("with_bias", [False, True])
def test_quantized_product_equals_dequantize_then_matmul(flavour, bits, group_size, scheme, rows, with_bias):
    (q, scales, offsets, codebook), dense = _quantized(_weight(), bits, group_size, scheme)
    x = core.tensor(RNG.standard_normal((rows, 256)).astype(np.float32))
    bias = core.tensor(RNG.standard_normal(96).astype(np.float32)) if with_bias else None
    out = F.quantized_linear(x, q, scales, bits, bias, offsets, codebook)
    assert out.dtype == core.float32 and tuple(out.shape) == (rows, 96)
    _assert_float32_close(out.numpy(), x.numpy(), dense, None if bias is None else bias.numpy())


@pytest.mark.parametrize("bits,group_size,scheme", [(8, None, "symmetric"), (4, 32, "symmetric"), (8, 32, "affine"),
                                                     (4, 128, "affine"), (4, 64, "nf4")])
def test_kernel_matches_reference_on_large_shapes(bits, group_size, scheme):
    if cpu_jit.load() is None:
        pytest.skip("numba is not installed")
    (q, scales, offsets, codebook), dense = _quantized(_weight(1000, 1024), bits, group_size, scheme)
    offsets = None if offsets is None else offsets.numpy()
    codebook = None if codebook is None else F.quantized.CODEBOOKS[codebook]
    for rows in (1, 300):
        x = RNG.standard_normal((rows, 1024)).astype(np.float32)
        _assert_float32_close(K.quantized_matmul(x, q.numpy(), scales.numpy(), bits, None, offsets, codebook), x, dense)


@pytest.mark.parametrize("bits,group_size,scheme", [(8, None, "symmetric"), (4, 32, "symmetric"), (4, 32, "affine"),
                                                     (4, 64, "fp4")])
def test_gradient_with_respect_to_input_and_bias_is_numerically_right(bits, group_size, scheme):
    (q, scales, offsets, codebook), _ = _quantized(_weight(6, 64), bits, group_size, scheme)
    x = core.tensor(RNG.standard_normal((2, 3, 64)), dtype=core.float64, requires_grad=True)
    bias = core.tensor(RNG.standard_normal(6), dtype=core.float64, requires_grad=True)
    assert core.autograd.gradcheck(lambda x, b: F.quantized_linear(x, q, scales, bits, b, offsets, codebook), (x, bias))


def test_float32_gradient_matches_dense_linear(flavour):
    (q, scales, offsets, _), dense = _quantized(_weight(), 4, 64, "affine")
    dense = core.tensor(dense)
    x = core.tensor(RNG.standard_normal((3, 256)).astype(np.float32), requires_grad=True)
    F.quantized_linear(x, q, scales, 4, offsets=offsets).square().sum().backward()
    x_ref = x.detach().clone().requires_grad_(True)
    F.linear(x_ref, dense).square().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x_ref.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_bad_formats_and_inputs_get_clear_errors():
    weight = _weight(4, 48)
    with pytest.raises(ValueError, match="8 or 4 bits"):
        F.quantize_weight(weight, 3)
    with pytest.raises(ValueError, match="need a group_size"):
        F.quantize_weight(weight, 4)
    with pytest.raises(ValueError, match="divisor of in_features"):
        F.quantize_weight(weight, 4, 32)
    with pytest.raises(ValueError, match="4-bit codebook"):
        F.quantize_weight(weight, 8, 16, "nf4")
    with pytest.raises(ValueError, match="unknown quantization scheme"):
        F.quantize_weight(weight, 4, 16, "int3")
    q, scales, _ = F.quantize_weight(weight, 8)
    with pytest.raises(ValueError, match="unknown 4-bit codebook"):
        F.quantized_linear(core.ones(2, 48), q, scales, 8, codebook="af4")
    with pytest.raises(RuntimeError, match="in_features 48"):
        F.quantized_linear(core.ones(2, 47), q, scales, 8)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.quantized_linear(core.ones(2, 48, dtype=core.int64), q, scales, 8)


@pytest.mark.parametrize("scheme", ["symmetric", "affine", "nf4"])
def test_quantized_linear_module_holds_buffers_and_trains_only_bias(scheme):
    dense = nn.Linear(64, 8)
    layer = nn.QuantizedLinear.from_float(dense.weight, dense.bias, bits=4, group_size=32, scheme=scheme)
    assert [name for name, _ in layer.named_parameters()] == ["bias"]
    assert sorted(layer.state_dict()) == sorted(["bias", "weight", "weight_scale"] + (["weight_offset"] if scheme ==
                                                                                    "affine" else []))
    x = core.randn(5, 64)
    np.testing.assert_allclose(layer(x).detach().numpy(), F.linear(x, layer.dequantized_weight(), dense.bias).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    shell = nn.QuantizedLinear(64, 8, bits=4, group_size=32, scheme=scheme)
    shell.load_state_dict(layer.state_dict())
    np.testing.assert_array_equal(shell(x).detach().numpy(), layer(x).detach().numpy())


LUT_FORMATS = [(32, "symmetric"), (64, "affine"), (128, "affine"), (64, "nf4"), (64, "fp4")]


@pytest.mark.parametrize("group_size,scheme", LUT_FORMATS)
def test_table_lookup_kernel_equals_dequantize_then_matmul(group_size, scheme):
    """cpu_jit_lut4 (rows of x against a 4-bit weight through a 16-entry table per group), on a
    weight row count that leaves rows after the blocks of four, with a bias."""
    from mindnlp.core.backends import cpu_jit_lut4

    if not cpu_jit_lut4.usable():
        pytest.skip("no AVX-512 or AVX2 here (or numba compiles for another CPU)")
    (q, scales, offsets, codebook), dense = _quantized(_weight(103, 256), 4, group_size, scheme)
    bias = RNG.standard_normal(103).astype(np.float32)
    for rows in (1, 2, 3, 7, 15):  # blocks of eight, four and two rows of x, and one left over
        x = RNG.standard_normal((rows, 256)).astype(np.float32)
        launch = cpu_jit_lut4.plan((q.numpy(),), (scales.numpy(),), None if offsets is None else (offsets.numpy(),),
                                   None if codebook is None else F.quantized.CODEBOOKS[codebook], (bias,))
        given = np.full((rows, 103), np.nan, np.float32)
        (out,) = launch(x, (given,))
        assert out is given
        _assert_float32_close(out, x, dense, bias)


@pytest.mark.parametrize("group_size,scheme", [(32, "symmetric"), (64, "affine"), (128, "affine")])
@pytest.mark.parametrize("spread", [True, False])
def test_converted_4_bit_products_equal_the_looked_up_ones(group_size, scheme, spread):
    """One row of x against an affine or symmetric 4-bit weight may convert the nibbles (each
    group's sum of c x times the scale, plus the offset, or -8 times the scale, times the
    group's sum of x) instead of looking values up in the group's table (AVX2 machines do): the
    product within float32 rounding either way, four weight rows per pass or one at a time."""
    from mindnlp.core.backends import cpu_jit_lut4

    if not cpu_jit_lut4.usable():
        pytest.skip("no AVX-512 or AVX2 here (or numba compiles for another CPU)")
    (q, scales, offsets, _), dense = _quantized(_weight(103, 256), 4, group_size, scheme)
    q, scales = q.numpy(), scales.numpy()
    offsets = None if offsets is None else offsets.numpy()
    base = cpu_jit_lut4._table_base(offsets, None)
    x = RNG.standard_normal((1, 256)).astype(np.float32)
    for convert in (False, True):
        out = np.empty((1, 103), np.float32)
        cpu_jit_lut4._rows_lut4(x, q, scales, offsets, base, None, out, 2, spread, convert)
        _assert_float32_close(out, x, dense)


@pytest.mark.parametrize("group_size,scheme", [(None, "symmetric"), (32, "symmetric"), (32, "affine")])
@pytest.mark.parametrize("spread", [True, False])
def test_8_bit_rows_read_four_per_pass_or_one_at_a_time(group_size, scheme, spread, monkeypatch):
    """Both ways a machine may choose to read an 8-bit weight's rows (cpu_jit_parallel's
    side_by_side for "int8 rows"): 103 rows in two bands leave rows after the passes of four."""
    from mindnlp.core.backends import cpu_jit_parallel

    if cpu_jit.quantized() is None or cpu_jit.parallel() is None:
        pytest.skip("the quantized kernels are numba's")
    monkeypatch.setattr(cpu_jit_parallel, "_side_by_side", {"int8 rows": spread})
    (q, scales, offsets, _), dense = _quantized(_weight(103, 256), 8, group_size, scheme)
    bias = RNG.standard_normal(103).astype(np.float32)
    for rows in (1, 3):
        x = RNG.standard_normal((rows, 256)).astype(np.float32)
        out = K.quantized_matmul(x, q.numpy(), scales.numpy(), 8, bias, None if offsets is None else offsets.numpy())
        _assert_float32_close(out, x, dense, bias)


def test_table_lookup_kernel_serves_where_the_cpu_has_the_instructions():
    """A failed probe turns the kernel off and the tests above skip: on a CPU with AVX2 or
    AVX-512 that is a fault, which fails here instead."""
    pytest.importorskip("numba")
    from mindnlp.core.backends import cpu_jit_lut4

    if cpu_jit_lut4.WIDTH is None:
        pytest.skip("no AVX2 here")
    assert cpu_jit_lut4.usable()


@pytest.mark.parametrize("bits,group_size,scheme", [f for f in FORMATS if f[0] == 8] + [(4,) + f for f in LUT_FORMATS])
@pytest.mark.parametrize("bias", [False, True])
def test_one_launch_for_many_weights_equals_a_launch_each(bits, group_size, scheme, bias):
    """quantized_matmul_many (a decoding step's projections of one input, in one launch of the
    pool) gives each output bit for bit as its own quantized_matmul."""
    if cpu_jit.quantized() is None or cpu_jit.parallel() is None:
        pytest.skip("the quantized kernels are numba's")
    layers = [_quantized(_weight(n, 256), bits, group_size, scheme)[0] for n in (103, 32, 64)]
    biases = [RNG.standard_normal(n).astype(np.float32) if bias else None for n in (103, 32, 64)]
    codebook = F.quantized.CODEBOOKS.get(scheme)
    arrays = [[None if a is None else a.numpy() for a in layer[:3]] for layer in layers]
    for rows in (1, 3):
        x = RNG.standard_normal((rows, 256)).astype(np.float32)
        outs = K.quantized_matmul_many(x, [a[0] for a in arrays], [a[1] for a in arrays], bits, biases,
                                       None if arrays[0][2] is None else [a[2] for a in arrays], codebook)
        for out, (q, scales, offsets), b in zip(outs, arrays, biases):
            np.testing.assert_array_equal(out, K.quantized_matmul(x, q, scales, bits, b, offsets, codebook))


@pytest.mark.parametrize("scheme", ["symmetric", "affine"])
def test_one_launch_for_weights_of_different_group_sizes(scheme):
    """Weights of one input quantized in groups of different sizes (a GGUF file may mix block
    types): each output bit for bit as its own product, whichever way the kernels read them
    (converting, x's group sums differ, so each weight takes a launch of its own)."""
    if cpu_jit.quantized() is None or cpu_jit.parallel() is None:
        pytest.skip("the quantized kernels are numba's")
    layers = [_quantized(_weight(n, 256), 4, size, scheme)[0] for n, size in ((103, 64), (32, 128), (64, 32))]
    arrays = [[None if a is None else a.numpy() for a in layer[:3]] for layer in layers]
    x = RNG.standard_normal((1, 256)).astype(np.float32)
    outs = K.quantized_matmul_many(x, [a[0] for a in arrays], [a[1] for a in arrays], 4, [None] * 3,
                                   None if arrays[0][2] is None else [a[2] for a in arrays])
    for out, (q, scales, offsets) in zip(outs, arrays):
        np.testing.assert_array_equal(out, K.quantized_matmul(x, q, scales, 4, None, offsets))


def test_table_lookup_kernel_declines_many_weights_it_cannot_read():
    """One weight it cannot read (a strided view) and no launch is planned for any of them;
    cpu_jit_quant then takes one launch each, with the same outputs."""
    from mindnlp.core.backends import cpu_jit_lut4

    if not cpu_jit_lut4.usable():
        pytest.skip("no AVX-512 or AVX2 here (or numba compiles for another CPU)")
    (q, scales, _, _), dense = _quantized(_weight(64, 256), 4, 64, "symmetric")
    q, scales = q.numpy(), scales.numpy()
    x = RNG.standard_normal((1, 256)).astype(np.float32)
    assert cpu_jit_lut4.plan((q, q[::2]), (scales, scales[::2]), None, None, (None, None)) is None
    outs = K.quantized_matmul_many(x, [q, q[::2]], [scales, scales[::2]], 4, [None, None])
    _assert_float32_close(outs[0], x, dense)
    _assert_float32_close(outs[1], x, dense[::2])


def test_table_lookup_kernel_at_the_avx2_width():
    """The AVX2 build (two permutes and a select per lookup), where an AVX-512 machine would take
    the wider one: run in a process asking for width 8, with a numba cache of its own."""
    from mindnlp.core.backends import cpu_jit_lut4

    if cpu_jit_lut4.WIDTH is None:
        pytest.skip("no AVX2 here")
    run_at_avx2_width(
        "import numpy as np\n"
        "from mindnlp.core.backends import cpu_jit_lut4\n"
        "from mindnlp.core.nn import functional as F\n"
        "from mindnlp import core\n"
        "assert cpu_jit_lut4.WIDTH == 8 and cpu_jit_lut4.usable()\n"
        "rng = np.random.default_rng(1)\n"
        f"for group_size, scheme in {LUT_FORMATS!r}:\n"
        "    q, s, o = F.quantize_weight(core.tensor(rng.standard_normal((37, 128)).astype(np.float32)), 4, group_size, "
        "scheme)\n"
        "    cb = F.quantized.CODEBOOKS.get(scheme)\n"
        "    dense = F.dequantize_weight(q, s, 4, o, scheme if cb is not None else None).numpy().astype(np.float64)\n"
        "    x = rng.standard_normal((3, 128)).astype(np.float32)\n"
        "    (out,) = cpu_jit_lut4.plan((q.numpy(),), (s.numpy(),), None if o is None else (o.numpy(),), cb, (None,))(x, (np.empty((3, 37), np.float32),))\n"
        "    bound = 8 * np.finfo(np.float32).eps * (np.abs(x.astype(np.float64)) @ np.abs(dense).T + 1)\n"
        "    assert np.all(np.abs(out - x @ dense.T) <= bound), scheme\n"
        "print('ok')\n")
