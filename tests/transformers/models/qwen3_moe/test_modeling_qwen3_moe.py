"""Qwen3-MoE tests: HF's structure (Qwen3MoeModelTester + the common and causal-LM checks), Qwen3's
attention in Qwen2-MoE's layers, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    Qwen3MoeConfig,
    Qwen3MoeForCausalLM,
    Qwen3MoeForQuestionAnswering,
    Qwen3MoeForSequenceClassification,
    Qwen3MoeForTokenClassification,
    Qwen3MoeModel,
)
from mindnlp.transformers.models.qwen3_moe import modeling_qwen3_moe

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin
from ..moe_parity import MoeParityMixin


class Qwen3MoeModelTester(CausalLMModelTester):
    config_class = Qwen3MoeConfig
    base_model_class = Qwen3MoeModel
    causal_lm_class = Qwen3MoeForCausalLM
    sequence_classification_class = Qwen3MoeForSequenceClassification
    token_classification_class = Qwen3MoeForTokenClassification
    question_answering_class = Qwen3MoeForQuestionAnswering

    def __init__(self, parent, **kwargs):
        kwargs.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12, norm_topk_prob=True,
                      head_dim=16)
        super().__init__(parent, **kwargs)


class Qwen3MoeModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Qwen3MoeModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Qwen3MoeModel,
        "question-answering": Qwen3MoeForQuestionAnswering,
        "text-classification": Qwen3MoeForSequenceClassification,
        "text-generation": Qwen3MoeForCausalLM,
        "token-classification": Qwen3MoeForTokenClassification,
        "zero-shot": Qwen3MoeForSequenceClassification,
    }

    def test_save_load_fast_init_to_base(self):
        """Except for question answering, whose base model is named `transformer` (as in HF)."""
        self.all_model_classes = tuple(c for c in self.all_model_classes if c is not Qwen3MoeForQuestionAnswering)
        super().test_save_load_fast_init_to_base()

    def test_layers_have_qk_norm_and_routed_experts_only(self):
        layer = self._lm().model.layers[0]
        self.assertEqual(tuple(layer.self_attn.q_norm.weight.shape), (16,))
        self.assertIsNone(layer.self_attn.q_proj.bias)
        self.assertIsInstance(layer.mlp, modeling_qwen3_moe.Qwen3MoeSparseMoeBlock)
        self.assertFalse(hasattr(layer.mlp, "shared_expert"))

    def test_top_k_weights_renormalised(self):
        router = self._lm().model.layers[0].mlp.gate
        with core.no_grad():
            _, weights, _ = router(core.randn(5, 32))
        np.testing.assert_allclose(weights.numpy().sum(-1), np.ones(5), rtol=1e-6)

    def test_num_experts_is_stored_as_num_local_experts(self):
        config = Qwen3MoeConfig(num_experts=6)
        self.assertEqual((config.num_experts, config.num_local_experts), (6, 6))
        self.assertEqual(config.to_dict()["num_local_experts"], 6)
        self.assertNotIn("num_experts", config.to_dict())

    def test_sliding_window_on_every_layer_when_enabled(self):
        self.assertIsNone(Qwen3MoeConfig().sliding_window)
        model = self._lm(sliding_window=3)
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [3, 3])


class TestQwen3MoeParity(DecoderParityMixin, QuestionAnsweringParityMixin, MoeParityMixin):
    @pytest.fixture(params=["qwen3_moe"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_qwen3_moe, "Qwen3Moe")


if __name__ == "__main__":
    unittest.main()
