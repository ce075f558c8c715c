"""GPT-2 against the outputs HF transformers recorded (tests/fixtures/gpt2/, made by
tests/fixtures/make_gpt2_fixtures.py): logits of unpadded, left- and right-padded batches,
losses, greedy and beam-search generations token for token, the processed scores of sampling,
and every head. Logits are compared with eager and with sdpa attention."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import (AutoModelForCausalLM, GPT2DoubleHeadsModel, GPT2ForQuestionAnswering,
                                  GPT2ForSequenceClassification, GPT2ForTokenClassification, GPT2LMHeadModel)

from ..decoder_parity import _valid_rows, assert_close, positions_from_mask

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "gpt2")
PAD = 0
CASES = ("gpt2", "gpt2_scaled", "gpt2_unscaled")


class Case:
    def __init__(self, name):
        self.name = name
        self.dir = os.path.join(FIXTURES, name)
        self.model_dir = os.path.join(self.dir, "model")
        with np.load(os.path.join(self.dir, "expected.npz")) as data:
            self.expected = {k: data[k] for k in data.files}
        with open(os.path.join(self.dir, "expected.json"), encoding="utf-8") as fh:
            self.info = json.load(fh)
        self.prompts = self.info["prompts"]

    def load(self, cls=GPT2LMHeadModel, attn_implementation="eager", **kwargs):
        return cls.from_pretrained(self.model_dir, attn_implementation=attn_implementation, **kwargs)

    def padded(self, side):
        width = max(len(p) for p in self.prompts)
        ids, mask = [], []
        for p in self.prompts:
            pad = width - len(p)
            ids.append([PAD] * pad + p if side == "left" else p + [PAD] * pad)
            mask.append([0] * pad + [1] * len(p) if side == "left" else [1] * len(p) + [0] * pad)
        return core.tensor(ids), core.tensor(mask)


# reorder_and_upcast_attn exists only in eager attention (HF ignores it under sdpa, and the
# fixture ran eager), so that case is compared in eager only.
CASE_ATTENTION = [(name, attn) for name in CASES for attn in ("eager", "sdpa")
                  if not (name == "gpt2_scaled" and attn == "sdpa")]
_LOADED = {}


def _case(name):
    if name not in _LOADED:
        _LOADED[name] = Case(name)
    return _LOADED[name]


@pytest.fixture(params=CASES)
def case(request):
    return _case(request.param)


@pytest.fixture
def main_case():
    return _case("gpt2")


@pytest.mark.parametrize("name, attn", CASE_ATTENTION)
def test_unpadded_logits(name, attn):
    case = _case(name)
    model = case.load(attn_implementation=attn)
    for row, prompt in enumerate(case.prompts):
        with core.no_grad():
            logits = model(core.tensor([prompt])).logits[0]
        assert_close(logits, case.expected[f"unpadded/{row}"], f"{case.name} row {row}")


@pytest.mark.parametrize("name, attn", CASE_ATTENTION)
def test_left_padded_logits_equal_hf_and_unpadded_rows(name, attn):
    case = _case(name)
    ids, mask = case.padded("left")
    model = case.load(attn_implementation=attn)
    with core.no_grad():
        explicit = model(ids, attention_mask=mask, position_ids=positions_from_mask(mask)).logits.numpy()
        implicit = model(ids, attention_mask=mask).logits.numpy()
    theirs = _valid_rows(case.expected["left_padded"], mask)
    for logits in (explicit, implicit):
        for row, ours in enumerate(_valid_rows(logits, mask)):
            assert_close(ours, theirs[row], f"{case.name} left-padded row {row} vs HF")
            assert_close(ours, case.expected[f"unpadded/{row}"], f"{case.name} left-padded row {row} vs unpadded")


@pytest.mark.parametrize("name, attn", CASE_ATTENTION)
def test_right_padded_logits_and_loss(name, attn):
    case = _case(name)
    ids, mask = case.padded("right")
    with core.no_grad():
        out = case.load(attn_implementation=attn)(ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100))
    theirs = _valid_rows(case.expected["right_padded"], mask)
    for row, ours in enumerate(_valid_rows(out.logits.numpy(), mask)):
        assert_close(ours, theirs[row], f"{case.name} right-padded row {row} vs HF")
        assert_close(ours, case.expected[f"unpadded/{row}"], f"{case.name} right-padded row {row} vs unpadded")
    assert_close(out.loss, case.expected["loss"], f"{case.name} loss")


def test_greedy_generation(case):
    ids, mask = case.padded("left")
    model = case.load()
    batch = model.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=10, pad_token_id=PAD)
    np.testing.assert_array_equal(batch.numpy(), case.expected["greedy"])
    single = model.generate(core.tensor([case.prompts[0]]), do_sample=False, max_new_tokens=10, pad_token_id=PAD)
    np.testing.assert_array_equal(single.numpy(), case.expected["greedy_single"])


def test_beam_search_generation(case):
    """num_beams 3, num_return_sequences 2, length_penalty, no_repeat_ngram_size, repetition_penalty."""
    ids, mask = case.padded("left")
    out = case.load().generate(ids, attention_mask=mask, pad_token_id=PAD, return_dict_in_generate=True,
                               output_scores=True, **case.info["beam"])
    np.testing.assert_array_equal(out.sequences.numpy(), case.expected["beam/sequences"])
    assert_close(out.sequences_scores, case.expected["beam/sequences_scores"], f"{case.name} beam scores")


def test_sampling_processed_scores_along_hf_samples(case):
    """For every prefix HF sampled, generate() with the same settings processes our logits
    (repetition penalty, temperature, top-k, top-p) into HF's scores: same tokens kept, same values."""
    sequences = core.tensor(case.expected["sample/sequences"])
    ids, mask = case.padded("left")
    settings = dict(case.info["sampling"], max_new_tokens=1)
    model = case.load()
    for step, expected in enumerate(case.expected["sample/scores"]):
        prefix = sequences[:, : ids.shape[1] + step]
        prefix_mask = core.cat([mask, core.ones((mask.shape[0], step), dtype=mask.dtype)], dim=1)
        out = model.generate(prefix, attention_mask=prefix_mask, pad_token_id=PAD, return_dict_in_generate=True,
                             output_scores=True, **settings)
        scores = out.scores[0].numpy()
        kept = np.isfinite(expected)
        assert np.array_equal(np.isfinite(scores), kept), f"{case.name} step {step}: different tokens filtered"
        assert_close(scores[kept], expected[kept], f"{case.name} sampling step {step}")


def test_auto_class_loads_the_lm_head_model(main_case):
    model = AutoModelForCausalLM.from_pretrained(main_case.model_dir)
    assert isinstance(model, GPT2LMHeadModel)
    assert model.lm_head.weight is model.transformer.wte.weight


def _heads(case):
    return load_safetensors(os.path.join(case.dir, "heads.safetensors"))


def test_sequence_classification(main_case):
    model = main_case.load(GPT2ForSequenceClassification, num_labels=3, pad_token_id=PAD)
    with core.no_grad():
        model.score.weight.copy_(_heads(main_case)["seq_cls/score.weight"])
        for side in ("left", "right"):
            ids, mask = main_case.padded(side)
            out = model(ids, attention_mask=mask, labels=core.tensor([2, 0, 1]))
            assert_close(out.logits, main_case.expected[f"seq_cls/{side}/logits"], f"{side} logits")
            assert_close(out.loss, main_case.expected[f"seq_cls/{side}/loss"], f"{side} loss")


def test_token_classification(main_case):
    model = main_case.load(GPT2ForTokenClassification, num_labels=5)
    heads = _heads(main_case)
    ids, mask = main_case.padded("right")
    with core.no_grad():
        model.classifier.weight.copy_(heads["tok_cls/classifier.weight"])
        model.classifier.bias.copy_(heads["tok_cls/classifier.bias"])
        out = model(ids, attention_mask=mask, labels=(ids % 5).masked_fill(mask == 0, -100))
    assert_close(out.logits, main_case.expected["tok_cls/logits"], "token logits")
    assert_close(out.loss, main_case.expected["tok_cls/loss"], "token loss")


def test_question_answering(main_case):
    model = main_case.load(GPT2ForQuestionAnswering)
    heads = _heads(main_case)
    ids, mask = main_case.padded("right")
    with core.no_grad():
        model.qa_outputs.weight.copy_(heads["qa/qa_outputs.weight"])
        model.qa_outputs.bias.copy_(heads["qa/qa_outputs.bias"])
        out = model(ids, attention_mask=mask, start_positions=core.tensor([3, 1, 0]),
                    end_positions=core.tensor([7, 4, 2]))
    assert_close(out.start_logits, main_case.expected["qa/start_logits"], "start logits")
    assert_close(out.end_logits, main_case.expected["qa/end_logits"], "end logits")
    assert_close(out.loss, main_case.expected["qa/loss"], "qa loss")


def test_double_heads(main_case):
    model = main_case.load(GPT2DoubleHeadsModel)
    heads = _heads(main_case)
    expected = main_case.expected
    choices = core.tensor(expected["double/input_ids"])
    with core.no_grad():
        model.multiple_choice_head.summary.weight.copy_(heads["double/summary.weight"])
        model.multiple_choice_head.summary.bias.copy_(heads["double/summary.bias"])
        out = model(choices, mc_token_ids=core.tensor(expected["double/mc_token_ids"]), labels=choices,
                    mc_labels=core.tensor([1, 0]))
    assert_close(out.logits, expected["double/logits"], "double-heads LM logits")
    assert_close(out.mc_logits, expected["double/mc_logits"], "multiple-choice logits")
    assert_close(out.loss, expected["double/loss"], "LM loss")
    assert_close(out.mc_loss, expected["double/mc_loss"], "multiple-choice loss")
