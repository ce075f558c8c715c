"""Checks every (model, adapter config) case must pass, in the shape of HF peft's PeftCommonTester.

`config_kwargs` are the config's fields, plus an optional "peft_type" (default "LORA") naming
the method, as HF peft's test tables name a config class per case.
A case provides `make_model()` (a fresh base model in eval mode), `inputs()` (keyword inputs
for one forward pass), `loss(output)` and `logits(output)`. Expected numbers come from HF
peft runs recorded in tests/fixtures/peft (see make_peft_fixtures.py) or from the math.
"""
import copy
import json
import os

import numpy as np

from mindnlp import core
from mindnlp import peft
from mindnlp.core import serialization

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "peft")


def load_outputs():
    return dict(np.load(os.path.join(FIXTURES, "outputs.npz")))


def load_expected():
    with open(os.path.join(FIXTURES, "expected.json")) as file:
        return json.load(file)


def as_numpy(tensor):
    return tensor.detach().numpy()


class PeftCommonTester:
    """Mixed into test classes; each `_test_*` takes a case (see module docstring) and config kwargs."""

    @staticmethod
    def _config(config_kwargs):
        kwargs = copy.deepcopy(config_kwargs)
        return peft.PEFT_TYPE_TO_CONFIG_MAPPING[kwargs.pop("peft_type", "LORA")](**kwargs)

    @staticmethod
    def _adapter_prefix(config_kwargs):
        """The start of the method's parameter names ("lora_", "ia3_", "hada_", ...)."""
        return peft.PEFT_TYPE_TO_PREFIX_MAPPING[config_kwargs.get("peft_type", "LORA")]

    def _wrap(self, case, config_kwargs, adapter_name="default"):
        return peft.get_peft_model(case.make_model(), self._config(config_kwargs), adapter_name=adapter_name)

    def _run(self, model, case):
        with core.no_grad():
            return as_numpy(case.logits(model(**case.inputs())))

    def _randomise_adapters(self, model):
        """Give every adapter weight random values, so that B is not zero and the adapter does something.
        Scales (DoRA magnitudes, IA3 vectors) stay positive."""
        generator = np.random.default_rng(0)
        prefix = peft.PEFT_TYPE_TO_PREFIX_MAPPING[model.peft_type]
        with core.no_grad():
            for name, parameter in model.named_parameters():
                if prefix in name and "ranknum" not in name:  # AdaLoRA's ranknum is a constant
                    # products of several factors (LoHa, LoKr, AdaLoRA) need larger ones to be visible
                    scale = 0.1 if prefix == "lora_" and model.peft_type == "LORA" else 0.5
                    values = generator.standard_normal(tuple(parameter.shape)).astype(np.float32) * scale
                    if "lora_magnitude_vector" in name:
                        values = np.abs(values) + 1.0
                    if "ia3_l" in name:  # clearly away from 1 (a no-op) and from 0 (unmerge divides)
                        values = np.abs(values) * 0.2 + 0.5
                    parameter.copy_(core.tensor(values))

    def _test_save_pretrained_round_trip(self, case, config_kwargs, tmp_path):
        model = self._wrap(case, config_kwargs)
        self._randomise_adapters(model)
        model.eval()
        expected = self._run(model, case)
        model.save_pretrained(tmp_path)
        assert sorted(os.listdir(tmp_path)) == ["adapter_config.json", "adapter_model.safetensors"]
        saved = serialization.load_safetensors(os.path.join(tmp_path, "adapter_model.safetensors"))
        assert saved and all(key.startswith("base_model.model.") and ".default." not in key for key in saved)
        loaded = peft.PeftModel.from_pretrained(case.make_model(), tmp_path)
        np.testing.assert_allclose(self._run(loaded, case), expected, rtol=1e-6, atol=1e-6)
        # inference mode by default: the adapter is frozen
        assert not any(p.requires_grad for n, p in loaded.named_parameters()
                       if self._adapter_prefix(config_kwargs) in n)
        again = peft.PeftModel.from_pretrained(case.make_model(), tmp_path, is_trainable=True)
        assert again.get_nb_trainable_parameters() == model.get_nb_trainable_parameters()

    def _test_merge_equivalence(self, case, config_kwargs):
        model = self._wrap(case, config_kwargs)
        self._randomise_adapters(model)
        model.eval()
        active = self._run(model, case)
        model.base_model.merge_adapter(safe_merge=True)
        np.testing.assert_allclose(self._run(model, case), active, rtol=1e-4, atol=1e-5)
        model.base_model.unmerge_adapter()
        np.testing.assert_allclose(self._run(model, case), active, rtol=1e-4, atol=1e-5)
        merged = model.merge_and_unload()
        assert not any(isinstance(m, peft.BaseTunerLayer) for m in merged.modules())
        np.testing.assert_allclose(self._run(merged, case), active, rtol=1e-4, atol=1e-5)

    def _test_disable_adapter_and_unload(self, case, config_kwargs):
        base_output = self._run(case.make_model(), case)
        model = self._wrap(case, config_kwargs)
        self._randomise_adapters(model)
        model.eval()
        active = self._run(model, case)
        assert np.abs(active - base_output).max() > 1e-4
        with model.disable_adapter():
            np.testing.assert_allclose(self._run(model, case), base_output, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(self._run(model, case), active, rtol=1e-6, atol=1e-6)
        unloaded = model.unload()
        np.testing.assert_allclose(self._run(unloaded, case), base_output, rtol=1e-6, atol=1e-6)

    def _test_training_reduces_loss(self, case, config_kwargs, steps=16, lr=0.05):
        """AdamW steps (dropout on) lower the loss measured without dropout. Sixteen steps: after
        eight, whether the loss has fallen on three examples depends on the dropout draws (a
        quarter of seeds failed for a tiny BERT with DoRA, however its dropout was laid out)."""
        core.manual_seed(0)
        model = self._wrap(case, config_kwargs)

        def eval_loss():
            model.eval()
            with core.no_grad():
                return float(case.loss(model(**case.inputs(train=True))))

        before = eval_loss()
        model.train()
        optimizer = core.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
        for _ in range(steps):
            loss = case.loss(model(**case.inputs(train=True)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert eval_loss() < before

    def _test_only_adapter_parameters_get_gradients(self, case, config_kwargs):
        model = self._wrap(case, config_kwargs)
        self._randomise_adapters(model)
        model.train()
        loss = case.loss(model(**case.inputs(train=True)))
        loss.backward()
        prefix = self._adapter_prefix(config_kwargs)
        for name, parameter in model.named_parameters():
            trainable = ((prefix in name and "ranknum" not in name) or ".modules_to_save." in name
                         or (config_kwargs.get("bias") == "all" and name.endswith(".bias")
                             and ".original_module." not in name)
                         or (config_kwargs.get("bias") == "lora_only" and name.endswith("base_layer.bias")))
            assert parameter.requires_grad == trainable, name
            if not trainable:
                assert parameter.grad is None, name
        assert any(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in model.parameters()
                   if p.requires_grad)
