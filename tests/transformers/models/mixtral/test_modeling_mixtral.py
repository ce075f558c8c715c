"""Mixtral tests: HF's structure (MixtralModelTester + the common and causal-LM checks), the
sparse MoE block, its checkpoint layout, and parity with HF transformers on fixtures."""
import os
import tempfile
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import (
    MixtralConfig,
    MixtralForCausalLM,
    MixtralForQuestionAnswering,
    MixtralForSequenceClassification,
    MixtralForTokenClassification,
    MixtralModel,
)
from mindnlp.transformers.models.mixtral import modeling_mixtral

from ...causal_lm_tester import CausalLMModelTest, CausalLMModelTester
from ...test_modeling_common import ids_tensor
from ..decoder_parity import Case, DecoderParityMixin, QuestionAnsweringParityMixin
from ..moe_parity import MoeParityMixin


class MixtralModelTester(CausalLMModelTester):
    config_class = MixtralConfig
    base_model_class = MixtralModel
    causal_lm_class = MixtralForCausalLM
    sequence_classification_class = MixtralForSequenceClassification
    token_classification_class = MixtralForTokenClassification
    question_answering_class = MixtralForQuestionAnswering

    def __init__(self, parent, **kwargs):
        kwargs.update(num_local_experts=4, num_experts_per_tok=2)
        super().__init__(parent, **kwargs)


class MixtralModelTest(CausalLMModelTest, unittest.TestCase):
    model_tester_class = MixtralModelTester
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": MixtralModel,
        "question-answering": MixtralForQuestionAnswering,
        "text-classification": MixtralForSequenceClassification,
        "text-generation": MixtralForCausalLM,
        "token-classification": MixtralForTokenClassification,
        "zero-shot": MixtralForSequenceClassification,
    }

    def test_every_layer_is_a_sparse_moe_block(self):
        model = self._lm()
        for layer in model.model.layers:
            self.assertIsInstance(layer.mlp, modeling_mixtral.MixtralSparseMoeBlock)
            self.assertEqual(tuple(layer.mlp.experts.gate_up_proj.shape), (4, 2 * 37, 32))
            self.assertEqual(tuple(layer.mlp.experts.down_proj.shape), (4, 32, 37))
            self.assertEqual(tuple(layer.mlp.gate.weight.shape), (4, 32))

    def test_router_logits_and_aux_loss(self):
        model = self._lm()
        ids = ids_tensor([3, 5], 99)
        out = model(ids, labels=ids, output_router_logits=True)
        self.assertEqual(len(out.router_logits), 2)
        self.assertEqual(tuple(out.router_logits[0].shape), (15, 4))
        plain = model(ids, labels=ids)
        self.assertIsNone(plain.aux_loss)
        self.assertIsNone(plain.router_logits)
        np.testing.assert_allclose(float(out.loss), float(plain.loss) + 0.001 * float(out.aux_loss), rtol=1e-6)
        out.loss.backward()
        self.assertGreater(float(model.model.layers[0].mlp.gate.weight.grad.abs().sum()), 0)

    def test_output_router_logits_from_the_config(self):
        model = self._lm(output_router_logits=True)
        with core.no_grad():
            out = model(ids_tensor([1, 4], 99))
        self.assertEqual(len(out.router_logits), 2)
        self.assertIsNotNone(out.aux_loss)

    def test_jitter_noise_only_in_training(self):
        model = self._lm(router_jitter_noise=0.5)
        ids = ids_tensor([2, 5], 99)
        with core.no_grad():
            np.testing.assert_array_equal(model(ids).logits.numpy(), model(ids).logits.numpy())
            model.train()
            self.assertFalse(np.array_equal(model(ids).logits.numpy(), model(ids).logits.numpy()))

    def test_saves_the_published_per_expert_layout_and_loads_it_back(self):
        model = self._lm()
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp)
            keys = set(load_safetensors(os.path.join(tmp, "model.safetensors")))
            self.assertIn("model.layers.1.block_sparse_moe.experts.3.w3.weight", keys)
            self.assertIn("model.layers.0.block_sparse_moe.gate.weight", keys)
            self.assertFalse(any("gate_up_proj" in k or ".mlp." in k for k in keys))
            reloaded = MixtralForCausalLM.from_pretrained(tmp)
        for name, value in model.state_dict().items():
            np.testing.assert_array_equal(reloaded.state_dict()[name].numpy(), value.numpy(), err_msg=name)

    def test_loads_the_fused_layout_too(self):
        model = self._lm()
        with tempfile.TemporaryDirectory() as tmp:
            model.save_pretrained(tmp, save_original_format=False)
            self.assertIn("model.layers.0.mlp.experts.gate_up_proj",
                          load_safetensors(os.path.join(tmp, "model.safetensors")))
            reloaded = MixtralForCausalLM.from_pretrained(tmp)
        gate_up = model.model.layers[0].mlp.experts.gate_up_proj
        np.testing.assert_array_equal(reloaded.model.layers[0].mlp.experts.gate_up_proj.detach().numpy(),
                                      gate_up.detach().numpy())


class TestMixtralParity(DecoderParityMixin, QuestionAnsweringParityMixin, MoeParityMixin):
    @pytest.fixture(params=["mixtral"], scope="class")
    @classmethod
    def case(cls, request):
        return Case(request.param, modeling_mixtral, "Mixtral")


if __name__ == "__main__":
    unittest.main()
