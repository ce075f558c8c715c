"""StarCoder2 tests: HF's structure (Starcoder2ModelTester + the common and causal-LM checks), its
blocks, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Starcoder2Config,
    Starcoder2ForCausalLM,
    Starcoder2ForSequenceClassification,
    Starcoder2ForTokenClassification,
    Starcoder2Model,
)
from mindnlp.transformers.models.starcoder2 import modeling_starcoder2

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin


class Starcoder2ModelTester(CausalLMModelTester):
    config_class = Starcoder2Config
    base_model_class = Starcoder2Model
    causal_lm_class = Starcoder2ForCausalLM
    sequence_classification_class = Starcoder2ForSequenceClassification
    token_classification_class = Starcoder2ForTokenClassification

    def __init__(self, parent, **kwargs):
        kwargs.update(sliding_window=3)
        super().__init__(parent, **kwargs)


class Starcoder2ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Starcoder2ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Starcoder2Model,
        "text-classification": Starcoder2ForSequenceClassification,
        "text-generation": Starcoder2ForCausalLM,
        "token-classification": Starcoder2ForTokenClassification,
        "zero-shot": Starcoder2ForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_blocks_are_layer_norms_and_a_biased_plain_mlp(self):
        model = self._lm().model
        layer = model.layers[0]
        for norm in (layer.input_layernorm, layer.post_attention_layernorm, model.norm):
            self.assertIsInstance(norm, nn.LayerNorm)
            self.assertEqual(norm.eps, 1e-5)
        self.assertEqual(sorted(name for name, _ in layer.mlp.named_parameters()),
                         ["c_fc.bias", "c_fc.weight", "c_proj.bias", "c_proj.weight"])
        for linear in (layer.self_attn.q_proj, layer.self_attn.o_proj):
            self.assertIsNotNone(linear.bias)
        self.assertIsNone(self._lm(use_bias=False).model.layers[0].self_attn.o_proj.bias)

    def test_dropout_applies_in_training_only(self):
        model = self._lm(embedding_dropout=0.5, residual_dropout=0.5)
        ids = ids_tensor([2, 5], 99)
        with core.no_grad():
            self.assertTrue(bool((model(ids).logits == model(ids).logits).all()))
            model.train()
            self.assertFalse(bool((model(ids).logits == model(ids).logits).all()))

    def test_auto_classes_pick_starcoder2(self):
        config = AutoConfig.for_model("starcoder2", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      num_key_value_heads=2, intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, Starcoder2Config)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Starcoder2ForCausalLM)


class TestStarcoder2Parity(DecoderParityMixin):
    @pytest.fixture(params=["starcoder2"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_starcoder2, "Starcoder2")


if __name__ == "__main__":
    unittest.main()
