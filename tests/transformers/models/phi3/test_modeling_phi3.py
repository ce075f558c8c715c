"""Phi-3 tests: HF's structure (Phi3ModelTester + the common and causal-LM checks), its fused
projections, LongRoPE config spellings and partial rotary, and parity with HF transformers on
fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    Phi3ForSequenceClassification,
    Phi3ForTokenClassification,
    Phi3Model,
)
from mindnlp.transformers.modeling_rotary import apply_rotary_pos_emb
from mindnlp.transformers.models.phi3 import modeling_phi3

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin


class Phi3ModelTester(CausalLMModelTester):
    config_class = Phi3Config
    base_model_class = Phi3Model
    causal_lm_class = Phi3ForCausalLM
    sequence_classification_class = Phi3ForSequenceClassification
    token_classification_class = Phi3ForTokenClassification


class Phi3ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Phi3ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Phi3Model,
        "text-classification": Phi3ForSequenceClassification,
        "text-generation": Phi3ForCausalLM,
        "token-classification": Phi3ForTokenClassification,
        "zero-shot": Phi3ForSequenceClassification,
    }

    def test_fused_projections_split_as_separate_ones_would(self):
        model = self._lm()
        attention, mlp = model.model.layers[0].self_attn, model.model.layers[0].mlp
        self.assertEqual(tuple(attention.qkv_proj.weight.shape), (32 + 2 * 16, 32))  # 4 heads, 2 kv heads of 8
        self.assertEqual(tuple(mlp.gate_up_proj.weight.shape), (2 * 37, 32))
        hidden = core.randn(2, 5, 32)
        with core.no_grad():
            query, key, value = attention.project(hidden)
            fused = attention.qkv_proj(hidden).numpy()
            gate_up = mlp.gate_up_proj(hidden)
            gate, up = gate_up[..., :37], gate_up[..., 37:]
            expected_mlp = mlp.down_proj(gate * core.sigmoid(gate) * up)
            np.testing.assert_allclose(mlp(hidden).numpy(), expected_mlp.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(key.numpy(), fused[..., 32:48].reshape(2, 5, 2, 8).transpose(0, 2, 1, 3), atol=1e-6)
        np.testing.assert_allclose(value.numpy(), fused[..., 48:].reshape(2, 5, 2, 8).transpose(0, 2, 1, 3),
                                   atol=1e-6)
        self.assertEqual(tuple(query.shape), (2, 4, 5, 8))

    def test_config_head_dim_and_grouped_query_attention(self):
        """The fused projection follows head_dim and the KV head count."""
        config = self.model_tester.get_config()
        config.head_dim = 16
        attention = self.model_tester.model(Phi3ForCausalLM, config).model.layers[0].self_attn
        self.assertEqual(tuple(attention.qkv_proj.weight.shape), ((4 + 2 * 2) * 16, 32))
        self.assertEqual(tuple(attention.o_proj.weight.shape), (32, 4 * 16))

    def test_su_and_yarn_rope_types_mean_longrope(self):
        for rope_type in ("su", "yarn"):
            config = Phi3Config(rope_scaling={"type": rope_type, "short_factor": [1.0] * 48,
                                              "long_factor": [2.0] * 48}, max_position_embeddings=131072)
            self.assertEqual(config.rope_parameters["rope_type"], "longrope")
            self.assertEqual(config.rope_parameters["original_max_position_embeddings"], 4096)

    def test_partial_rotary_leaves_the_last_features_of_each_head_unrotated(self):
        model = self._lm(rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5})
        attention = model.model.layers[0].self_attn
        hidden = core.randn(1, 4, 32)
        cos, sin = model.model.rotary_emb(hidden, core.arange(4).unsqueeze(0))
        self.assertEqual(cos.shape[-1], 4)
        with core.no_grad():
            _, key, _ = attention.project(hidden)
            _, rotated_key = apply_rotary_pos_emb(key, key, cos, sin)
        np.testing.assert_array_equal(rotated_key[..., 4:].numpy(), key[..., 4:].numpy())
        self.assertFalse(np.allclose(rotated_key[..., 1:, :4].numpy(), key[..., 1:, :4].numpy()))

    def test_auto_classes_pick_phi3(self):
        config = AutoConfig.for_model("phi3", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      intermediate_size=37, vocab_size=99, pad_token_id=0, eos_token_id=2)
        self.assertIsInstance(config, Phi3Config)
        self.assertEqual(config.num_key_value_heads, 4)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Phi3ForCausalLM)


class TestPhi3Parity(DecoderParityMixin):
    @pytest.fixture(params=["phi3"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_phi3, "Phi3")

    def test_greedy_generation_past_the_original_length_recomputes_the_cache(self, case):
        """LongRoPE's factors change once the text outgrows original_max_position_embeddings (32
        here): the keys cached with the short factors are recomputed once, as HF does, and every
        step's scores equal HF's."""
        model = case.load()
        out = model.generate(core.tensor([case.prompts[0]]), do_sample=False, max_new_tokens=24, min_new_tokens=24,
                             pad_token_id=0, return_dict_in_generate=True, output_scores=True)
        expected = "greedy_past_original_length"
        np.testing.assert_array_equal(out.sequences.numpy(), case.expected[f"{expected}/sequences"])
        # Keys left with the short factors shift the scores after the switch by about 4e-5 on
        # this tiny model; recomputed, they agree to float32 rounding.
        np.testing.assert_allclose(core.stack(list(out.scores)).numpy(), case.expected[f"{expected}/scores"],
                                   rtol=0, atol=2e-6)


if __name__ == "__main__":
    unittest.main()
