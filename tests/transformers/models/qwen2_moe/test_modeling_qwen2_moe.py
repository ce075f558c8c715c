"""Qwen2-MoE tests: HF's structure (Qwen2MoeModelTester + the common and causal-LM checks), the
shared expert and which layers have experts, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Qwen2MoeConfig,
    Qwen2MoeForCausalLM,
    Qwen2MoeForQuestionAnswering,
    Qwen2MoeForSequenceClassification,
    Qwen2MoeForTokenClassification,
    Qwen2MoeModel,
)
from mindnlp.transformers.models.qwen2_moe import modeling_qwen2_moe

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin
from ..moe_parity import MoeParityMixin


class Qwen2MoeModelTester(CausalLMModelTester):
    config_class = Qwen2MoeConfig
    base_model_class = Qwen2MoeModel
    causal_lm_class = Qwen2MoeForCausalLM
    sequence_classification_class = Qwen2MoeForSequenceClassification
    token_classification_class = Qwen2MoeForTokenClassification
    question_answering_class = Qwen2MoeForQuestionAnswering

    def __init__(self, parent, **kwargs):
        # three layers: experts on 0 and 2, a dense MLP on 1; layer 0 attends over a window of 3
        kwargs.update(num_hidden_layers=3, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=12,
                      shared_expert_intermediate_size=20, mlp_only_layers=[1], use_sliding_window=True,
                      sliding_window=3, max_window_layers=1)
        super().__init__(parent, **kwargs)


class Qwen2MoeModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Qwen2MoeModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Qwen2MoeModel,
        "question-answering": Qwen2MoeForQuestionAnswering,
        "text-classification": Qwen2MoeForSequenceClassification,
        "text-generation": Qwen2MoeForCausalLM,
        "token-classification": Qwen2MoeForTokenClassification,
        "zero-shot": Qwen2MoeForSequenceClassification,
    }
    decode_steps = 5  # past the window of 3

    def test_mlp_only_layers_and_sparse_step_choose_the_layers_with_experts(self):
        kinds = [type(layer.mlp).__name__ for layer in self._lm().model.layers]
        self.assertEqual(kinds, ["Qwen2MoeSparseMoeBlock", "Qwen2MoeMLP", "Qwen2MoeSparseMoeBlock"])
        kinds = [type(layer.mlp).__name__ for layer in self._lm(mlp_only_layers=[], decoder_sparse_step=2).model.layers]
        self.assertEqual(kinds, ["Qwen2MoeMLP", "Qwen2MoeSparseMoeBlock", "Qwen2MoeMLP"])
        self.assertEqual(self._lm().model.layers[1].mlp.intermediate_size, 37)

    def test_shared_expert_is_gated_by_a_sigmoid(self):
        block = self._lm().model.layers[0].mlp
        self.assertEqual(block.shared_expert.intermediate_size, 20)
        hidden = core.randn(2, 3, 32)
        with core.no_grad():
            routed = block.experts(hidden.reshape(-1, 32), *reversed(block.gate(hidden)[1:])).reshape(2, 3, 32)
            gate = 1 / (1 + np.exp(-block.shared_expert_gate(hidden).numpy()))
            expected = routed.numpy() + gate * block.shared_expert(hidden).numpy()
            np.testing.assert_allclose(block(hidden).numpy(), expected, atol=1e-6)

    def test_router_weights_are_not_renormalised_by_default(self):
        router = self._lm().model.layers[0].mlp.gate
        with core.no_grad():
            logits, weights, index = router(core.randn(5, 32))
        probabilities = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(-1, keepdims=True)
        np.testing.assert_allclose(weights.numpy(), np.take_along_axis(probabilities, index.numpy(), -1), rtol=1e-5)
        self.assertEqual(index.numpy().tolist(), np.argsort(-probabilities, -1)[:, :2].tolist())

    def test_sliding_window_only_where_layer_types_say(self):
        model = self._lm()
        self.assertEqual(model.config.layer_types, ["sliding_attention", "full_attention", "full_attention"])
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [3, None, None])

    def test_auto_classes_pick_qwen2_moe(self):
        config = AutoConfig.for_model("qwen2_moe", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      num_key_value_heads=2, intermediate_size=37, vocab_size=99, num_experts=4,
                                      num_experts_per_tok=2, moe_intermediate_size=8,
                                      shared_expert_intermediate_size=8)
        self.assertIsInstance(config, Qwen2MoeConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Qwen2MoeForCausalLM)


class TestQwen2MoeParity(DecoderParityMixin, QuestionAnsweringParityMixin, MoeParityMixin):
    @pytest.fixture(params=["qwen2_moe"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_qwen2_moe, "Qwen2Moe")


if __name__ == "__main__":
    unittest.main()
