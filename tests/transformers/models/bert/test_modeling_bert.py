"""BERT model tests in HF's structure: BertModelTester builds tiny configs, BertModelTest runs the
common checks (ModelTesterMixin), the pipelines of the tasks BERT serves (PipelineTesterMixin) and
each head's own checks, decoder mode included."""
import unittest
from typing import ClassVar

from mindnlp import core
from mindnlp.transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForMultipleChoice,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertLMHeadModel,
    BertModel,
)
from mindnlp.transformers.cache_utils import DynamicCache
from mindnlp.transformers.testing_utils import require_torch, torch_device

from ...test_modeling_common import (
    ModelTesterMixin,
    floats_tensor,
    ids_tensor,
    random_attention_mask,
)
from ...test_pipeline_mixin import PipelineTesterMixin


class BertModelTester:
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
        config = self.get_config()
        return config, input_ids, token_type_ids, input_mask, sequence_labels, token_labels, choice_labels

    def get_config(self):
        return BertConfig(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, intermediate_size=self.intermediate_size,
            hidden_act=self.hidden_act, hidden_dropout_prob=self.hidden_dropout_prob,
            attention_probs_dropout_prob=self.attention_probs_dropout_prob,
            max_position_embeddings=self.max_position_embeddings, type_vocab_size=self.type_vocab_size,
            is_decoder=False, initializer_range=self.initializer_range,
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
        model = self._model(BertLMHeadModel, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=token_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.seq_length, self.vocab_size))
        self.parent.assertEqual(result.loss.ndim, 0)

    def create_and_check_decoder_model_past(self, config, input_ids, token_type_ids, input_mask, sequence_labels,
                                            token_labels, choice_labels, encoder_hidden_states,
                                            encoder_attention_mask):
        """Decoder without cross-attention: a DynamicCache, token by token, equals the full pass."""
        config.is_decoder = True
        model = self._model(BertLMHeadModel, config)
        input_mask = input_mask.clone()
        input_mask[:, 0] = 1  # every step sees an unmasked key, so no row is fully masked
        full = model(input_ids, attention_mask=input_mask).logits
        cache = DynamicCache(config=config)
        steps = []
        for i in range(self.seq_length):
            out = model(input_ids[:, i:i + 1], attention_mask=input_mask[:, :i + 1], past_key_values=cache,
                        use_cache=True)
            cache = out.past_key_values
            steps.append(out.logits)
        self.parent.assertTrue(core.allclose(core.cat(steps, dim=1), full, atol=1e-4))

    def create_and_check_for_question_answering(self, config, input_ids, token_type_ids, input_mask,
                                                sequence_labels, token_labels, choice_labels):
        model = self._model(BertForQuestionAnswering, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids,
                       start_positions=sequence_labels, end_positions=sequence_labels)
        self.parent.assertEqual(result.start_logits.shape, (self.batch_size, self.seq_length))
        self.parent.assertEqual(result.end_logits.shape, (self.batch_size, self.seq_length))

    def create_and_check_for_sequence_classification(self, config, input_ids, token_type_ids, input_mask,
                                                     sequence_labels, token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(BertForSequenceClassification, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=sequence_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.num_labels))

    def create_and_check_for_token_classification(self, config, input_ids, token_type_ids, input_mask,
                                                  sequence_labels, token_labels, choice_labels):
        config.num_labels = self.num_labels
        model = self._model(BertForTokenClassification, config)
        result = model(input_ids, attention_mask=input_mask, token_type_ids=token_type_ids, labels=token_labels)
        self.parent.assertEqual(result.logits.shape, (self.batch_size, self.seq_length, self.num_labels))

    def prepare_config_and_inputs_for_common(self):
        config, input_ids, token_type_ids, input_mask, *_ = self.prepare_config_and_inputs()
        inputs_dict = {"input_ids": input_ids, "token_type_ids": token_type_ids, "attention_mask": input_mask}
        return config, inputs_dict


@require_torch
class BertModelTest(ModelTesterMixin, PipelineTesterMixin, unittest.TestCase):
    all_model_classes = (BertModel, BertLMHeadModel, BertForMaskedLM, BertForMultipleChoice,
                         BertForNextSentencePrediction, BertForPreTraining, BertForQuestionAnswering,
                         BertForSequenceClassification, BertForTokenClassification)
    all_generative_model_classes = (BertLMHeadModel,)
    pipeline_model_mapping: ClassVar[dict] = {
        "feature-extraction": BertModel,
        "fill-mask": BertForMaskedLM,
        "question-answering": BertForQuestionAnswering,
        "text-classification": BertForSequenceClassification,
        "text-generation": BertLMHeadModel,
        "token-classification": BertForTokenClassification,
        "zero-shot": BertForSequenceClassification,
    }

    def _prepare_for_class(self, inputs_dict, model_class, return_labels=False):
        """BertForPreTraining's loss needs both MLM labels and next-sentence labels."""
        inputs_dict = super()._prepare_for_class(inputs_dict, model_class, return_labels=return_labels)
        if return_labels and model_class is BertForPreTraining:
            batch, seq = self.model_tester.batch_size, self.model_tester.seq_length
            inputs_dict["labels"] = core.zeros((batch, seq), dtype=core.long, device=torch_device)
            inputs_dict["next_sentence_label"] = core.zeros(batch, dtype=core.long, device=torch_device)
        return inputs_dict

    def setUp(self):
        self.model_tester = BertModelTester(self)

    def test_for_causal_lm(self):
        self.model_tester.create_and_check_for_causal_lm(*self.model_tester.prepare_config_and_inputs_for_decoder())

    def test_decoder_model_past(self):
        self.model_tester.create_and_check_decoder_model_past(
            *self.model_tester.prepare_config_and_inputs_for_decoder())

    def test_for_question_answering(self):
        self.model_tester.create_and_check_for_question_answering(*self.model_tester.prepare_config_and_inputs())

    def test_for_sequence_classification(self):
        self.model_tester.create_and_check_for_sequence_classification(*self.model_tester.prepare_config_and_inputs())

    def test_for_token_classification(self):
        self.model_tester.create_and_check_for_token_classification(*self.model_tester.prepare_config_and_inputs())

    def test_decoder_is_causal(self):
        """In decoder mode a token's hidden state does not depend on later tokens."""
        config, input_ids, *_ = self.model_tester.prepare_config_and_inputs()
        config.is_decoder = True
        model = BertModel(config).to(torch_device).eval()
        changed = input_ids.clone()
        changed[:, -1] = (changed[:, -1] + 1) % config.vocab_size
        with core.no_grad():
            a = model(input_ids).last_hidden_state
            b = model(changed).last_hidden_state
        self.assertTrue(core.allclose(a[:, :-1], b[:, :-1], atol=1e-6))
        self.assertFalse(core.allclose(a[:, -1], b[:, -1], atol=1e-6))

    def test_padding_does_not_change_unpadded_positions(self):
        """Appending masked padding leaves the other positions' hidden states unchanged."""
        config, input_ids, *_ = self.model_tester.prepare_config_and_inputs()
        model = BertModel(config).to(torch_device).eval()
        padded = core.cat([input_ids, core.zeros((self.model_tester.batch_size, 3), dtype=core.long, device=torch_device)], dim=1)
        mask = core.cat([core.ones_like(input_ids), core.zeros((self.model_tester.batch_size, 3), dtype=core.long, device=torch_device)],
                        dim=1)
        with core.no_grad():
            plain = model(input_ids).last_hidden_state
            with_padding = model(padded, attention_mask=mask).last_hidden_state
        self.assertTrue(core.allclose(plain, with_padding[:, : self.model_tester.seq_length], atol=1e-5))


if __name__ == "__main__":
    unittest.main()
