"""gpt-oss tests: HF's structure (GptOssModelTester + the common and causal-LM checks), sinks,
alternating windows, the clamped SwiGLU experts and biased router, and parity with HF
transformers on fixtures (eager attention: the fused kernel has no sinks)."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    GptOssConfig,
    GptOssForCausalLM,
    GptOssForSequenceClassification,
    GptOssForTokenClassification,
    GptOssModel,
)
from mindnlp.transformers.models.gpt_oss import modeling_gpt_oss

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin
from ..moe_parity import MoeParityMixin


class GptOssModelTester(CausalLMModelTester):
    config_class = GptOssConfig
    base_model_class = GptOssModel
    causal_lm_class = GptOssForCausalLM
    sequence_classification_class = GptOssForSequenceClassification
    token_classification_class = GptOssForTokenClassification

    def __init__(self, parent, **kwargs):
        kwargs.update(num_local_experts=4, num_experts_per_tok=2, head_dim=8, sliding_window=3)
        super().__init__(parent, **kwargs)


class GptOssModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = GptOssModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": GptOssModel,
        "text-classification": GptOssForSequenceClassification,
        "text-generation": GptOssForCausalLM,
        "token-classification": GptOssForTokenClassification,
        "zero-shot": GptOssForSequenceClassification,
    }
    decode_steps = 5  # past the window of 3

    def test_layers_alternate_sliding_and_full_attention_with_sinks(self):
        self.model_tester.num_hidden_layers = 3
        model = self._lm()
        self.assertEqual(model.config.layer_types, ["sliding_attention", "full_attention", "sliding_attention"])
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [3, None, 3])
        self.assertEqual(tuple(model.model.layers[0].self_attn.sinks.shape), (4,))
        self.assertIsNotNone(model.model.layers[0].self_attn.q_proj.bias)

    def test_eager_attention_by_default(self):
        self.assertEqual(self._lm().config._attn_implementation, "eager")
        with self.assertRaises(ValueError):
            GptOssForCausalLM(self.model_tester.get_config()).set_attn_implementation("sdpa")

    def test_router_softmaxes_the_top_logits_only(self):
        router = self._lm().model.layers[0].mlp.router
        with core.no_grad():
            logits, weights, index = router(core.randn(5, 32))
        top = np.sort(logits.numpy(), -1)[:, ::-1][:, :2]
        np.testing.assert_allclose(weights.numpy(), np.exp(top) / np.exp(top).sum(-1, keepdims=True), rtol=1e-5)
        self.assertEqual(tuple(router.bias.shape), (4,))

    def test_experts_clamp_an_interleaved_swiglu(self):
        experts = self._lm(swiglu_limit=0.5).model.layers[0].mlp.experts
        self.assertEqual(tuple(experts.gate_up_proj.shape), (4, 32, 2 * 37))
        self.assertEqual(tuple(experts.down_proj_bias.shape), (4, 32))
        gate_up = core.tensor([[2.0, -3.0, -1.0, 0.25]])
        gate, up = np.array([0.5, -1.0]), np.array([-0.5, 0.25])
        expected = (up + 1) * gate / (1 + np.exp(-1.702 * gate))
        np.testing.assert_allclose(experts.activate(gate_up).numpy()[0], expected, rtol=1e-6)

    def test_experts_implementations_agree(self):
        model = self._lm()
        experts = model.model.layers[0].mlp.experts
        for parameter in (experts.gate_up_proj_bias, experts.down_proj_bias):
            parameter.data.normal_(0.0, 0.1)
        ids = core.tensor([[5, 9, 14, 3, 7]])
        with core.no_grad():
            grouped = model(ids).logits.numpy()
            model.set_experts_implementation("batched_mm")
            np.testing.assert_allclose(model(ids).logits.numpy(), grouped, atol=1e-5)

    def test_auto_classes_pick_gpt_oss(self):
        config = AutoConfig.for_model("gpt_oss", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, intermediate_size=16, vocab_size=99,
                                      num_local_experts=4, num_experts_per_tok=2, head_dim=8)
        self.assertIsInstance(config, GptOssConfig)
        self.assertEqual(config.rope_parameters["rope_type"], "yarn")
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), GptOssForCausalLM)


class TestGptOssParity(DecoderParityMixin, MoeParityMixin):
    @pytest.fixture(params=["gpt_oss"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_gpt_oss, "GptOss")

    @pytest.fixture(params=["eager"])
    def attn(self, request):
        return request.param


if __name__ == "__main__":
    unittest.main()
