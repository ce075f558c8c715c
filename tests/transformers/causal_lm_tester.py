"""Shared tests of decoder-only LMs, in the shape of HF transformers v5's tests/causal_lm_tester.py.

A family's test file subclasses `CausalLMModelTester` (naming its config and model classes)
and `CausalLMModelTest` with `unittest.TestCase` (naming the tester and its `pipeline_model_mapping`).
`CausalLMModelTest` is `ModelTesterMixin` + `GenerationTesterMixin` + `PipelineTesterMixin`, as in
HF: the common checks run on every head, the generation checks on every head that can generate
(`all_generative_model_classes`, the causal LM), the pipelines of the mapped tasks on their
heads, plus the decoder checks below: shapes of each head, incremental decoding with the
KV cache equal to a full forward (padded or not), padding that leaves the other rows
unchanged, last-non-pad-token pooling, and left-padded generation with and without the cache.
"""
import copy

import numpy as np

from mindnlp import core
from mindnlp.transformers import AutoModelForQuestionAnswering
from mindnlp.transformers.testing_utils import torch_device

from .generation.test_utils import GenerationTesterMixin
from .test_modeling_common import ModelTesterMixin, ids_tensor, random_attention_mask
from .test_pipeline_mixin import PipelineTesterMixin, tiny_sentencepiece_tokenizer


def positions_from_mask(mask):
    """Position ids as generate() derives them from a padding mask: cumsum - 1, 0 at padding."""
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)


class CausalLMModelTester:
    config_class = None
    base_model_class = None
    causal_lm_class = None
    sequence_classification_class = None
    token_classification_class = None
    question_answering_class = None

    def __init__(self, parent, batch_size=13, seq_length=7, is_training=True, use_input_mask=True, use_labels=True,
                 vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=37, hidden_act="silu", max_position_embeddings=512, initializer_range=0.02,
                 type_sequence_label_size=2, num_labels=3, num_choices=4, pad_token_id=0, bos_token_id=1,
                 eos_token_id=2, **config_overrides):
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
        self.num_key_value_heads = num_key_value_heads
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.max_position_embeddings = max_position_embeddings
        self.initializer_range = initializer_range
        self.type_sequence_label_size = type_sequence_label_size
        self.num_labels = num_labels
        self.num_choices = num_choices
        self.pad_token_id = pad_token_id
        self.bos_token_id = bos_token_id
        self.eos_token_id = eos_token_id
        self.config_overrides = config_overrides

    @property
    def all_model_classes(self):
        return tuple(c for c in (self.base_model_class, self.causal_lm_class, self.sequence_classification_class,
                                 self.token_classification_class, self.question_answering_class) if c is not None)

    def get_config(self):
        return self.config_class(
            vocab_size=self.vocab_size, hidden_size=self.hidden_size, num_hidden_layers=self.num_hidden_layers,
            num_attention_heads=self.num_attention_heads, num_key_value_heads=self.num_key_value_heads,
            intermediate_size=self.intermediate_size, hidden_act=self.hidden_act,
            max_position_embeddings=self.max_position_embeddings, initializer_range=self.initializer_range,
            num_labels=self.num_labels, pad_token_id=self.pad_token_id, bos_token_id=self.bos_token_id,
            eos_token_id=self.eos_token_id, **self.config_overrides)

    def prepare_config_and_inputs(self):
        # No pad id among the tokens: sequence classification pools at the last non-pad token, and
        # the common checks compare runs from input_ids and from inputs_embeds (which has no ids).
        input_ids = ids_tensor([self.batch_size, self.seq_length], self.vocab_size - 1) + 1
        input_ids = input_ids.masked_fill(input_ids == self.pad_token_id, self.vocab_size - 1)
        input_mask = random_attention_mask([self.batch_size, self.seq_length]) if self.use_input_mask else None
        sequence_labels = token_labels = choice_labels = None
        if self.use_labels:
            sequence_labels = ids_tensor([self.batch_size], self.type_sequence_label_size)
            token_labels = ids_tensor([self.batch_size, self.seq_length], self.num_labels)
            choice_labels = ids_tensor([self.batch_size], self.num_choices)
        return self.get_config(), input_ids, input_mask, sequence_labels, token_labels, choice_labels

    def prepare_config_and_inputs_for_common(self):
        config, input_ids, input_mask, *_ = self.prepare_config_and_inputs()
        return config, {"input_ids": input_ids, "attention_mask": input_mask}

    def model(self, model_class, config):
        return model_class(config).to(torch_device).eval()

    def create_and_check_model(self, config, input_ids, input_mask, *labels):
        model = self.model(self.base_model_class, config)
        with core.no_grad():
            result = model(input_ids, attention_mask=input_mask)
            model(input_ids)
        self.parent.assertEqual(tuple(result.last_hidden_state.shape),
                                (self.batch_size, self.seq_length, self.hidden_size))
        self.parent.assertEqual(len(result.past_key_values), config.num_hidden_layers)

    def create_and_check_for_causal_lm(self, config, input_ids, input_mask, sequence_labels, token_labels,
                                       choice_labels):
        model = self.model(self.causal_lm_class, config)
        with core.no_grad():
            result = model(input_ids, attention_mask=input_mask, labels=input_ids)
            last_two = model(input_ids, attention_mask=input_mask, logits_to_keep=2).logits
        self.parent.assertEqual(tuple(result.logits.shape), (self.batch_size, self.seq_length, self.vocab_size))
        self.parent.assertEqual(result.loss.ndim, 0)
        np.testing.assert_allclose(last_two.cpu().numpy(), result.logits[:, -2:].cpu().numpy(), atol=1e-6)

    def create_and_check_for_sequence_classification(self, config, input_ids, input_mask, sequence_labels,
                                                     token_labels, choice_labels):
        model = self.model(self.sequence_classification_class, config)
        with core.no_grad():
            result = model(input_ids, attention_mask=input_mask, labels=sequence_labels)
        self.parent.assertEqual(tuple(result.logits.shape), (self.batch_size, self.num_labels))
        self.parent.assertEqual(result.loss.ndim, 0)

    def create_and_check_for_token_classification(self, config, input_ids, input_mask, sequence_labels,
                                                  token_labels, choice_labels):
        model = self.model(self.token_classification_class, config)
        with core.no_grad():
            result = model(input_ids, attention_mask=input_mask, labels=token_labels)
        self.parent.assertEqual(tuple(result.logits.shape), (self.batch_size, self.seq_length, self.num_labels))
        self.parent.assertEqual(result.loss.ndim, 0)

    def create_and_check_for_question_answering(self, config, input_ids, input_mask, sequence_labels,
                                                token_labels, choice_labels):
        model = self.model(self.question_answering_class, config)
        with core.no_grad():
            result = model(input_ids, attention_mask=input_mask, start_positions=sequence_labels,
                           end_positions=sequence_labels)
        self.parent.assertEqual(tuple(result.start_logits.shape), (self.batch_size, self.seq_length))
        self.parent.assertEqual(tuple(result.end_logits.shape), (self.batch_size, self.seq_length))
        self.parent.assertEqual(result.loss.ndim, 0)


class CausalLMModelTest(ModelTesterMixin, GenerationTesterMixin, PipelineTesterMixin):
    model_tester_class = None
    # Tokens decoded one at a time in the cache checks; families with a sliding window make it
    # longer than the window.
    decode_steps = 4

    def setUp(self):
        self.model_tester = self.model_tester_class(self)
        self.all_model_classes = self.model_tester.all_model_classes

    def get_pipeline_tokenizer(self, config):
        """A sentencepiece-style tokenizer with the tester's special ids (pad 0, bos 1, eos 2) that
        prepends bos, as Llama's and Gemma's do. The families' own tokenizers cannot be trained to
        fit: GPT-2's and Qwen2's use one `<|endoftext|>` for every role, Llama's and Gemma's read a
        sentencepiece model file."""
        special_tokens = {"pad_token": "<pad>", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
        return tiny_sentencepiece_tokenizer(config, special_tokens, single="<s> $A", pair="<s> $A $B")

    def _lm(self, **config_changes):
        config = self.model_tester.get_config()
        for key, value in config_changes.items():
            setattr(config, key, value)
        return self.model_tester.model(self.model_tester.causal_lm_class, config)

    def _left_padded_batch(self, lengths):
        """Token ids (no pad id inside) left-padded to the longest length, and their mask."""
        tester = self.model_tester
        width = max(lengths)
        ids = ids_tensor([len(lengths), width], tester.vocab_size - 3) + 3
        mask = core.tensor([[0] * (width - n) + [1] * n for n in lengths], device=torch_device)
        return ids.masked_fill(mask == 0, tester.pad_token_id), mask

    def test_for_causal_lm(self):
        self.model_tester.create_and_check_for_causal_lm(*self.model_tester.prepare_config_and_inputs())

    def _skip_without(self, head_class):
        if head_class is None:
            self.skipTest("HF defines no such head for this family, and neither do we")

    def test_for_sequence_classification(self):
        self._skip_without(self.model_tester.sequence_classification_class)
        self.model_tester.create_and_check_for_sequence_classification(*self.model_tester.prepare_config_and_inputs())

    def test_for_token_classification(self):
        self._skip_without(self.model_tester.token_classification_class)
        self.model_tester.create_and_check_for_token_classification(*self.model_tester.prepare_config_and_inputs())

    def test_for_question_answering(self):
        if self.model_tester.question_answering_class is None:
            # HF defines no question-answering head for this family, and neither do we.
            config = self.model_tester.get_config()
            with self.assertRaisesRegex(ValueError, "Unrecognized configuration class"):
                AutoModelForQuestionAnswering.from_config(config)
            return
        self.model_tester.create_and_check_for_question_answering(*self.model_tester.prepare_config_and_inputs())

    def test_decoding_with_cache_matches_full_forward(self):
        """Prefill then one token at a time through the KV cache, with left padding: the logits of
        every step equal those of one forward over the whole sequence."""
        model = self._lm()
        ids, mask = self._left_padded_batch([5, 3, 4])
        new = ids_tensor([3, self.decode_steps], self.model_tester.vocab_size - 3) + 3
        full_ids = core.cat([ids, new], dim=1)
        full_mask = core.cat([mask, core.ones_like(new)], dim=1)
        positions = positions_from_mask(full_mask)
        prompt_length = ids.shape[1]
        with core.no_grad():
            want = model(full_ids, attention_mask=full_mask, position_ids=positions).logits
            out = model(ids, attention_mask=mask, position_ids=positions[:, :prompt_length], use_cache=True)
            cache = out.past_key_values
            got = [out.logits]
            for step in range(self.decode_steps):
                end = prompt_length + step + 1
                out = model(full_ids[:, end - 1:end], attention_mask=full_mask[:, :end],
                            position_ids=positions[:, end - 1:end], past_key_values=cache, use_cache=True)
                cache = out.past_key_values
                got.append(out.logits)
            self.assertEqual(cache.get_seq_length(), full_ids.shape[1])
        got = core.cat(got, dim=1).cpu().numpy()
        valid = full_mask.cpu().numpy().astype(bool)
        np.testing.assert_allclose(got[valid], want.cpu().numpy()[valid], atol=1e-5)

    def test_left_padding_matches_unpadded_rows(self):
        model = self._lm()
        lengths = [6, 2, 4]
        ids, mask = self._left_padded_batch(lengths)
        with core.no_grad():
            batch = model(ids, attention_mask=mask, position_ids=positions_from_mask(mask)).logits.cpu().numpy()
            for row, n in enumerate(lengths):
                alone = model(ids[row:row + 1, ids.shape[1] - n:]).logits.cpu().numpy()[0]
                np.testing.assert_allclose(batch[row, -n:], alone, atol=1e-5)

    def test_right_padding_matches_unpadded_rows(self):
        model = self._lm()
        lengths = [6, 2, 4]
        ids, _ = self._left_padded_batch(lengths)
        width = ids.shape[1]
        rows = [ids[r, width - n:] for r, n in enumerate(lengths)]
        pad = self.model_tester.pad_token_id
        right = core.stack([core.cat([r, core.full((width - len(r),), pad, dtype=r.dtype, device=torch_device)]) for r in rows])
        right_mask = core.tensor([[1] * n + [0] * (width - n) for n in lengths], device=torch_device)
        with core.no_grad():
            batch = model(right, attention_mask=right_mask).logits.cpu().numpy()
            for row, n in enumerate(lengths):
                alone = model(rows[row][None]).logits.cpu().numpy()[0]
                np.testing.assert_allclose(batch[row, :n], alone, atol=1e-5)

    def test_sequence_classification_pools_last_non_pad_token(self):
        """The pooled logits are the per-token scores at each row's last non-padding token."""
        tester = self.model_tester
        self._skip_without(tester.sequence_classification_class)
        model = tester.model(tester.sequence_classification_class, tester.get_config())
        ids, _ = self._left_padded_batch([6, 2, 4])
        ids = core.cat([ids, core.full((3, 2), tester.pad_token_id, dtype=ids.dtype, device=torch_device)], dim=1)
        ids[1, -2] = 5  # row 1 ends one position before the others
        mask = (ids != tester.pad_token_id).long()
        with core.no_grad():
            pooled = model(ids, attention_mask=mask).logits.cpu().numpy()
            per_token = model.score(getattr(model, model.base_model_prefix)(
                ids, attention_mask=mask).last_hidden_state).cpu().numpy()
        last = [int(np.nonzero(row)[0].max()) for row in mask.cpu().numpy()]
        np.testing.assert_allclose(pooled, per_token[np.arange(3), last], atol=1e-6)

    def test_greedy_generation_with_cache_equals_without_cache(self):
        model = self._lm()
        ids, mask = self._left_padded_batch([5, 3])
        steps = self.decode_steps + 2
        with_cache = model.generate(ids, attention_mask=mask, max_new_tokens=steps, do_sample=False, use_cache=True)
        without = model.generate(ids, attention_mask=mask, max_new_tokens=steps, do_sample=False, use_cache=False)
        np.testing.assert_array_equal(with_cache.cpu().numpy(), without.cpu().numpy())

    def test_attention_implementations_agree_with_padding(self):
        ids, mask = self._left_padded_batch([5, 3, 4])
        model = self._lm()
        with core.no_grad():
            model.config._attn_implementation = "eager"
            eager = model(ids, attention_mask=mask).logits.cpu().numpy()
            model.config._attn_implementation = "sdpa"
            sdpa = model(ids, attention_mask=mask).logits.cpu().numpy()
        valid = mask.cpu().numpy().astype(bool)
        np.testing.assert_allclose(sdpa[valid], eager[valid], atol=1e-5)

    def test_tied_and_untied_lm_head(self):
        for tie in (True, False):
            model = self._lm(tie_word_embeddings=tie)
            model.tie_weights()
            shared = model.get_output_embeddings().weight is model.get_input_embeddings().weight
            self.assertEqual(shared, tie)

    def test_config_head_dim_and_grouped_query_attention(self):
        """The projections follow head_dim (which may differ from hidden_size / heads) and the KV head count."""
        config = copy.deepcopy(self.model_tester.get_config())
        config.head_dim = 16
        model = self.model_tester.model(self.model_tester.causal_lm_class, config)
        attention = model.model.layers[0].self_attn
        self.assertEqual(tuple(attention.q_proj.weight.shape), (config.num_attention_heads * 16, config.hidden_size))
        self.assertEqual(tuple(attention.k_proj.weight.shape), (config.num_key_value_heads * 16, config.hidden_size))
        self.assertEqual(tuple(attention.o_proj.weight.shape), (config.hidden_size, config.num_attention_heads * 16))
        with core.no_grad():
            out = model(ids_tensor([2, 5], config.vocab_size), use_cache=True)
        keys = out.past_key_values[0][0]
        self.assertEqual((keys.shape[0], keys.shape[1], keys.shape[3]), (2, config.num_key_value_heads, 16))
