"""Gemma tests: HF's structure (GemmaModelTester + the common and causal-LM checks), its
normalisation, scaled embeddings and GeGLU, and parity with HF transformers on fixtures."""
import math
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    GemmaConfig,
    GemmaForCausalLM,
    GemmaForSequenceClassification,
    GemmaForTokenClassification,
    GemmaModel,
)
from mindnlp.transformers.models.gemma import modeling_gemma

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin


class GemmaModelTester(CausalLMModelTester):
    config_class = GemmaConfig
    base_model_class = GemmaModel
    causal_lm_class = GemmaForCausalLM
    sequence_classification_class = GemmaForSequenceClassification
    token_classification_class = GemmaForTokenClassification

    def __init__(self, parent, **kwargs):
        kwargs.setdefault("head_dim", 8)
        kwargs.setdefault("hidden_act", "gelu_pytorch_tanh")
        super().__init__(parent, **kwargs)


class GemmaModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = GemmaModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": GemmaModel,
        "text-classification": GemmaForSequenceClassification,
        "text-generation": GemmaForCausalLM,
        "token-classification": GemmaForTokenClassification,
        "zero-shot": GemmaForSequenceClassification,
    }

    def test_embeddings_are_scaled_by_sqrt_hidden_size(self):
        model = self._lm().model
        ids = ids_tensor([2, 5], 99)
        with core.no_grad():
            scaled = model.embed_tokens(ids).numpy()
        raw = model.embed_tokens.weight.detach().numpy()[ids.numpy()]
        np.testing.assert_allclose(scaled, raw * np.float32(math.sqrt(32)), rtol=1e-6)
        self.assertNotIn("model.embed_tokens.embed_scale", self._lm().state_dict())

    def test_rms_norm_scales_by_one_plus_weight_in_float32(self):
        norm = modeling_gemma.GemmaRMSNorm(4, eps=1e-6)
        with core.no_grad():
            norm.weight.copy_(core.tensor([0.5, -0.25, 0.0, 1.0]))
        x = np.array([[1.0, -2.0, 3.0, 0.5]], dtype=np.float32)
        expected = x / np.sqrt((x.astype(np.float64) ** 2).mean() + 1e-6) * np.array([1.5, 0.75, 1.0, 2.0])
        with core.no_grad():
            np.testing.assert_allclose(norm(core.tensor(x)).numpy(), expected, rtol=1e-6)
            half = norm(core.tensor(x).to(core.bfloat16))
        self.assertEqual(half.dtype, core.bfloat16)
        np.testing.assert_allclose(half.float().numpy(), expected, rtol=1e-2)

    def test_norms_start_at_zero_and_head_is_tied(self):
        model = GemmaForCausalLM(self.model_tester.get_config())
        np.testing.assert_array_equal(model.model.norm.weight.detach().numpy(), 0.0)
        self.assertIs(model.lm_head.weight, model.model.embed_tokens.weight)


class TestGemmaParity(DecoderParityMixin):
    @pytest.fixture(params=["gemma"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_gemma, "Gemma")


if __name__ == "__main__":
    unittest.main()
