"""DistilBERT tests in HF's structure (DistilBertModelTester + the common checks and pipelines), then parity with
HF transformers on the tiny checkpoint of tests/fixtures/encoders/distilbert."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForMaskedLM,
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertForMultipleChoice,
    DistilBertForQuestionAnswering,
    DistilBertForSequenceClassification,
    DistilBertForTokenClassification,
    DistilBertModel,
)
from mindnlp.transformers.models.distilbert import modeling_distilbert
from mindnlp.transformers.testing_utils import require_torch, torch_device

from ...encoder_fixtures import (
    ATOL,
    EncoderFixtures,
    check_loss_reaches_every_parameter,
)
from ...test_modeling_common import ModelTesterMixin, ids_tensor, random_attention_mask
from ...test_pipeline_mixin import PipelineTesterMixin


class DistilBertModelTester:
    def __init__(self, parent, batch_size=13, seq_length=7, is_training=True, use_input_mask=True,
                 use_labels=True, vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=37, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                 max_position_embeddings=512, type_sequence_label_size=2, initializer_range=0.02, num_labels=3,
                 num_choices=4, scope=None):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.is_training = is_training
        self.use_input_mask = use_input_mask
        self.use_labels = use_labels
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.max_position_embeddings = max_position_embeddings
        self.type_sequence_label_size = type_sequence_label_size
        self.initializer_range = initializer_range
        self.num_labels = num_labels
        self.num_choices = num_choices
        self.scope = scope

    def prepare_config_and_inputs(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size)
        input_mask = random_attention_mask([self.batch_size, self.seq_length]) if self.use_input_mask else None
        sequence_labels = token_labels = choice_labels = None
        if self.use_labels:
            sequence_labels = ids_tensor([self.batch_size], self.type_sequence_label_size)
            token_labels = ids_tensor([self.batch_size, self.seq_length], self.num_labels)
            choice_labels = ids_tensor([self.batch_size], self.num_choices)
        return self.get_config(), input_ids, input_mask, sequence_labels, token_labels, choice_labels

    def get_config(self):
        return DistilBertConfig(
            vocab_size=self.vocab_size, dim=self.hidden_size, n_layers=self.num_hidden_layers,
            n_heads=self.num_attention_heads, hidden_dim=self.intermediate_size, hidden_act=self.hidden_act,
            dropout=self.hidden_dropout_prob, attention_dropout=self.attention_probs_dropout_prob,
            max_position_embeddings=self.max_position_embeddings, initializer_range=self.initializer_range,
        )

    def _model(self, model_class, config):
        return model_class(config).to(torch_device).eval()

    def create_and_check_distilbert_for_question_answering(self, config, input_ids, input_mask, sequence_labels,
                                                           token_labels, choice_labels):
        model = self._model(DistilBertForQuestionAnswering, config)
        result = model(input_ids, attention_mask=input_mask, start_positions=sequence_labels,
                       end_positions=sequence_labels)
        self.parent.assertEqual(result.start_logits.shape, (self.batch_size, self.seq_length))
        self.parent.assertEqual(result.end_logits.shape, (self.batch_size, self.seq_length))

    def create_and_check_distilbert_for_sequence_classification(self, config, input_ids, input_mask,
                                                                sequence_labels, token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(DistilBertForSequenceClassification, config)
        result = model(input_ids, attention_mask=input_mask, labels=sequence_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.num_labels))

    def create_and_check_distilbert_for_token_classification(self, config, input_ids, input_mask, sequence_labels,
                                                             token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(DistilBertForTokenClassification, config)
        result = model(input_ids, attention_mask=input_mask, labels=token_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.seq_length, self.num_labels))

    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask, *_ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": input_mask}


@require_torch
class DistilBertModelTest(ModelTesterMixin, PipelineTesterMixin, unittest.TestCase):
    all_model_classes = (DistilBertModel, DistilBertForMaskedLM, DistilBertForMultipleChoice,
                         DistilBertForQuestionAnswering, DistilBertForSequenceClassification,
                         DistilBertForTokenClassification)
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": DistilBertModel,
        "fill-mask": DistilBertForMaskedLM,
        "question-answering": DistilBertForQuestionAnswering,
        "text-classification": DistilBertForSequenceClassification,
        "token-classification": DistilBertForTokenClassification,
        "zero-shot": DistilBertForSequenceClassification,
    }
    test_resize_position_embeddings = True

    def setUp(self):
        self.model_tester = DistilBertModelTester(self)

    def test_for_question_answering(self):
        self.model_tester.create_and_check_distilbert_for_question_answering(
            *self.model_tester.prepare_config_and_inputs())

    def test_for_sequence_classification(self):
        self.model_tester.create_and_check_distilbert_for_sequence_classification(
            *self.model_tester.prepare_config_and_inputs())

    def test_for_token_classification(self):
        self.model_tester.create_and_check_distilbert_for_token_classification(
            *self.model_tester.prepare_config_and_inputs())

    def test_question_answering_needs_two_labels(self):
        config = self.model_tester.get_config()
        config.num_labels = 3
        with self.assertRaisesRegex(ValueError, "num_labels should be 2"):
            DistilBertForQuestionAnswering(config)

    def test_resize_position_embeddings_keeps_learned_rows(self):
        model = DistilBertModel(self.model_tester.get_config()).eval()
        old = model.embeddings.position_embeddings.weight.detach().clone()
        model.resize_position_embeddings(600)
        self.assertEqual(model.embeddings.position_embeddings.weight.shape, (600, self.model_tester.hidden_size))
        self.assertTrue(core.equal(model.embeddings.position_embeddings.weight[:512], old))
        input_ids = ids_tensor([2, 550], self.model_tester.vocab_size)
        self.assertEqual(model(input_ids).last_hidden_state.shape, (2, 550, self.model_tester.hidden_size))


# --- parity with HF transformers ---------------------------------------------------------

FIXTURES = EncoderFixtures("distilbert")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    model, info = FIXTURES.load_case(modeling_distilbert, case)
    spec = FIXTURES.cases[case]
    assert sorted(info["missing_keys"]) == spec["missing_keys"]
    assert sorted(info["unexpected_keys"]) == spec["unexpected_keys"]
    assert FIXTURES.max_error(case, model) <= ATOL


def test_inputs_embeds_match_hf():
    model, _ = FIXTURES.load_case(modeling_distilbert, "model")
    inputs = FIXTURES.inputs()
    with core.no_grad():
        embeds = model.get_input_embeddings()(inputs["input_ids"])
        hidden = model(inputs_embeds=embeds, attention_mask=inputs["attention_mask"]).last_hidden_state
    np.testing.assert_allclose(hidden.numpy(), FIXTURES.outputs["model_inputs_embeds/last_hidden_state"], atol=ATOL)


def test_sinusoidal_position_embeddings_match_hf():
    config = DistilBertConfig(**dict(FIXTURES.expected["config"], sinusoidal_pos_embds=True))
    table = DistilBertModel(config).embeddings.position_embeddings.weight
    np.testing.assert_allclose(table.detach().numpy(), FIXTURES.outputs["sinusoidal/position_embeddings"], atol=1e-6)


def test_masked_lm_projector_is_tied_to_the_word_embeddings():
    model, _ = FIXTURES.load_case(modeling_distilbert, "masked_lm")
    assert model.vocab_projector.weight is model.distilbert.embeddings.word_embeddings.weight


def test_auto_classes_pick_distilbert():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is DistilBertModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is DistilBertForMaskedLM


@pytest.mark.parametrize("case", ["masked_lm", "seq_cls_single", "token_cls", "question_answering",
                                  "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_distilbert, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})
