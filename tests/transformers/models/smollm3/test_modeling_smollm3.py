"""SmolLM3 tests: HF's structure (SmolLM3ModelTester + the common and causal-LM checks), its NoPE
layers, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    SmolLM3Config,
    SmolLM3ForCausalLM,
    SmolLM3ForQuestionAnswering,
    SmolLM3ForSequenceClassification,
    SmolLM3ForTokenClassification,
    SmolLM3Model,
)
from mindnlp.transformers.models.smollm3 import modeling_smollm3

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class SmolLM3ModelTester(CausalLMModelTester):
    config_class = SmolLM3Config
    base_model_class = SmolLM3Model
    causal_lm_class = SmolLM3ForCausalLM
    sequence_classification_class = SmolLM3ForSequenceClassification
    token_classification_class = SmolLM3ForTokenClassification
    question_answering_class = SmolLM3ForQuestionAnswering

    def __init__(self, parent, **kwargs):
        # layer 1 without RoPE, over a window of 3
        kwargs.update(no_rope_layer_interval=2, use_sliding_window=True, sliding_window=3)
        super().__init__(parent, **kwargs)


class SmolLM3ModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = SmolLM3ModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": SmolLM3Model,
        "question-answering": SmolLM3ForQuestionAnswering,
        "text-classification": SmolLM3ForSequenceClassification,
        "text-generation": SmolLM3ForCausalLM,
        "token-classification": SmolLM3ForTokenClassification,
        "zero-shot": SmolLM3ForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_save_load_fast_init_to_base(self):
        """Except for question answering, whose base model is named `transformer` (as in HF)."""
        self.all_model_classes = tuple(c for c in self.all_model_classes if c is not SmolLM3ForQuestionAnswering)
        super().test_save_load_fast_init_to_base()

    def test_nope_layers_ignore_positions(self):
        model = self._lm()
        self.assertEqual([layer.self_attn.use_rope for layer in model.model.layers], [True, False])
        self.assertEqual([layer.self_attn.sliding_window for layer in model.model.layers], [None, 3])
        attention = model.model.layers[1].self_attn
        hidden = core.randn(1, 4, 32)
        rotary = model.model.rotary_emb
        with core.no_grad():
            at_start, _ = attention(hidden, rotary(hidden, core.arange(4).unsqueeze(0)))
            shifted, _ = attention(hidden, rotary(hidden, core.arange(10, 14).unsqueeze(0)))
        np.testing.assert_allclose(at_start.numpy(), shifted.numpy(), atol=1e-6)

    def test_config_defaults_drop_rope_every_fourth_layer(self):
        config = SmolLM3Config()
        self.assertEqual(config.no_rope_layers[:8], [1, 1, 1, 0, 1, 1, 1, 0])
        self.assertEqual(set(config.layer_types), {"full_attention"})

    def test_auto_classes_pick_smollm3(self):
        config = AutoConfig.for_model("smollm3", hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=37, vocab_size=99, pad_token_id=0, bos_token_id=1,
                                      eos_token_id=2)
        self.assertIsInstance(config, SmolLM3Config)
        self.assertIsInstance(AutoModelForCausalLM.from_config(config), SmolLM3ForCausalLM)


class TestSmolLM3Parity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["smollm3"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_smollm3, "SmolLM3")


if __name__ == "__main__":
    unittest.main()
