"""LoHa and LoKr reconstructions checked against their definitions (numpy), and LoKr's factorisation."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft
from mindnlp.peft.tuners.lokr.layer import factorization

from .cases import make_case


@pytest.mark.parametrize("dimension, factor, expected", [(20, -1, (4, 5)), (10, -1, (2, 5)), (2, -1, (1, 2)),
                                                         (36, -1, (6, 6)), (37, -1, (1, 37)), (32, 4, (4, 8)),
                                                         (20, 3, (2, 10))])
def test_factorization(dimension, factor, expected):
    assert factorization(dimension, factor) == expected


def test_loha_delta_is_a_hadamard_product_of_low_rank_factors():
    model = peft.get_peft_model(make_case("mlp").make_model(),
                                peft.LoHaConfig(target_modules=["lin0"], r=3, alpha=6, init_weights=False))
    layer = model.base_model.model.lin0
    w = {name: getattr(layer, name)["default"].detach().numpy() for name in layer.adapter_layer_names
         if "default" in getattr(layer, name)}
    expected = (w["hada_w1_a"] @ w["hada_w1_b"]) * (w["hada_w2_a"] @ w["hada_w2_b"]) * 2.0
    np.testing.assert_allclose(layer.get_delta_weight("default").detach().numpy(), expected, rtol=1e-5, atol=1e-6)


def test_lokr_delta_is_a_kronecker_product():
    model = peft.get_peft_model(make_case("mlp").make_model(),
                                peft.LoKrConfig(target_modules=["lin0"], r=1, alpha=3, init_weights=False))
    layer = model.base_model.model.lin0  # (20, 10): w1 (4, 2), w2 = w2_a @ w2_b (5, 5) at rank 1
    w1 = layer.lokr_w1["default"].detach().numpy()
    w2 = layer.lokr_w2_a["default"].detach().numpy() @ layer.lokr_w2_b["default"].detach().numpy()
    np.testing.assert_allclose(layer.get_delta_weight("default").detach().numpy(), np.kron(w1, w2) * 3.0,
                               rtol=1e-5, atol=1e-6)


def test_default_init_is_a_no_op():
    case = make_case("conv")
    base = case.make_model()
    with core.no_grad():
        expected = base(**case.inputs()).numpy()
    for config in (peft.LoHaConfig(target_modules=["conv1d", "conv2d"], use_effective_conv2d=True),
                   peft.LoKrConfig(target_modules=["conv1d", "conv2d"], r=1, use_effective_conv2d=True),
                   peft.LoKrConfig(target_modules=["conv2d"], init_weights="lycoris")):
        model = peft.get_peft_model(case.make_model(), config)
        with core.no_grad():
            np.testing.assert_allclose(model(**case.inputs()).numpy(), expected, rtol=1e-6, atol=1e-6)
