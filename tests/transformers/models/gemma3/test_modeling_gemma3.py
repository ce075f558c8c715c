"""Gemma 3 text tests: HF's structure (Gemma3TextModelTester + the common and causal-LM checks),
its q/k norm and per-layer-type RoPE, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForSequenceClassification,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    Gemma3TextForSequenceClassification,
    Gemma3TextModel,
)
from mindnlp.transformers.models.gemma3 import modeling_gemma3

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin


class Gemma3TextModelTester(CausalLMModelTester):
    config_class = Gemma3TextConfig
    base_model_class = Gemma3TextModel
    causal_lm_class = Gemma3ForCausalLM
    sequence_classification_class = Gemma3TextForSequenceClassification

    def __init__(self, parent, **kwargs):
        kwargs.update(head_dim=8, sliding_window=3, query_pre_attn_scalar=8,
                      layer_types=["sliding_attention", "full_attention"])
        super().__init__(parent, **kwargs)


class Gemma3TextModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Gemma3TextModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Gemma3TextModel,
        "text-classification": Gemma3TextForSequenceClassification,
        "text-generation": Gemma3ForCausalLM,
        "zero-shot": Gemma3TextForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_local_and_global_layers_rotate_with_their_own_base(self):
        rotary = self._lm().model.rotary_emb
        x, positions = core.zeros(1), core.arange(5).unsqueeze(0)
        for kind, base in (("sliding_attention", 10_000.0), ("full_attention", 1_000_000.0)):
            cos, _ = rotary(x, positions, layer_type=kind)
            inv_freq = 1.0 / base ** (np.arange(0, 8, 2) / 8)
            angles = np.arange(5)[:, None] * np.concatenate([inv_freq, inv_freq])
            np.testing.assert_allclose(cos[0].numpy(), np.cos(angles), rtol=1e-5, atol=1e-6)

    def test_queries_and_keys_are_normalised_per_head_with_unit_offset(self):
        attention = self._lm().model.layers[0].self_attn
        self.assertIsInstance(attention.q_norm, modeling_gemma3.GemmaRMSNorm)
        self.assertEqual(tuple(attention.k_norm.weight.shape), (8,))
        np.testing.assert_array_equal(attention.q_norm.weight.detach().numpy(), 0.0)

    def test_config_reads_v4_rope_keys(self):
        config = Gemma3TextConfig(rope_theta=5e5, rope_local_base_freq=2e4,
                                  rope_scaling={"rope_type": "linear", "factor": 8.0})
        self.assertEqual(config.rope_parameters["full_attention"],
                         {"rope_type": "linear", "factor": 8.0, "rope_theta": 5e5})
        self.assertEqual(config.rope_parameters["sliding_attention"], {"rope_type": "default", "rope_theta": 2e4})
        self.assertEqual(config.layer_types[:6], ["sliding_attention"] * 5 + ["full_attention"])
        self.assertIsNone(config.final_logit_softcapping)

    def test_auto_classes_pick_gemma3_text(self):
        config = AutoConfig.for_model("gemma3_text", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, head_dim=8, intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, Gemma3TextConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Gemma3ForCausalLM)
        self.assertIsInstance(AutoModelForSequenceClassification.from_config(config),
                              Gemma3TextForSequenceClassification)


class TestGemma3Parity(DecoderParityMixin):
    @pytest.fixture(params=["gemma3"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_gemma3, "Gemma3")


if __name__ == "__main__":
    unittest.main()
