"""autocast: which ops run in the low dtype, which stay float32, and gradients through casts.

Expected dtypes are torch's CPU autocast policy (matrix products and linear in the low
dtype; losses in float32; elementwise ops, softmax and norms in their input dtype; float64
never cast).
"""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import amp
from mindnlp.core.amp import autocast


def _f32(*shape):
    return core.randn(*shape)


@pytest.mark.parametrize("low", [core.bfloat16, core.float16])
def test_matrix_products_run_in_low_precision(low):
    a, b, batch, bias = _f32(3, 4), _f32(4, 5), _f32(2, 3, 3), _f32(3, 5)
    with autocast("cpu", dtype=low):
        results = {
            "matmul": a @ b,
            "matmul_1d": a[0] @ b[:, 0],
            "mm": core.mm(a, b),
            "bmm": core.bmm(batch, batch),
            "baddbmm": core.baddbmm(batch, batch, batch),
            "addmm": core.addmm(bias, a, b),
            "addbmm": core.addbmm(batch[0], batch, batch),
            "einsum": core.einsum("ij,jk->ik", a, b),
        }
    for name, out in results.items():
        assert out.dtype == low, name
    expected = (a.to(low).float().numpy() @ b.to(low).float().numpy()).astype(low.np_dtype)
    np.testing.assert_array_equal(results["matmul"].float().numpy(), expected.astype(np.float32))


def test_linear_casts_weight_and_bias_and_gradients_come_back_float32():
    from mindnlp.core.nn import functional as F

    x = core.randn(3, 4, requires_grad=True)
    w = core.randn(5, 4, requires_grad=True)
    b = core.randn(5, requires_grad=True)
    with autocast("cpu"):
        y = F.linear(x, w, b)
    assert y.dtype == core.bfloat16
    y.float().sum().backward()
    assert (x.grad.dtype, w.grad.dtype, b.grad.dtype) == (core.float32,) * 3
    np.testing.assert_allclose(b.grad.numpy(), np.full(5, 3.0))


def test_other_ops_keep_their_dtype_and_float64_is_not_cast():
    a = _f32(3, 3)
    with autocast("cpu", dtype=core.bfloat16):
        assert (a.double() @ a.double()).dtype == core.float64
        assert (a + a).dtype == core.float32
        assert a.exp().dtype == core.float32
        mixed = (a @ a) + a  # bfloat16 product + float32 tensor promotes
        assert mixed.dtype == core.float32
        ints = core.ones(2, 2, dtype=core.int64)
        assert (ints @ ints).dtype == core.int64


def test_float32_policy_upcasts_low_precision_inputs():
    x = core.randn(4, 3).to(core.bfloat16)
    with autocast("cpu"):
        cast = amp.autocast_inputs("mse_loss", x, x)
        assert [t.dtype for t in cast] == [core.float32, core.float32]
        assert amp.autocast_inputs("softmax", x)[0].dtype == core.bfloat16  # cpu keeps softmax in input dtype
    assert amp.autocast_inputs("mse_loss", x)[0] is x


def test_nesting_disable_and_decorator():
    a = _f32(2, 2)
    assert not amp.is_autocast_enabled("cpu")
    with autocast("cpu", dtype=core.float16):
        assert amp.is_autocast_enabled("cpu") and amp.get_autocast_dtype("cpu") == core.float16
        with autocast("cpu", enabled=False):
            assert (a @ a).dtype == core.float32
        with autocast("cpu", dtype=core.bfloat16):
            assert (a @ a).dtype == core.bfloat16
        assert (a @ a).dtype == core.float16
    assert not amp.is_autocast_enabled("cpu")

    @autocast("cpu")
    def product(x):
        return x @ x

    assert product(a).dtype == core.bfloat16
    assert (a @ a).dtype == core.float32


def test_cuda_region_leaves_cpu_tensors_alone():
    a = _f32(2, 2)
    with autocast("cuda"):
        assert amp.is_autocast_enabled("cuda") and not amp.is_autocast_enabled("cpu")
        assert (a @ a).dtype == core.float32


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="unsupported autocast device_type"):
        autocast("tpu")
    with pytest.raises(RuntimeError, match="only supports float16 and bfloat16"):
        autocast("cpu", dtype=core.float64)


def test_aliases():
    assert core.autocast is autocast
    assert core.amp.GradScaler is amp.GradScaler
