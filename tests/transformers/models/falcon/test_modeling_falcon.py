"""Falcon tests: HF's structure (FalconModelTester + the common and causal-LM checks) on the new
decoder architecture, the old one's multi-query and sequential layouts, its fused projection,
ALiBi and layer names, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    FalconConfig,
    FalconForCausalLM,
    FalconForQuestionAnswering,
    FalconForSequenceClassification,
    FalconForTokenClassification,
    FalconModel,
)
from mindnlp.transformers.models.falcon import modeling_falcon

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class FalconModelTester(CausalLMModelTester):
    config_class = FalconConfig
    base_model_class = FalconModel
    causal_lm_class = FalconForCausalLM
    sequence_classification_class = FalconForSequenceClassification
    token_classification_class = FalconForTokenClassification
    question_answering_class = FalconForQuestionAnswering

    def get_config(self):
        options = {"new_decoder_architecture": True, "num_kv_heads": self.num_key_value_heads} | self.config_overrides
        return FalconConfig(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, ffn_hidden_size=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings, num_labels=self.num_labels,
            pad_token_id=self.pad_token_id, bos_token_id=self.bos_token_id, eos_token_id=self.eos_token_id, **options)


class FalconModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = FalconModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": FalconModel,
        "question-answering": FalconForQuestionAnswering,
        "text-classification": FalconForSequenceClassification,
        "text-generation": FalconForCausalLM,
        "token-classification": FalconForTokenClassification,
        "zero-shot": FalconForSequenceClassification,
    }

    def _old_lm(self, **options):
        return self._lm(new_decoder_architecture=False, **options)

    def test_parameter_names_are_hfs(self):
        new = set(self._lm().state_dict())
        for name in ("transformer.word_embeddings.weight", "transformer.h.0.self_attention.query_key_value.weight",
                     "transformer.h.0.self_attention.dense.weight", "transformer.h.0.ln_attn.weight",
                     "transformer.h.0.ln_mlp.bias", "transformer.h.0.mlp.dense_h_to_4h.weight",
                     "transformer.h.0.mlp.dense_4h_to_h.weight", "transformer.ln_f.weight", "lm_head.weight"):
            self.assertIn(name, new)
        self.assertIn("transformer.h.0.input_layernorm.weight", set(self._old_lm().state_dict()))
        sequential = set(self._old_lm(parallel_attn=False).state_dict())
        self.assertIn("transformer.h.0.post_attention_layernorm.weight", sequential)

    def test_config_head_dim_and_grouped_query_attention(self):
        """Key/value heads: num_kv_heads in the new architecture, one with multi_query, else one per head."""
        for options, kv_heads in (({}, 2), ({"new_decoder_architecture": False}, 1),
                                  ({"new_decoder_architecture": False, "multi_query": False}, 4)):
            attention = self._lm(**options).transformer.h[0].self_attention
            self.assertEqual(tuple(attention.query_key_value.weight.shape), ((4 + 2 * kv_heads) * 8, 32))
            self.assertEqual(attention.num_key_value_groups, 4 // kv_heads)
        with self.assertRaisesRegex(ValueError, "parallel_attn"):
            FalconConfig(new_decoder_architecture=True, parallel_attn=False)

    def test_fused_qkv_is_laid_out_by_key_value_head(self):
        """For each key/value head: the queries of its group, then its key, then its value."""
        attention = self._lm().transformer.h[0].self_attention
        hidden = core.randn(2, 5, 32)
        with core.no_grad():
            query, key, value = attention.project(hidden)
            fused = attention.query_key_value(hidden).numpy().reshape(2, 5, 2, 4, 8)
        np.testing.assert_allclose(query.numpy(), fused[:, :, :, :2].reshape(2, 5, 4, 8).transpose(0, 2, 1, 3),
                                   atol=1e-6)
        np.testing.assert_allclose(key.numpy(), fused[:, :, :, 2].transpose(0, 2, 1, 3), atol=1e-6)
        np.testing.assert_allclose(value.numpy(), fused[:, :, :, 3].transpose(0, 2, 1, 3), atol=1e-6)

    def test_alibi_is_shift_invariant_under_padding(self):
        """ALiBi reads positions among the unpadded tokens, so a left-padded row equals the row alone."""
        model = self._old_lm(alibi=True)
        ids, mask = self._left_padded_batch([6, 3])
        with core.no_grad():
            batch = model(ids, attention_mask=mask).logits.numpy()
            alone = model(ids[1:, 3:]).logits.numpy()
        np.testing.assert_allclose(batch[1, 3:], alone[0], atol=1e-5)

    def test_sequential_block(self):
        model = self._old_lm(parallel_attn=False)
        layer = model.transformer.h[0]
        hidden = core.randn(1, 4, 32)
        position_embeddings = model.transformer.rotary_emb(hidden, core.arange(4).unsqueeze(0))
        with core.no_grad():
            attention, _ = layer.self_attention(layer.input_layernorm(hidden), position_embeddings)
            middle = hidden + attention
            expected = middle + layer.mlp(layer.post_attention_layernorm(middle))
            np.testing.assert_allclose(layer(hidden, position_embeddings)[0].numpy(), expected.numpy(), atol=1e-5)

    def test_config_reads_v4_names(self):
        config = FalconConfig(n_embed=64, num_attention_heads=8)
        self.assertEqual((config.hidden_size, config.head_dim, config.ffn_hidden_size, config.num_kv_heads),
                         (64, 8, 256, 8))

    def test_auto_classes_pick_falcon(self):
        config = AutoConfig.for_model("falcon", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      vocab_size=99)
        self.assertIsInstance(config, FalconConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), FalconForCausalLM)


class TestFalconParity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["falcon", "falcon_multi_query", "falcon_alibi"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_falcon, "Falcon")


if __name__ == "__main__":
    unittest.main()
