"""Several adapters on one model, and their weighted combinations, against HF peft's results."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft
from mindnlp.core import serialization

from .cases import make_case
from .testing_common import FIXTURES, load_outputs

MULTI = os.path.join(FIXTURES, "multi")


def _run(model, case):
    with core.no_grad():
        return model(**case.inputs()).numpy()


@pytest.fixture
def two_adapters():
    case = make_case("mlp")
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(MULTI, "a"), adapter_name="a")
    model.load_adapter(os.path.join(MULTI, "b"), adapter_name="b")
    return case, model


def test_switching_adapters(two_adapters):
    case, model = two_adapters
    outputs = load_outputs()
    assert model.active_adapters == ["a"]
    np.testing.assert_allclose(_run(model, case), outputs["multi/a"], rtol=1e-5, atol=1e-6)
    model.set_adapter("b")
    assert model.active_adapters == ["b"]
    np.testing.assert_allclose(_run(model, case), outputs["multi/b"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Adapter c not found"):
        model.set_adapter("c")


@pytest.mark.parametrize("combination, svd_rank", [("linear", None), ("cat", None), ("svd", 2)])
def test_add_weighted_adapter(two_adapters, combination, svd_rank):
    case, model = two_adapters
    name = f"{combination}_ab"
    model.add_weighted_adapter(["a", "b"], [0.7, -0.4], name, combination_type=combination, svd_rank=svd_rank)
    assert not any(p.requires_grad for n, p in model.named_parameters() if f".{name}." in n)  # added frozen
    model.set_adapter(name)
    np.testing.assert_allclose(_run(model, case), load_outputs()[f"multi/{name}"], rtol=1e-5, atol=1e-5)
    combined = serialization.load_safetensors(os.path.join(MULTI, "combined.safetensors"))
    for layer in ("lin0", "lin1"):
        module = model.base_model.model.get_submodule(layer)
        A, B = module.lora_A[name].weight.detach(), module.lora_B[name].weight.detach()
        expected_A, expected_B = combined[f"{name}/{layer}/A"], combined[f"{name}/{layer}/B"]
        if combination == "svd":  # singular vectors are unique up to sign: compare the product
            np.testing.assert_allclose((B @ A).numpy(), (expected_B @ expected_A).numpy(), rtol=1e-4, atol=1e-6)
        else:
            np.testing.assert_allclose(A.numpy(), expected_A.numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(B.numpy(), expected_B.numpy(), rtol=1e-5, atol=1e-6)


def test_weighted_adapter_errors(two_adapters):
    _, model = two_adapters
    with pytest.raises(ValueError, match="Adapter missing does not exist"):
        model.add_weighted_adapter(["a", "missing"], [1.0, 1.0], "x", combination_type="linear")
    with pytest.raises(ValueError, match="Invalid combination_type"):
        model.add_weighted_adapter(["a", "b"], [1.0, 1.0], "x", combination_type="ties")
    with pytest.raises(ValueError, match="svd_rank=4 is larger"):
        model.add_weighted_adapter(["a", "b"], [1.0, 1.0], "x", combination_type="svd")


def test_delete_adapter(two_adapters):
    case, model = two_adapters
    model.set_adapter("b")
    model.delete_adapter("a")
    assert list(model.peft_config) == ["b"]
    assert not any(".a." in n for n, _ in model.named_parameters())
    np.testing.assert_allclose(_run(model, case), load_outputs()["multi/after_delete_a"], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Adapter a does not exist"):
        model.delete_adapter("a")


def test_save_selected_adapters_layout(two_adapters, tmp_path):
    """Non-default adapters go to sub-folders named after them, as HF peft lays them out."""
    _, model = two_adapters
    model.save_pretrained(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]
    model.save_pretrained(tmp_path / "only_b", selected_adapters=["b"])
    assert sorted(os.listdir(tmp_path / "only_b")) == ["b"]
    saved = serialization.load_safetensors(str(tmp_path / "b" / "adapter_model.safetensors"))
    original = serialization.load_safetensors(os.path.join(MULTI, "b", "adapter_model.safetensors"))
    assert sorted(saved) == sorted(original)
    for key in saved:
        np.testing.assert_array_equal(saved[key].numpy(), original[key].numpy())
    with pytest.raises(ValueError, match="invalid `selected_adapters`"):
        model.save_pretrained(tmp_path, selected_adapters=["nope"])


def test_add_adapter_trains_only_the_active_one(two_adapters):
    case, model = two_adapters
    model.add_adapter("c", peft.LoraConfig(target_modules=["lin0"], r=2))
    model.set_adapter("c")
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(".c." in n for n in trainable)
    loss = case.loss(model(**case.inputs()))
    loss.backward()
    assert all(p.grad is None for n, p in model.named_parameters() if ".a." in n or ".b." in n)
