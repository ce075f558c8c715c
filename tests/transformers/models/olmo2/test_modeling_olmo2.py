"""OLMo 2 tests: HF's structure (Olmo2ModelTester + the common and causal-LM checks), its post-norm
blocks and q/k norm, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoConfig, AutoModelForCausalLM, Olmo2Config, Olmo2ForCausalLM, Olmo2Model
from mindnlp.transformers.models.olmo2 import modeling_olmo2

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin


class Olmo2ModelTester(CausalLMModelTester):
    config_class = Olmo2Config
    base_model_class = Olmo2Model
    causal_lm_class = Olmo2ForCausalLM


class Olmo2ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Olmo2ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Olmo2Model,
        "text-generation": Olmo2ForCausalLM,
    }

    def test_blocks_normalise_their_outputs(self):
        layer = self._lm().model.layers[0]
        self.assertFalse(hasattr(layer, "input_layernorm"))
        self.assertEqual(sorted(name for name, _ in layer.named_children()),
                         ["mlp", "post_attention_layernorm", "post_feedforward_layernorm", "self_attn"])
        hidden = core.randn(1, 4, 32)
        cos, sin = self._lm().model.rotary_emb(hidden, core.arange(4).unsqueeze(0))
        with core.no_grad():
            attention, _ = layer.self_attn(hidden, (cos, sin))
            after_attention = hidden + layer.post_attention_layernorm(attention)
            expected = after_attention + layer.post_feedforward_layernorm(layer.mlp(after_attention))
            np.testing.assert_allclose(layer(hidden, (cos, sin))[0].numpy(), expected.numpy(), atol=1e-6)

    def test_queries_and_keys_are_normalised_across_heads(self):
        attention = self._lm().model.layers[0].self_attn
        self.assertEqual(tuple(attention.q_norm.weight.shape), (32,))
        self.assertEqual(tuple(attention.k_norm.weight.shape), (16,))  # two key/value heads of 8

    def test_rms_norm_multiplies_in_float32_before_casting(self):
        norm = modeling_olmo2.Olmo2RMSNorm(4, eps=1e-6).to(core.bfloat16)
        with core.no_grad():
            norm.weight.copy_(core.tensor([1.5, -0.25, 3.0, 1.0]))
            x = core.tensor([[1.0, -2.0, 3.0, 0.5]]).to(core.bfloat16)
            out = norm(x)
            normed = x.float() / (x.float().pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()
            expected = (norm.weight.float() * normed).to(core.bfloat16)
        self.assertEqual(out.dtype, core.bfloat16)
        np.testing.assert_array_equal(out.float().numpy(), expected.float().numpy())

    def test_auto_classes_pick_olmo2(self):
        config = AutoConfig.for_model("olmo2", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, Olmo2Config)
        self.assertEqual(config.num_key_value_heads, 4)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Olmo2ForCausalLM)


class TestOlmo2Parity(DecoderParityMixin):
    @pytest.fixture(params=["olmo2"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_olmo2, "Olmo2")


if __name__ == "__main__":
    unittest.main()
