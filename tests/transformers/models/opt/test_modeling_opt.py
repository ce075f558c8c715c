"""OPT tests: HF's structure (OPTModelTester + the common and causal-LM checks), its learned
positions read from the attention mask, pre- and post-norm layers, the projections around
narrow token embeddings and HF's parameter names, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    OPTConfig,
    OPTForCausalLM,
    OPTForQuestionAnswering,
    OPTForSequenceClassification,
    OPTModel,
)
from mindnlp.transformers.models.opt import modeling_opt

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class OPTModelTester(CausalLMModelTester):
    config_class = OPTConfig
    base_model_class = OPTModel
    causal_lm_class = OPTForCausalLM
    sequence_classification_class = OPTForSequenceClassification
    question_answering_class = OPTForQuestionAnswering

    def get_config(self):
        return OPTConfig(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, ffn_dim=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings, num_labels=self.num_labels,
            pad_token_id=self.pad_token_id, bos_token_id=self.bos_token_id, eos_token_id=self.eos_token_id,
            **self.config_overrides)


class OPTModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = OPTModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": OPTModel,
        "question-answering": OPTForQuestionAnswering,
        "text-classification": OPTForSequenceClassification,
        "text-generation": OPTForCausalLM,
        "zero-shot": OPTForSequenceClassification,
    }

    def test_parameter_names_are_hfs(self):
        names = set(self._lm(word_embed_proj_dim=16).state_dict())
        for name in ("model.decoder.embed_tokens.weight", "model.decoder.embed_positions.weight",
                     "model.decoder.project_in.weight", "model.decoder.project_out.weight",
                     "model.decoder.layers.0.self_attn.out_proj.bias", "model.decoder.layers.0.self_attn_layer_norm.weight",
                     "model.decoder.layers.0.fc1.weight", "model.decoder.layers.0.final_layer_norm.bias",
                     "model.decoder.final_layer_norm.weight", "lm_head.weight"):
            self.assertIn(name, names)

    def test_post_norm_has_no_final_norm(self):
        names = set(self._lm(do_layer_norm_before=False).state_dict())
        self.assertNotIn("model.decoder.final_layer_norm.weight", names)
        self.assertIn("model.decoder.layers.0.final_layer_norm.weight", names)

    def test_config_head_dim_and_grouped_query_attention(self):
        """OPT has neither: every head has its own keys, head_dim is hidden_size / heads."""
        attention = self._lm().model.decoder.layers[0].self_attn
        self.assertEqual((attention.num_heads, attention.head_dim), (4, 8))
        with self.assertRaisesRegex(ValueError, "divisible by num_heads"):
            OPTModel(OPTConfig(hidden_size=30, num_attention_heads=4, num_hidden_layers=1))

    def test_narrow_embeddings_are_projected_in_and_out(self):
        model = self._lm(word_embed_proj_dim=16)
        decoder = model.model.decoder
        self.assertEqual(tuple(decoder.embed_tokens.weight.shape), (99, 16))
        self.assertEqual(tuple(model.lm_head.weight.shape), (99, 16))
        ids = core.tensor([[5, 6, 7]])
        with core.no_grad():
            hidden = decoder(ids).last_hidden_state
            self.assertEqual(tuple(hidden.shape), (1, 3, 16))
            start = decoder.project_in(decoder.embed_tokens(ids)) + decoder.embed_positions(core.arange(3)[None])
            np.testing.assert_allclose(decoder.input_hidden_states(decoder.embed_tokens(ids), core.arange(3)[None])
                                       .numpy(), start.numpy(), atol=1e-6)

    def test_positions_come_from_the_attention_mask(self):
        """Without position ids, a left-padded row's first token reads position 0 (row 2 of the table)."""
        model = self._lm()
        ids, mask = self._left_padded_batch([5, 3])
        with core.no_grad():
            implicit = model(ids, attention_mask=mask).logits.numpy()
            alone = model(ids[1:, 2:]).logits.numpy()
        np.testing.assert_allclose(implicit[1, 2:], alone[0], atol=1e-5)

    def test_auto_classes_pick_opt(self):
        config = AutoConfig.for_model("opt", hidden_size=32, num_hidden_layers=1, num_attention_heads=4, ffn_dim=37,
                                      vocab_size=99)
        self.assertIsInstance(config, OPTConfig)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), OPTForCausalLM)


class TestOPTParity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["opt", "opt_post_norm"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_opt, "OPT")


if __name__ == "__main__":
    unittest.main()
