"""Phi tests: HF's structure (PhiModelTester + the common and causal-LM checks), its parallel
block, partial rotary and layer names, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    PhiConfig,
    PhiForCausalLM,
    PhiForSequenceClassification,
    PhiForTokenClassification,
    PhiModel,
)
from mindnlp.transformers.models.phi import modeling_phi

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin


class PhiModelTester(CausalLMModelTester):
    config_class = PhiConfig
    base_model_class = PhiModel
    causal_lm_class = PhiForCausalLM
    sequence_classification_class = PhiForSequenceClassification
    token_classification_class = PhiForTokenClassification


class PhiModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = PhiModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": PhiModel,
        "text-classification": PhiForSequenceClassification,
        "text-generation": PhiForCausalLM,
        "token-classification": PhiForTokenClassification,
        "zero-shot": PhiForSequenceClassification,
    }

    def test_parameter_names_are_hfs(self):
        names = set(self._lm(qk_layernorm=True).state_dict())
        for name in ("model.layers.0.self_attn.dense.bias", "model.layers.0.self_attn.q_layernorm.weight",
                     "model.layers.0.mlp.fc1.weight", "model.layers.0.input_layernorm.bias",
                     "model.final_layernorm.weight", "lm_head.bias"):
            self.assertIn(name, names)
        self.assertFalse(any("post_attention_layernorm" in n or "o_proj" in n or "model.norm" in n for n in names))

    def test_attention_and_mlp_read_the_same_norm_in_parallel(self):
        model = self._lm()
        layer = model.model.layers[0]
        hidden = core.randn(1, 4, 32)
        position_embeddings = model.model.rotary_emb(hidden, core.arange(4).unsqueeze(0))
        with core.no_grad():
            normed = layer.input_layernorm(hidden)
            attention, _ = layer.self_attn(normed, position_embeddings)
            expected = hidden + attention + layer.mlp(normed)
            np.testing.assert_allclose(layer(hidden, position_embeddings)[0].numpy(), expected.numpy(), atol=1e-6)

    def test_half_of_each_head_is_rotated_by_default(self):
        config = PhiConfig()
        self.assertEqual(config.rope_parameters["partial_rotary_factor"], 0.5)
        cos, _ = self._lm().model.rotary_emb(core.zeros(1), core.arange(3).unsqueeze(0))
        self.assertEqual(cos.shape[-1], 4)  # heads of 8

    def test_config_head_dim_and_grouped_query_attention(self):
        """Phi's output projection is `dense`; the shared check reads `o_proj`."""
        config = self.model_tester.get_config()
        config.head_dim = 16
        attention = self.model_tester.model(PhiForCausalLM, config).model.layers[0].self_attn
        self.assertEqual(tuple(attention.k_proj.weight.shape), (2 * 16, 32))
        self.assertEqual(tuple(attention.dense.weight.shape), (32, 4 * 16))

    def test_auto_classes_pick_phi(self):
        config = AutoConfig.for_model("phi", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, PhiConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), PhiForCausalLM)


class TestPhiParity(DecoderParityMixin):
    @pytest.fixture(params=["phi"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_phi, "Phi")


if __name__ == "__main__":
    unittest.main()
