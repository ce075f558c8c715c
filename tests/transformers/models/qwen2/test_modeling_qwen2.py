"""Qwen2 tests: HF's structure (Qwen2ModelTester + the common and causal-LM checks), biases and
per-layer attention kinds, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen2ForQuestionAnswering,
    Qwen2ForSequenceClassification,
    Qwen2ForTokenClassification,
    Qwen2Model,
)
from mindnlp.transformers.models.qwen2 import modeling_qwen2

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class Qwen2ModelTester(CausalLMModelTester):
    config_class = Qwen2Config
    base_model_class = Qwen2Model
    causal_lm_class = Qwen2ForCausalLM
    sequence_classification_class = Qwen2ForSequenceClassification
    token_classification_class = Qwen2ForTokenClassification
    question_answering_class = Qwen2ForQuestionAnswering

    def __init__(self, parent, **kwargs):
        # layer 0 full attention, layer 1 a window of 3
        kwargs.update(use_sliding_window=True, sliding_window=3, max_window_layers=1)
        super().__init__(parent, **kwargs)


class Qwen2ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Qwen2ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Qwen2Model,
        "question-answering": Qwen2ForQuestionAnswering,
        "text-classification": Qwen2ForSequenceClassification,
        "text-generation": Qwen2ForCausalLM,
        "token-classification": Qwen2ForTokenClassification,
        "zero-shot": Qwen2ForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_save_load_fast_init_to_base(self):
        """Except for question answering: that head names its base model `transformer`, which
        Qwen2Model (prefix `model`) does not strip, so HF's Qwen2Model does not load it either."""
        self.all_model_classes = tuple(c for c in self.all_model_classes if c is not Qwen2ForQuestionAnswering)
        super().test_save_load_fast_init_to_base()

    def test_only_qkv_projections_have_biases(self):
        layer = self._lm().model.layers[0]
        for linear in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
            self.assertIsNotNone(linear.bias)
        for linear in (layer.self_attn.o_proj, layer.mlp.gate_proj, layer.mlp.up_proj, layer.mlp.down_proj):
            self.assertIsNone(linear.bias)

    def test_layer_types_select_the_window_per_layer(self):
        model = self._lm()
        self.assertEqual(model.config.layer_types, ["full_attention", "sliding_attention"])
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [None, 3])
        with core.no_grad():
            out = model(ids_tensor([2, 7], 99), use_cache=True)
        self.assertEqual(out.past_key_values.layers[0].keys.shape[2], 7)
        self.assertEqual(out.past_key_values.layers[1].keys.shape[2], 2)

    def test_without_use_sliding_window_every_layer_is_full(self):
        model = self._lm()
        config = self.model_tester.get_config()
        config = Qwen2Config(**dict(config.to_dict(), use_sliding_window=False, layer_types=None))
        self.assertIsNone(config.sliding_window)
        full = Qwen2ForCausalLM(config).eval()
        full.load_state_dict(model.state_dict())
        ids = ids_tensor([1, 9], 99)
        with core.no_grad():
            self.assertGreater(float(np.abs(full(ids).logits.numpy() - model(ids).logits.numpy()).max()), 1e-6)


class TestQwen2Parity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["qwen2", "qwen2_tied"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_qwen2, "Qwen2")


if __name__ == "__main__":
    unittest.main()
