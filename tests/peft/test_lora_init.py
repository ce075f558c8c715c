"""init_lora_weights variants, checked against their definitions."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft
from mindnlp.core import nn


class Wide(nn.Module):
    def __init__(self, in_features=64):
        super().__init__()
        self.lin = nn.Linear(in_features, 48)

    def forward(self, x):
        return self.lin(x)


def _wrap(in_features=64, **kwargs):
    core.manual_seed(0)
    base = Wide(in_features)
    original = base.lin.weight.detach().clone().numpy()
    return peft.get_peft_model(base, peft.LoraConfig(target_modules=["lin"], **kwargs)), original


def test_default_init_starts_as_identity_update():
    model, _ = _wrap(r=8)
    layer = model.base_model.model.lin
    assert float(layer.lora_B["default"].weight.abs().max()) == 0
    bound = 1 / math.sqrt(64)  # kaiming_uniform(a=sqrt(5)) on fan_in 64
    assert float(layer.lora_A["default"].weight.abs().max()) <= bound


def test_gaussian_init():
    model, _ = _wrap(in_features=1024, r=4, init_lora_weights="gaussian")
    A = model.base_model.model.lin.lora_A["default"].weight.detach().numpy()
    assert float(model.base_model.model.lin.lora_B["default"].weight.abs().max()) == 0
    # N(0, 1/r): 4096 samples, so the std is within 4 standard errors (0.25 / sqrt(2 * 4096)) of 1/4
    assert abs(A.std() - 1 / 4) < 4 * 0.25 / math.sqrt(2 * 4096) and abs(A.mean()) < 4 * 0.25 / 64


def test_init_false_gives_random_b():
    model, _ = _wrap(r=4, init_lora_weights=False)
    assert float(model.base_model.model.lin.lora_B["default"].weight.abs().max()) > 0


@pytest.mark.parametrize("init", ["pissa", "pissa_niter_4"])
def test_pissa(init):
    model, original = _wrap(r=4, lora_alpha=8, init_lora_weights=init)
    layer = model.base_model.model.lin
    A, B = layer.lora_A["default"].weight.detach().numpy(), layer.lora_B["default"].weight.detach().numpy()
    residual = layer.base_layer.weight.detach().numpy()
    scaling = 8 / 4
    np.testing.assert_allclose(residual + scaling * B @ A, original, atol=1e-5)
    U, S, Vh = np.linalg.svd(original.astype(np.float64), full_matrices=False)
    top = (U[:, :4] * S[:4]) @ Vh[:4]
    if init == "pissa":  # exactly the best rank-4 approximation
        np.testing.assert_allclose(scaling * B @ A, top, atol=1e-5)
    else:  # the randomised SVD comes close to the optimal residual (flat spectrum: the hard case)
        assert np.linalg.norm(original - scaling * B @ A) <= 1.05 * np.linalg.norm(original - top)


def test_olora():
    model, original = _wrap(r=4, lora_alpha=8, init_lora_weights="olora")
    layer = model.base_model.model.lin
    A, B = layer.lora_A["default"].weight.detach().numpy(), layer.lora_B["default"].weight.detach().numpy()
    np.testing.assert_allclose(layer.base_layer.weight.detach().numpy() + 2 * B @ A, original, atol=1e-5)
    np.testing.assert_allclose(B.T @ B, np.eye(4), atol=1e-5)  # the first r columns of Q


def test_rslora_scaling():
    model, _ = _wrap(r=16, lora_alpha=8, use_rslora=True)
    assert model.base_model.model.lin.scaling["default"] == 8 / math.sqrt(16)


def test_safe_merge_refuses_nan():
    model, _ = _wrap(r=4, init_lora_weights=False)
    with core.no_grad():
        model.base_model.model.lin.lora_A["default"].weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaNs detected in the merged weights"):
        model.base_model.merge_adapter(safe_merge=True)
