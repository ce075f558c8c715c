"""XLM-RoBERTa: RoBERTa's network under its own names and config. The common checks run on the
XLMRoberta* classes with RoBERTa's tester, then parity with HF on tests/fixtures/encoders/xlm_roberta."""
import unittest

import pytest

from mindnlp.transformers import (AutoConfig, AutoModel, AutoModelForMaskedLM, XLMRobertaConfig,
                                  XLMRobertaForCausalLM, XLMRobertaForMaskedLM, XLMRobertaForMultipleChoice,
                                  XLMRobertaForQuestionAnswering, XLMRobertaForSequenceClassification,
                                  XLMRobertaForTokenClassification, XLMRobertaModel)
from mindnlp.transformers.models.xlm_roberta import modeling_xlm_roberta
from mindnlp.transformers.testing_utils import require_torch

from ...encoder_fixtures import ATOL, EncoderFixtures, check_loss_reaches_every_parameter
from ...test_modeling_common import ModelTesterMixin
from ..roberta.test_modeling_roberta import RobertaModelTester


class XLMRobertaModelTester(RobertaModelTester):
    def get_config(self):
        return XLMRobertaConfig(**super().get_config().to_dict())


@require_torch
class XLMRobertaModelTest(ModelTesterMixin, unittest.TestCase):
    all_model_classes = (XLMRobertaForCausalLM, XLMRobertaForMaskedLM, XLMRobertaModel,
                         XLMRobertaForSequenceClassification, XLMRobertaForTokenClassification,
                         XLMRobertaForMultipleChoice, XLMRobertaForQuestionAnswering)
    all_generative_model_classes = (XLMRobertaForCausalLM,)

    def setUp(self):
        self.model_tester = XLMRobertaModelTester(self)

    def test_inputs_embeds(self):
        """As for RoBERTa: ids equal to padding_idx get a different position from inputs_embeds (HF's semantics)."""
        prepare = self.model_tester.prepare_config_and_inputs_for_common

        def without_padding_ids():
            config, inputs = prepare()
            ids = inputs["input_ids"].clone()
            ids[ids == config.pad_token_id] = config.pad_token_id + 1
            return config, dict(inputs, input_ids=ids)

        self.model_tester.prepare_config_and_inputs_for_common = without_padding_ids
        super().test_inputs_embeds()

    def test_classes_use_the_xlm_roberta_config(self):
        for model_class in self.all_model_classes:
            self.assertIs(model_class.config_class, XLMRobertaConfig, model_class.__name__)
            self.assertEqual(model_class.base_model_prefix, "roberta")


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
