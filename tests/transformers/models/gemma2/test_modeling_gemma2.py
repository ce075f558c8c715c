"""Gemma 2 tests: HF's structure (Gemma2ModelTester + the common and causal-LM checks), its
sandwich norms, soft-capping and alternating windows, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Gemma2Config,
    Gemma2ForCausalLM,
    Gemma2ForSequenceClassification,
    Gemma2ForTokenClassification,
    Gemma2Model,
)
from mindnlp.transformers.models.gemma2 import modeling_gemma2

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin


class Gemma2ModelTester(CausalLMModelTester):
    config_class = Gemma2Config
    base_model_class = Gemma2Model
    causal_lm_class = Gemma2ForCausalLM
    sequence_classification_class = Gemma2ForSequenceClassification
    token_classification_class = Gemma2ForTokenClassification

    def __init__(self, parent, **kwargs):
        # layer 0 a window of 3, layer 1 full attention
        kwargs.update(head_dim=8, sliding_window=3, query_pre_attn_scalar=8)
        super().__init__(parent, **kwargs)


class Gemma2ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Gemma2ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Gemma2Model,
        "text-classification": Gemma2ForSequenceClassification,
        "text-generation": Gemma2ForCausalLM,
        "token-classification": Gemma2ForTokenClassification,
        "zero-shot": Gemma2ForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_layers_alternate_sliding_and_full_attention(self):
        model = self._lm()
        self.assertEqual(model.config.layer_types, ["sliding_attention", "full_attention"])
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [3, None])
        with core.no_grad():
            out = model(ids_tensor([2, 7], 99), use_cache=True)
        self.assertEqual(out.past_key_values.layers[0].keys.shape[2], 2)

    def test_blocks_normalise_inputs_and_outputs(self):
        layer = self._lm().model.layers[0]
        hidden = core.randn(1, 4, 32)
        position_embeddings = self._lm().model.rotary_emb(hidden, core.arange(4).unsqueeze(0))
        with core.no_grad():
            attention, _ = layer.self_attn(layer.input_layernorm(hidden), position_embeddings)
            middle = hidden + layer.post_attention_layernorm(attention)
            expected = middle + layer.post_feedforward_layernorm(layer.mlp(layer.pre_feedforward_layernorm(middle)))
            np.testing.assert_allclose(layer(hidden, position_embeddings)[0].numpy(), expected.numpy(), atol=1e-6)

    def test_final_logits_are_soft_capped(self):
        model = self._lm(final_logit_softcapping=0.5)
        with core.no_grad():
            logits = model(ids_tensor([2, 5], 99)).logits
            raw = model.lm_head(model.model(ids_tensor([2, 5], 99)).last_hidden_state)
        self.assertLess(float(logits.abs().max()), 0.5)
        self.assertEqual(tuple(logits.shape), tuple(raw.shape))

    def test_attention_scale_comes_from_query_pre_attn_scalar(self):
        attention = self._lm().model.layers[0].self_attn
        self.assertAlmostEqual(attention.scaling, 8 ** -0.5)
        self.assertEqual(attention.softcap, 50.0)

    def test_config_defaults_are_gemma2_2b(self):
        config = Gemma2Config()
        self.assertEqual((config.hidden_size, config.num_hidden_layers, config.hidden_activation),
                         (2304, 26, "gelu_pytorch_tanh"))
        self.assertEqual((config.final_logit_softcapping, config.attn_logit_softcapping), (30.0, 50.0))
        self.assertEqual(config.layer_types[:2], ["sliding_attention", "full_attention"])

    def test_auto_classes_pick_gemma2(self):
        config = AutoConfig.for_model("gemma2", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, head_dim=8, intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, Gemma2Config)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Gemma2ForCausalLM)


class TestGemma2Parity(DecoderParityMixin):
    @pytest.fixture(params=["gemma2"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_gemma2, "Gemma2")


if __name__ == "__main__":
    unittest.main()
