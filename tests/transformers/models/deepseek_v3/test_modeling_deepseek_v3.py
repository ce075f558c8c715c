"""DeepSeek-V3 tests: HF's structure (DeepseekV3ModelTester + the common and causal-LM checks),
latent attention, group-limited routing, dense first layers, and parity with HF transformers
on fixtures."""
import os
import tempfile
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    DeepseekV3Config,
    DeepseekV3ForCausalLM,
    DeepseekV3ForSequenceClassification,
    DeepseekV3ForTokenClassification,
    DeepseekV3Model,
)
from mindnlp.transformers.models.deepseek_v3 import modeling_deepseek_v3

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin
from ..moe_parity import RouterParityMixin

MLA = dict(kv_lora_rank=16, q_lora_rank=24, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=12)


class DeepseekV3ModelTester(CausalLMModelTester):
    config_class = DeepseekV3Config
    base_model_class = DeepseekV3Model
    causal_lm_class = DeepseekV3ForCausalLM
    sequence_classification_class = DeepseekV3ForSequenceClassification
    token_classification_class = DeepseekV3ForTokenClassification

    def __init__(self, parent, **kwargs):
        # a dense layer, then experts: 8 in 4 groups, 2 groups considered, 3 experts per token
        kwargs.update(num_hidden_layers=2, num_key_value_heads=4, first_k_dense_replace=1, moe_intermediate_size=12,
                      n_routed_experts=8, n_group=4, topk_group=2, num_experts_per_tok=3, **MLA)
        super().__init__(parent, **kwargs)


class DeepseekV3ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = DeepseekV3ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": DeepseekV3Model,
        "text-classification": DeepseekV3ForSequenceClassification,
        "text-generation": DeepseekV3ForCausalLM,
        "token-classification": DeepseekV3ForTokenClassification,
        "zero-shot": DeepseekV3ForSequenceClassification,
    }

    def _check_past_key_values_for_generate(self, batch_size, past_key_values, seq_length, config):
        """Keys are qk_nope_head_dim + qk_rope_head_dim wide per head, values v_head_dim."""
        heads = config.num_attention_heads
        for layer in past_key_values.layers:
            self.assertEqual(tuple(layer.keys.shape), (batch_size, heads, seq_length, config.qk_head_dim))
            self.assertEqual(tuple(layer.values.shape), (batch_size, heads, seq_length, config.v_head_dim))

    @unittest.skip("MLA sizes its heads by qk_nope/qk_rope/v_head_dim, not head_dim: see "
                   "test_query_without_bottleneck_and_latent_key_values and test_cache_holds_per_head_keys_and_values")
    def test_config_head_dim_and_grouped_query_attention(self):
        pass

    def test_dense_first_layers_then_experts_with_shared_ones(self):
        model = self._lm(num_hidden_layers=3, first_k_dense_replace=2, n_shared_experts=2)
        kinds = [type(layer.mlp).__name__ for layer in model.model.layers]
        self.assertEqual(kinds, ["DeepseekV3MLP", "DeepseekV3MLP", "DeepseekV3MoE"])
        block = model.model.layers[2].mlp
        self.assertEqual(block.shared_experts.intermediate_size, 24)
        self.assertEqual(tuple(block.experts.gate_up_proj.shape), (8, 24, 32))
        hidden = core.randn(2, 3, 32)
        with core.no_grad():
            routed = block.experts(hidden.reshape(-1, 32), *reversed(block.gate(hidden)[1:])).reshape(2, 3, 32)
            np.testing.assert_allclose(block(hidden).numpy(), (routed + block.shared_experts(hidden)).numpy(),
                                       atol=1e-6)

    def test_routing_stays_in_the_best_groups(self):
        router = self._lm(n_routed_experts=8, n_group=4, topk_group=1, num_experts_per_tok=2,
                          routed_scaling_factor=2.0).model.layers[1].mlp.gate
        router.e_score_correction_bias.copy_(core.tensor([0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0]))
        with core.no_grad():
            logits, weights, index = router(core.randn(6, 32))
        # expert 4's bias makes its group (4 and 5) the best for every token, so 5 is chosen too;
        # the weights ignore the bias
        self.assertEqual(sorted(set(index.numpy().reshape(-1).tolist())), [4, 5])
        scores = 1 / (1 + np.exp(-logits.numpy()))
        chosen = np.take_along_axis(scores, index.numpy(), -1)
        np.testing.assert_allclose(weights.numpy(), 2.0 * chosen / chosen.sum(-1, keepdims=True), rtol=1e-5)

    def test_query_without_bottleneck_and_latent_key_values(self):
        attention = self._lm(q_lora_rank=None).model.layers[0].self_attn
        self.assertEqual(tuple(attention.q_proj.weight.shape), (4 * 24, 32))
        self.assertFalse(hasattr(attention, "q_a_proj"))
        self.assertEqual(tuple(attention.kv_a_proj_with_mqa.weight.shape), (16 + 8, 32))
        self.assertEqual(tuple(attention.kv_b_proj.weight.shape), (4 * (16 + 12), 16))
        self.assertEqual(tuple(attention.o_proj.weight.shape), (32, 4 * 12))

    def test_cache_holds_per_head_keys_and_values(self):
        model = self._lm()
        with core.no_grad():
            cache = model(ids_tensor([2, 5], 99), use_cache=True).past_key_values
        for layer in cache.layers:
            self.assertEqual(tuple(layer.keys.shape), (2, 4, 5, 24))
            self.assertEqual(tuple(layer.values.shape), (2, 4, 5, 12))

    def test_yarn_mscale_all_dim_scales_the_softmax(self):
        rope = {"rope_type": "yarn", "factor": 40.0, "rope_theta": 10000.0, "original_max_position_embeddings": 16,
                "mscale": 1.0, "mscale_all_dim": 1.0}
        attention = self._lm(rope_parameters=rope).model.layers[0].self_attn
        self.assertAlmostEqual(attention.scaling, 24 ** -0.5 * (0.1 * np.log(40.0) + 1) ** 2, places=6)
        self.assertAlmostEqual(self._lm().model.layers[0].self_attn.scaling, 24 ** -0.5, places=6)

    def test_router_logits_without_aux_loss(self):
        model = self._lm()
        ids = ids_tensor([3, 5], 99)
        out = model(ids, labels=ids, output_router_logits=True)
        self.assertEqual(len(out.router_logits), 1)
        self.assertEqual(tuple(out.router_logits[0].shape), (15, 8))
        self.assertIsNone(out.aux_loss)
        np.testing.assert_allclose(float(out.loss), float(model(ids, labels=ids).loss), rtol=1e-6)

    def test_saves_the_published_per_expert_layout_and_loads_it_back(self):
        model = self._lm()
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp)
            keys = set(load_safetensors(os.path.join(tmp, "model.safetensors")))
            self.assertIn("model.layers.1.mlp.experts.7.up_proj.weight", keys)
            self.assertIn("model.layers.1.mlp.gate.e_score_correction_bias", keys)
            reloaded = DeepseekV3ForCausalLM.from_pretrained(tmp)
        for name, value in model.state_dict().items():
            np.testing.assert_array_equal(reloaded.state_dict()[name].numpy(), value.numpy(), err_msg=name)

    def test_auto_classes_pick_deepseek_v3(self):
        config = AutoConfig.for_model("deepseek_v3", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      num_key_value_heads=4, intermediate_size=37, vocab_size=99,
                                      n_routed_experts=4, n_group=2, topk_group=1, num_experts_per_tok=2, **MLA)
        self.assertIsInstance(config, DeepseekV3Config)
        self.assertEqual(config.num_experts, 4)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), DeepseekV3ForCausalLM)


class TestDeepseekV3Parity(DecoderParityMixin, RouterParityMixin):
    @pytest.fixture(params=["deepseek_v3", "deepseek_v3_dense_query"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_deepseek_v3, "DeepseekV3")


if __name__ == "__main__":
    unittest.main()
