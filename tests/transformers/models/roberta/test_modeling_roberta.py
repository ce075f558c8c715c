"""RoBERTa tests in HF's structure (RobertaModelTester + the common checks and pipelines, decoder mode included),
then parity with HF transformers on the tiny checkpoint of tests/fixtures/encoders/roberta."""
import unittest
from typing import ClassVar

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    RobertaConfig,
    RobertaForCausalLM,
    RobertaForMaskedLM,
    RobertaForMultipleChoice,
    RobertaForQuestionAnswering,
    RobertaForSequenceClassification,
    RobertaForTokenClassification,
    RobertaModel,
)
from mindnlp.transformers.cache_utils import DynamicCache
from mindnlp.transformers.models.roberta import modeling_roberta
from mindnlp.transformers.models.roberta.modeling_roberta import (
    create_position_ids_from_input_ids,
)
from mindnlp.transformers.testing_utils import require_torch, torch_device

from ...encoder_fixtures import (
    ATOL,
    EncoderFixtures,
    check_loss_reaches_every_parameter,
)
from ...test_modeling_common import (
    ModelTesterMixin,
    floats_tensor,
    ids_tensor,
    random_attention_mask,
)
from ...test_pipeline_mixin import PipelineTesterMixin


class RobertaModelTester:
    def __init__(self, parent, batch_size=13, seq_length=7, is_training=True, use_input_mask=True,
                 use_token_type_ids=True, use_labels=True, vocab_size=99, hidden_size=32, num_hidden_layers=2,
                 num_attention_heads=4, intermediate_size=37, hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=512, type_vocab_size=16,
                 type_sequence_label_size=2, initializer_range=0.02, num_labels=3, num_choices=4, scope=None):
        self.parent = parent
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.is_training = is_training
        self.use_input_mask = use_input_mask
        self.use_token_type_ids = use_token_type_ids
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
        self.type_vocab_size = type_vocab_size
        self.type_sequence_label_size = type_sequence_label_size
        self.initializer_range = initializer_range
        self.num_labels = num_labels
        self.num_choices = num_choices
        self.scope = scope

    def prepare_config_and_inputs(self):
        input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size)
        input_mask = random_attention_mask([self.batch_size, self.seq_length]) if self.use_input_mask else None
        token_type_ids = None
        if self.use_token_type_ids:
            token_type_ids = ids_tensor([self.batch_size, self.seq_length], self.type_vocab_size)
        sequence_labels = token_labels = choice_labels = None
        if self.use_labels:
            sequence_labels = ids_tensor([self.batch_size], self.type_sequence_label_size)
            token_labels = ids_tensor([self.batch_size, self.seq_length], self.num_labels)
            choice_labels = ids_tensor([self.batch_size], self.num_choices)
        return self.get_config(), input_ids, token_type_ids, input_mask, sequence_labels, token_labels, choice_labels

    def get_config(self):
        return RobertaConfig(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, intermediate_size=self.intermediate_size,
            hidden_act=self.hidden_act, hidden_dropout_prob=self.hidden_dropout_prob,
            attention_probs_dropout_prob=self.attention_probs_dropout_prob,
            max_position_embeddings=self.max_position_embeddings, type_vocab_size=self.type_vocab_size,
            initializer_range=self.initializer_range,
        )

    def prepare_config_and_inputs_for_decoder(self):
        config, *inputs = self.prepare_config_and_inputs()
        config.is_decoder = True
        encoder_hidden_states = floats_tensor([self.batch_size, self.seq_length, self.hidden_size])
        encoder_attention_mask = ids_tensor([self.batch_size, self.seq_length], vocab_size=2)
        return (config, *inputs, encoder_hidden_states, encoder_attention_mask)

    def _model(self, model_class, config):
        return model_class(config).to(torch_device).eval()

    def create_and_check_for_causal_lm(self, config, input_ids, token_type_ids, input_mask, sequence_labels,
                                       token_labels, choice_labels, encoder_hidden_states, encoder_attention_mask):
        model = self._model(RobertaForCausalLM, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=token_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.seq_length, self.vocab_size))
        self.parent.assertEqual(result.loss.ndim, 0)

    def create_and_check_decoder_model_past(self, config, input_ids, token_type_ids, input_mask, sequence_labels,
                                            token_labels, choice_labels, encoder_hidden_states,
                                            encoder_attention_mask):
        """A DynamicCache fed token by token equals the full pass: cached position ids continue counting."""
        config.is_decoder = True
        model = self._model(RobertaForCausalLM, config)
        input_ids = input_ids.clone()
        input_ids[input_ids == config.pad_token_id] = config.pad_token_id + 1  # no padding: positions just count
        full = model(input_ids).logits
        cache = DynamicCache(config=config)
        steps = []
        for i in range(self.seq_length):
            out = model(input_ids[:, i:i + 1], past_key_values=cache, use_cache=True)
            cache = out.past_key_values
            steps.append(out.logits)
        self.parent.assertTrue(core.allclose(core.cat(steps, dim=1), full, atol=1e-4))

    def create_and_check_for_token_classification(self, config, input_ids, token_type_ids, input_mask,
                                                  sequence_labels, token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(RobertaForTokenClassification, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=token_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.seq_length, self.num_labels))

    def create_and_check_for_sequence_classification(self, config, input_ids, token_type_ids, input_mask,
                                                     sequence_labels, token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(RobertaForSequenceClassification, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=sequence_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.num_labels))

    def create_and_check_for_question_answering(self, config, input_ids, token_type_ids, input_mask,
                                                sequence_labels, token_labels, choice_labels):
        model = self._model(RobertaForQuestionAnswering, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids,
                       start_positions=sequence_labels, end_positions=sequence_labels)
        self.parent.assertEqual(result.start_logits.shape, (self.batch_size, self.seq_length))
        self.parent.assertEqual(result.end_logits.shape, (self.batch_size, self.seq_length))

    def prepare_config_and_inputs_for_common(self):
        config, input_ids, token_type_ids, input_mask, *_ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": input_mask}


@require_torch
class RobertaModelTest(ModelTesterMixin, PipelineTesterMixin, unittest.TestCase):
    all_model_classes = (RobertaForCausalLM, RobertaForMaskedLM, RobertaModel, RobertaForSequenceClassification,
                         RobertaForTokenClassification, RobertaForMultipleChoice, RobertaForQuestionAnswering)
    all_generative_model_classes = (RobertaForCausalLM,)
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": RobertaModel,
        "fill-mask": RobertaForMaskedLM,
        "question-answering": RobertaForQuestionAnswering,
        "text-classification": RobertaForSequenceClassification,
        "text-generation": RobertaForCausalLM,
        "token-classification": RobertaForTokenClassification,
        "zero-shot": RobertaForSequenceClassification,
    }

    def setUp(self):
        self.model_tester = RobertaModelTester(self)

    def test_for_causal_lm(self):
        self.model_tester.create_and_check_for_causal_lm(*self.model_tester.prepare_config_and_inputs_for_decoder())

    def test_decoder_model_past(self):
        self.model_tester.create_and_check_decoder_model_past(
            *self.model_tester.prepare_config_and_inputs_for_decoder())

    def test_for_token_classification(self):
        self.model_tester.create_and_check_for_token_classification(*self.model_tester.prepare_config_and_inputs())

    def test_for_sequence_classification(self):
        self.model_tester.create_and_check_for_sequence_classification(*self.model_tester.prepare_config_and_inputs())

    def test_for_question_answering(self):
        self.model_tester.create_and_check_for_question_answering(*self.model_tester.prepare_config_and_inputs())

    def test_create_position_ids_respects_padding_idx(self):
        """HF's test: positions count from padding_idx + 1 and padding keeps padding_idx."""
        padding_idx = 1
        input_ids = core.tensor([[12, 31, 13, padding_idx]])
        want = core.tensor([[padding_idx + 1, padding_idx + 2, padding_idx + 3, padding_idx]])
        self.assertTrue(core.equal(create_position_ids_from_input_ids(input_ids, padding_idx), want))

    def test_left_padding_keeps_positions(self):
        """Thanks to padding-aware positions, a left-padded row encodes like the unpadded sequence."""
        config = self.model_tester.get_config()
        model = RobertaModel(config).eval()
        ids = core.tensor([[5, 6, 7, 8]])
        padded = core.tensor([[config.pad_token_id, config.pad_token_id, 5, 6, 7, 8]])
        with core.no_grad():
            plain = model(ids).last_hidden_state
            left = model(padded, attention_mask=core.tensor([[0, 0, 1, 1, 1, 1]])).last_hidden_state
        self.assertTrue(core.allclose(plain, left[:, 2:], atol=1e-5))


# --- parity with HF transformers ---------------------------------------------------------

FIXTURES = EncoderFixtures("roberta")


@pytest.mark.parametrize("case", sorted(FIXTURES.cases))
def test_head_outputs_and_losses_match_hf(case):
    model, info = FIXTURES.load_case(modeling_roberta, case)
    spec = FIXTURES.cases[case]
    assert sorted(info["missing_keys"]) == spec["missing_keys"]
    assert sorted(info["unexpected_keys"]) == spec["unexpected_keys"]
    assert FIXTURES.max_error(case, model) <= ATOL


def test_inputs_embeds_match_hf():
    """Without input ids, positions come from the embeddings' length (padding_idx + 1 onwards), as in HF."""
    model, _ = FIXTURES.load_case(modeling_roberta, "model")
    inputs = FIXTURES.inputs()
    with core.no_grad():
        embeds = model.get_input_embeddings()(inputs["input_ids"])
        hidden = model(inputs_embeds=embeds, attention_mask=inputs["attention_mask"]).last_hidden_state
    np.testing.assert_allclose(hidden.numpy(), FIXTURES.outputs["model_inputs_embeds/last_hidden_state"], atol=ATOL)


def test_lm_head_decoder_is_tied_to_embeddings_and_bias():
    model, _ = FIXTURES.load_case(modeling_roberta, "masked_lm")
    assert model.lm_head.decoder.weight is model.roberta.embeddings.word_embeddings.weight
    assert model.lm_head.decoder.bias is model.lm_head.bias
    assert float(model.lm_head.bias.abs().sum()) > 0


def test_auto_classes_pick_roberta():
    assert type(AutoModel.from_pretrained(FIXTURES.checkpoint)) is RobertaModel
    assert type(AutoModelForMaskedLM.from_pretrained(FIXTURES.checkpoint)) is RobertaForMaskedLM
    assert type(AutoModelForCausalLM.from_pretrained(FIXTURES.checkpoint, is_decoder=True)) is RobertaForCausalLM


@pytest.mark.parametrize("case", ["masked_lm", "causal_lm", "seq_cls_single", "token_cls", "question_answering",
                                  "multiple_choice"])
def test_training_reaches_every_parameter(case):
    model, _ = FIXTURES.load_case(modeling_roberta, case)
    check_loss_reaches_every_parameter(model, {**FIXTURES.inputs(case), **FIXTURES.labels(case)})
