"""GPT-NeoX tests: HF's structure (GPTNeoXModelTester + the common and causal-LM checks), its
fused head-by-head qkv, parallel and sequential residuals, partial rotary and layer names, and
parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    GPTNeoXForQuestionAnswering,
    GPTNeoXForSequenceClassification,
    GPTNeoXForTokenClassification,
    GPTNeoXModel,
)
from mindnlp.transformers.models.gpt_neox import modeling_gpt_neox

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class GPTNeoXModelTester(CausalLMModelTester):
    config_class = GPTNeoXConfig
    base_model_class = GPTNeoXModel
    causal_lm_class = GPTNeoXForCausalLM
    sequence_classification_class = GPTNeoXForSequenceClassification
    token_classification_class = GPTNeoXForTokenClassification
    question_answering_class = GPTNeoXForQuestionAnswering

    def get_config(self):
        config = super().get_config()
        config.rope_parameters["partial_rotary_factor"] = 0.5
        return config


class GPTNeoXModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = GPTNeoXModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": GPTNeoXModel,
        "question-answering": GPTNeoXForQuestionAnswering,
        "text-classification": GPTNeoXForSequenceClassification,
        "text-generation": GPTNeoXForCausalLM,
        "token-classification": GPTNeoXForTokenClassification,
        "zero-shot": GPTNeoXForSequenceClassification,
    }

    def test_parameter_names_are_hfs(self):
        names = set(self._lm().state_dict())
        for name in ("gpt_neox.embed_in.weight", "gpt_neox.layers.0.attention.query_key_value.bias",
                     "gpt_neox.layers.0.attention.dense.weight", "gpt_neox.layers.0.mlp.dense_h_to_4h.weight",
                     "gpt_neox.final_layer_norm.bias", "embed_out.weight"):
            self.assertIn(name, names)

    def test_fused_qkv_is_laid_out_head_by_head(self):
        attention = self._lm().gpt_neox.layers[0].attention
        hidden = core.randn(2, 5, 32)
        with core.no_grad():
            query, key, value = attention.project(hidden)
            fused = attention.query_key_value(hidden).numpy().reshape(2, 5, 4, 3, 8).transpose(3, 0, 2, 1, 4)
        for ours, theirs in zip((query, key, value), fused):
            np.testing.assert_allclose(ours.numpy(), theirs, atol=1e-6)

    def test_parallel_and_sequential_residuals(self):
        for parallel in (True, False):
            model = self._lm(use_parallel_residual=parallel)
            layer = model.gpt_neox.layers[0]
            hidden = core.randn(1, 4, 32)
            position_embeddings = model.gpt_neox.rotary_emb(hidden, core.arange(4).unsqueeze(0))
            with core.no_grad():
                attention, _ = layer.attention(layer.input_layernorm(hidden), position_embeddings)
                mlp_input = hidden if parallel else hidden + attention
                expected = hidden + attention + layer.mlp(layer.post_attention_layernorm(mlp_input))
                np.testing.assert_allclose(layer(hidden, position_embeddings)[0].numpy(), expected.numpy(), atol=1e-5)

    def test_config_reads_v4_rotary_keys(self):
        config = GPTNeoXConfig(rotary_pct=0.25, rotary_emb_base=1000)
        self.assertEqual(config.rope_parameters,
                         {"rope_theta": 1000, "partial_rotary_factor": 0.25, "rope_type": "default"})
        self.assertEqual(config.num_key_value_heads, config.num_attention_heads)
        self.assertEqual(GPTNeoXConfig(num_attention_heads=8, num_key_value_heads=2).num_key_value_heads, 8)

    def test_config_head_dim_and_grouped_query_attention(self):
        """GPT-NeoX has one fused projection and no grouped-query heads."""
        attention = self._lm().gpt_neox.layers[0].attention
        self.assertEqual(tuple(attention.query_key_value.weight.shape), (3 * 32, 32))
        self.assertEqual(attention.num_key_value_groups, 1)

    def test_auto_classes_pick_gpt_neox(self):
        config = AutoConfig.for_model("gpt_neox", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, GPTNeoXConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), GPTNeoXForCausalLM)


class TestGPTNeoXParity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["gpt_neox", "gpt_neox_sequential"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_gpt_neox, "GPTNeoX")


if __name__ == "__main__":
    unittest.main()
