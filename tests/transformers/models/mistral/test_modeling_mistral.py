"""Mistral tests: HF's structure (MistralModelTester + the common and causal-LM checks), the
sliding window, and parity with HF transformers on fixtures."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    MistralConfig,
    MistralForCausalLM,
    MistralForQuestionAnswering,
    MistralForSequenceClassification,
    MistralForTokenClassification,
    MistralModel,
)
from mindnlp.transformers.models.mistral import modeling_mistral

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin


class MistralModelTester(CausalLMModelTester):
    config_class = MistralConfig
    base_model_class = MistralModel
    causal_lm_class = MistralForCausalLM
    sequence_classification_class = MistralForSequenceClassification
    token_classification_class = MistralForTokenClassification
    question_answering_class = MistralForQuestionAnswering

    def __init__(self, parent, **kwargs):
        kwargs.setdefault("sliding_window", 3)
        super().__init__(parent, **kwargs)


class MistralModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = MistralModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": MistralModel,
        "question-answering": MistralForQuestionAnswering,
        "text-classification": MistralForSequenceClassification,
        "text-generation": MistralForCausalLM,
        "token-classification": MistralForTokenClassification,
        "zero-shot": MistralForSequenceClassification,
    }
    decode_steps = 6  # past the window of 3

    def test_sliding_window_limits_what_a_token_sees(self):
        """With a window of 3, the last position does not depend on tokens 3 or more positions back,
        while a full-attention model does."""
        ids = ids_tensor([1, 8], 99)
        changed = ids.clone()
        changed[0, 2] = (changed[0, 2] + 1) % 99
        windowed = self._lm()
        full = self._lm(sliding_window=None)
        with core.no_grad():
            np.testing.assert_allclose(windowed(ids).logits[0, -1].numpy(), windowed(changed).logits[0, -1].numpy(),
                                       atol=1e-6)
            self.assertGreater(float((full(ids).logits[0, -1] - full(changed).logits[0, -1]).abs().max()), 1e-6)

    def test_cache_keeps_only_the_window(self):
        model = self._lm()
        with core.no_grad():
            out = model(ids_tensor([2, 7], 99), use_cache=True)
            out = model(ids_tensor([2, 1], 99), past_key_values=out.past_key_values, use_cache=True)
        cache = out.past_key_values
        self.assertEqual(cache.get_seq_length(), 8)
        self.assertEqual(cache.layers[0].keys.shape[2], model.config.sliding_window - 1)


class TestMistralParity(DecoderParityMixin, QuestionAnsweringParityMixin):
    @pytest.fixture(params=["mistral"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_mistral, "Mistral")


if __name__ == "__main__":
    unittest.main()
