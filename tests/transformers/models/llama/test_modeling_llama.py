"""Llama tests: HF's structure (LlamaModelTester + the common and causal-LM checks), the RoPE
variants, and parity with HF transformers on fixtures (every RoPE type, biases, tied head)."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    LlamaForQuestionAnswering,
    LlamaForSequenceClassification,
    LlamaForTokenClassification,
    LlamaModel,
)
from mindnlp.transformers.modeling_rope_utils import rope_init
from mindnlp.transformers.models.llama import modeling_llama
from mindnlp.transformers.testing_utils import torch_device

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class LlamaModelTester(CausalLMModelTester):
    config_class = LlamaConfig
    base_model_class = LlamaModel
    causal_lm_class = LlamaForCausalLM
    sequence_classification_class = LlamaForSequenceClassification
    token_classification_class = LlamaForTokenClassification
    question_answering_class = LlamaForQuestionAnswering


class LlamaModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = LlamaModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": LlamaModel,
        "question-answering": LlamaForQuestionAnswering,
        "text-classification": LlamaForSequenceClassification,
        "text-generation": LlamaForCausalLM,
        "token-classification": LlamaForTokenClassification,
        "zero-shot": LlamaForSequenceClassification,
    }

    def test_save_load_fast_init_to_base(self):
        """Except for question answering: that head names its base model `transformer`, which
        LlamaModel (prefix `model`) does not strip, so HF's LlamaModel does not load it either."""
        self.all_model_classes = tuple(c for c in self.all_model_classes if c is not LlamaForQuestionAnswering)
        super().test_save_load_fast_init_to_base()

    def test_rope_variants_run_and_differ_from_default(self):
        """Each scaling type changes the logits of positions it affects, and runs with the cache."""
        ids = ids_tensor([2, 20], 99)
        variants = {
            "linear": {"rope_type": "linear", "factor": 2.0},
            "dynamic": {"rope_type": "dynamic", "factor": 2.0},
            "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                       "original_max_position_embeddings": 8},
            "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8},
        }
        core.manual_seed(0)
        default = self._lm(max_position_embeddings=16)
        with core.no_grad():
            reference = default(ids).logits.cpu().numpy()
        for name, params in variants.items():
            config = self.model_tester.get_config()
            config.max_position_embeddings = 16
            config.rope_parameters = dict(params, rope_theta=10000.0)
            model = LlamaForCausalLM(config).to(torch_device).eval()
            model.load_state_dict(default.state_dict())
            with core.no_grad():
                logits = model(ids).logits.cpu().numpy()
                model.generate(ids[:, :4], max_new_tokens=3, do_sample=False)
            self.assertGreater(float(np.abs(logits - reference).max()), 1e-6, name)

    def test_dynamic_rope_rescales_beyond_max_positions_and_resets(self):
        config = self.model_tester.get_config()
        config.max_position_embeddings = 8
        config.rope_parameters = {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0}
        rotary = LlamaModel(config).rotary_emb
        x = core.zeros(1, dtype=core.float32)
        original = rotary.inv_freq.cpu().numpy().copy()
        rotary(x, core.arange(6)[None])
        np.testing.assert_array_equal(rotary.inv_freq.cpu().numpy(), original)
        rotary(x, core.arange(12)[None])
        np.testing.assert_allclose(rotary.inv_freq.cpu().numpy(), rope_init(config, seq_len=12)[0])
        self.assertFalse(np.allclose(rotary.inv_freq.cpu().numpy(), original))
        self.assertEqual(rotary.max_seq_len_cached, 12)
        rotary(x, core.arange(4)[None])
        np.testing.assert_array_equal(rotary.inv_freq.cpu().numpy(), original)
        self.assertEqual(rotary.max_seq_len_cached, 8)

    def test_rotary_buffer_is_not_saved(self):
        model = self._lm()
        self.assertIn("model.rotary_emb.inv_freq", dict(model.named_buffers()))
        self.assertNotIn("model.rotary_emb.inv_freq", model.state_dict())

    def test_biases_follow_config(self):
        model = self._lm(attention_bias=True, mlp_bias=True)
        layer = model.model.layers[0]
        for linear in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj,
                       layer.self_attn.o_proj, layer.mlp.gate_proj, layer.mlp.up_proj, layer.mlp.down_proj):
            self.assertIsNotNone(linear.bias)
        layer = self._lm().model.layers[0]
        self.assertIsNone(layer.self_attn.q_proj.bias)
        self.assertIsNone(layer.mlp.up_proj.bias)


LLAMA_CASES = ["llama", "llama_tied_bias_head_dim", "llama_rope_linear", "llama_rope_dynamic", "llama_rope_llama3",
               "llama_rope_yarn", "llama_rope_longrope"]


class TestLlamaParity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=LLAMA_CASES, scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_llama, "Llama")


if __name__ == "__main__":
    unittest.main()
