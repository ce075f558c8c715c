"""Qwen3 tests: HF's structure (Qwen3ModelTester + the common and causal-LM checks), the q/k
norm, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    Qwen3ForQuestionAnswering,
    Qwen3ForSequenceClassification,
    Qwen3ForTokenClassification,
    Qwen3Model,
)
from mindnlp.transformers.models.qwen3 import modeling_qwen3

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class Qwen3ModelTester(CausalLMModelTester):
    config_class = Qwen3Config
    base_model_class = Qwen3Model
    causal_lm_class = Qwen3ForCausalLM
    sequence_classification_class = Qwen3ForSequenceClassification
    token_classification_class = Qwen3ForTokenClassification
    question_answering_class = Qwen3ForQuestionAnswering

    def __init__(self, parent, **kwargs):
        # head_dim 16 with 4 heads of a 32-wide model; layer 0 full attention, layer 1 a window of 3
        kwargs.update(head_dim=16, use_sliding_window=True, sliding_window=3, max_window_layers=1)
        super().__init__(parent, **kwargs)


class Qwen3ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = Qwen3ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": Qwen3Model,
        "question-answering": Qwen3ForQuestionAnswering,
        "text-classification": Qwen3ForSequenceClassification,
        "text-generation": Qwen3ForCausalLM,
        "token-classification": Qwen3ForTokenClassification,
        "zero-shot": Qwen3ForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_save_load_fast_init_to_base(self):
        """Except for question answering, whose base model is named `transformer` (as in HF)."""
        self.all_model_classes = tuple(c for c in self.all_model_classes if c is not Qwen3ForQuestionAnswering)
        super().test_save_load_fast_init_to_base()

    def test_queries_and_keys_are_normalised_per_head(self):
        attention = self._lm().model.layers[0].self_attn
        self.assertEqual(tuple(attention.q_norm.weight.shape), (16,))
        self.assertEqual(tuple(attention.k_norm.weight.shape), (16,))
        self.assertIsNone(attention.q_proj.bias)
        hidden = core.randn(2, 5, 32)
        query, key, _ = attention.project(hidden)
        with core.no_grad():
            raw = attention.q_proj(hidden).view(2, 5, 4, 16).transpose(1, 2).numpy()
        expected = raw / np.sqrt((raw.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6)
        np.testing.assert_allclose(query.detach().numpy(), expected, rtol=1e-4, atol=1e-5)
        self.assertEqual(tuple(key.shape), (2, 2, 5, 16))

    def test_config_defaults_are_qwen3_8b(self):
        config = Qwen3Config()
        self.assertEqual((config.model_type, config.head_dim, config.attention_bias), ("qwen3", 128, False))
        self.assertIsNone(config.sliding_window)
        self.assertEqual(set(config.layer_types), {"full_attention"})

    def test_auto_classes_pick_qwen3(self):
        config = AutoConfig.for_model("qwen3", hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                      num_key_value_heads=2, head_dim=8, intermediate_size=37, vocab_size=99)
        self.assertIsInstance(config, Qwen3Config)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), Qwen3ForCausalLM)

    def test_layer_types_select_the_window_per_layer(self):
        model = self._lm()
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [None, 3])
        with core.no_grad():
            out = model(ids_tensor([2, 7], 99), use_cache=True)
        self.assertEqual(out.past_key_values.layers[1].keys.shape[2], 2)


class TestQwen3Parity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["qwen3"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_qwen3, "Qwen3")


if __name__ == "__main__":
    unittest.main()
