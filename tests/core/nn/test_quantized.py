"""Weight-only quantized linear layers: the formats, the compiled products against
dequantize-then-matmul, gradients with respect to the input, and QuantizedLinear.

The reference product is computed in float64 from the dequantized weight; the tolerance is
float32 rounding of a dot product, a few ulp of sum |x_j w_ij| per output.
"""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.backends import cpu_jit
from mindnlp.core.backends import cpu_kernels as K
from mindnlp.core.nn import functional as F

RNG = np.random.default_rng(0)
FORMATS = [(8, None), (8, 32), (4, 32), (4, 64), (4, 128)]


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


@pytest.mark.parametrize("bits,group_size", FORMATS)
def test_quantize_rounds_each_weight_to_its_nearest_level(bits, group_size):
    weight = _weight()
    q, scales = F.quantize_weight(weight, bits, group_size)
    assert q.dtype == (core.int8 if bits == 8 else core.uint8)
    assert tuple(q.shape) == (96, 256 if bits == 8 else 128)
    assert tuple(scales.shape) == (96, 1 if group_size is None else 256 // group_size)
    restored = F.dequantize_weight(q, scales, bits).numpy()
    step = np.repeat(scales.numpy(), 256 // scales.shape[1], axis=1)
    error = np.abs(restored - weight.numpy())
    # Levels run -127..127 (int8) or -8..7 times the scale (int4, Q4_0's rule): a value
    # beyond the top level is clipped to it, at most one step away.
    clipped = weight.numpy() / step > (7.5 if bits == 4 else 127.5)
    assert np.all(error[~clipped] <= np.abs(step[~clipped]) / 2 * (1 + 1e-5))
    assert np.all(error[clipped] <= np.abs(step[clipped]) * (1 + 1e-5))


def test_int4_uses_q4_0_layout_and_all_sixteen_levels():
    weight = core.tensor(np.array([[-8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]], np.float32))
    q, scales = F.quantize_weight(weight, 4, 8)
    assert scales.numpy()[0, 0] == 1.0        # the largest magnitude (-8) maps to level 0
    levels = [b & 15 for b in q.numpy()[0]] + [b >> 4 for b in q.numpy()[0]]
    assert levels == [0, 9, 10, 11, 12, 13, 14, 15]   # low nibbles: first half; high: second


@pytest.mark.parametrize("bits,group_size", FORMATS)
@pytest.mark.parametrize("rows", [1, 5, 16, 17, 130])
@pytest.mark.parametrize("with_bias", [False, True])
def test_quantized_product_equals_dequantize_then_matmul(flavour, bits, group_size, rows, with_bias):
    weight = _weight()
    q, scales = F.quantize_weight(weight, bits, group_size)
    x = core.tensor(RNG.standard_normal((rows, 256)).astype(np.float32))
    bias = core.tensor(RNG.standard_normal(96).astype(np.float32)) if with_bias else None
    out = F.quantized_linear(x, q, scales, bits, bias)
    assert out.dtype == core.float32 and tuple(out.shape) == (rows, 96)
    _assert_float32_close(out.numpy(), x.numpy(), F.dequantize_weight(q, scales, bits).numpy(),
                          None if bias is None else bias.numpy())


@pytest.mark.parametrize("bits,group_size", [(8, None), (4, 32)])
def test_kernel_matches_reference_on_large_shapes(bits, group_size):
    if cpu_jit.load() is None:
        pytest.skip("numba is not installed")
    weight = _weight(1000, 1024)
    q, scales = F.quantize_weight(weight, bits, group_size)
    dense = F.dequantize_weight(q, scales, bits).numpy()
    for rows in (1, 300):
        x = RNG.standard_normal((rows, 1024)).astype(np.float32)
        _assert_float32_close(K.quantized_matmul(x, q.numpy(), scales.numpy(), bits), x, dense)


@pytest.mark.parametrize("bits,group_size", [(8, None), (4, 32)])
def test_gradient_with_respect_to_input_and_bias_is_numerically_right(bits, group_size):
    q, scales = F.quantize_weight(_weight(6, 64), bits, group_size)
    x = core.tensor(RNG.standard_normal((2, 3, 64)), dtype=core.float64, requires_grad=True)
    bias = core.tensor(RNG.standard_normal(6), dtype=core.float64, requires_grad=True)
    assert core.autograd.gradcheck(lambda x, b: F.quantized_linear(x, q, scales, bits, b), (x, bias))


def test_float32_gradient_matches_dense_linear(flavour):
    q, scales = F.quantize_weight(_weight(), 4, 64)
    dense = F.dequantize_weight(q, scales, 4)
    x = core.tensor(RNG.standard_normal((3, 256)).astype(np.float32), requires_grad=True)
    F.quantized_linear(x, q, scales, 4).square().sum().backward()
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
    q, scales = F.quantize_weight(weight, 8)
    with pytest.raises(RuntimeError, match="in_features 48"):
        F.quantized_linear(core.ones(2, 47), q, scales, 8)
    with pytest.raises(RuntimeError, match="floating-point"):
        F.quantized_linear(core.ones(2, 48, dtype=core.int64), q, scales, 8)


def test_quantized_linear_module_holds_buffers_and_trains_only_bias():
    dense = nn.Linear(64, 8)
    layer = nn.QuantizedLinear.from_float(dense.weight, dense.bias, bits=4, group_size=32)
    assert [name for name, _ in layer.named_parameters()] == ["bias"]
    assert sorted(layer.state_dict()) == ["bias", "weight", "weight_scale"]
    x = core.randn(5, 64)
    np.testing.assert_allclose(layer(x).detach().numpy(), F.linear(x, layer.dequantized_weight(), dense.bias).detach().numpy(),
                               rtol=1e-5, atol=1e-5)
    shell = nn.QuantizedLinear(64, 8, bits=4, group_size=32)
    shell.load_state_dict(layer.state_dict())
    np.testing.assert_array_equal(shell(x).detach().numpy(), layer(x).detach().numpy())
