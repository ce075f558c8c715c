"""XLM-RoBERTa: RoBERTa's network under its own names and config. The common checks and the
pipelines run on the XLMRoberta* classes with RoBERTa's tester, then parity with HF on
tests/fixtures/encoders/xlm_roberta."""
import unittest
from typing import ClassVar

import pytest

from mindnlp.transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    XLMRobertaConfig,
    XLMRobertaForCausalLM,
    XLMRobertaForMaskedLM,
    XLMRobertaForMultipleChoice,
    XLMRobertaForQuestionAnswering,
    XLMRobertaForSequenceClassification,
    XLMRobertaForTokenClassification,
    XLMRobertaModel,
)
from mindnlp.transformers.generation import GenerationMixin
from mindnlp.transformers.models.xlm_roberta import modeling_xlm_roberta
from mindnlp.transformers.testing_utils import require_torch

from ...encoder_fixtures import (
    ATOL,
    EncoderFixtures,
    check_loss_reaches_every_parameter,
)
from ...test_modeling_common import ModelTesterMixin
from ...test_pipeline_mixin import PipelineTesterMixin, tiny_sentencepiece_tokenizer
from ..roberta.test_modeling_roberta import RobertaModelTester


class XLMRobertaModelTester(RobertaModelTester):
    def get_config(self):
        return XLMRobertaConfig(**super().get_config().to_dict())


@require_torch
class XLMRobertaModelTest(ModelTesterMixin, PipelineTesterMixin, unittest.TestCase):
    all_model_classes = (XLMRobertaForCausalLM, XLMRobertaForMaskedLM, XLMRobertaModel,
                         XLMRobertaForSequenceClassification, XLMRobertaForTokenClassification,
                         XLMRobertaForMultipleChoice, XLMRobertaForQuestionAnswering)
    all_generative_model_classes = (XLMRobertaForCausalLM,)
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": XLMRobertaModel,
        "fill-mask": XLMRobertaForMaskedLM,
        "question-answering": XLMRobertaForQuestionAnswering,
        "text-classification": XLMRobertaForSequenceClassification,
        "text-generation": XLMRobertaForCausalLM,
        "token-classification": XLMRobertaForTokenClassification,
        "zero-shot": XLMRobertaForSequenceClassification,
    }

    def setUp(self):
        self.model_tester = XLMRobertaModelTester(self)

    def get_pipeline_tokenizer(self, config):
        """XLM-R checkpoints ship a sentencepiece tokenizer.json (AutoTokenizer loads it as
        PreTrainedTokenizerFast) with RoBERTa's special tokens and sequence layout."""
        special_tokens = {"bos_token": "<s>", "pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>",
                          "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}
        return tiny_sentencepiece_tokenizer(config, special_tokens, single="<s> $A </s>",
                                            pair="<s> $A </s> </s> $B </s>")

    def test_classes_use_the_xlm_roberta_config(self):
        for model_class in self.all_model_classes:
            self.assertIs(model_class.config_class, XLMRobertaConfig, model_class.__name__)
            self.assertEqual(model_class.base_model_prefix, "roberta")

    def test_causal_lm_lists_generation_mixin(self):
        """As HF v5 requires of every class that generates (its GenerationTesterMixin checks it)."""
        self.assertIn(GenerationMixin, XLMRobertaForCausalLM.__bases__)
        self.assertTrue(XLMRobertaForCausalLM.can_generate())


FIXTURES = EncoderFixtures("xlm_roberta")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    model, info = FIXTURES.load_case(modeling_xlm_roberta, case)
    spec = FIXTURES.cases[case]
    assert type(model).__name__ == spec["class"]
    assert sorted(info["missing_keys"]) == spec["missing_keys"]
    assert sorted(info["unexpected_keys"]) == spec["unexpected_keys"]
    assert FIXTURES.max_error(case, model) <= ATOL


def test_auto_classes_pick_xlm_roberta():
    assert AutoConfig.from_pretrained(FIXTURES.checkpoint).model_type == "xlm-roberta"
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is XLMRobertaModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is XLMRobertaForMaskedLM


def test_training_reaches_every_parameter():
    model, _ = FIXTURES.load_case(modeling_xlm_roberta, "masked_lm")
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs("masked_lm"), **FIXTURES.labels("masked_lm")})
