"""Parity checks of decoder-only LMs against the outputs HF transformers recorded.

The fixtures (tests/fixtures/decoders/<case>/, made by tests/fixtures/make_decoder_fixtures.py)
hold a tiny checkpoint per case and HF's logits, losses and generations on fixed prompts.
A family's test class derives from `DecoderParityMixin` (and `QuestionAnsweringParityMixin`
where HF has that head) and defines a `case` fixture over its fixture cases; logits are
compared with eager and with sdpa attention.
Every check loads the checkpoint afresh, as the fixture script did, because dynamic RoPE
keeps state between calls.
"""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "decoders")
ATOL = 1e-4
PAD = 0


class Case:
    def __init__(self, name, module, prefix):
        self.name = name
        self.dir = os.path.join(FIXTURES, name)
        self.module = module
        self.prefix = prefix
        with np.load(os.path.join(self.dir, "expected.npz")) as data:
            self.expected = {k: data[k] for k in data.files}
        with open(os.path.join(self.dir, "expected.json"), encoding="utf-8") as fh:
            self.info = json.load(fh)
        self.prompts = self.info["prompts"]

    def load(self, head="ForCausalLM", attn_implementation="sdpa", directory="model", **kwargs):
        cls = getattr(self.module, f"{self.prefix}{head}")
        return cls.from_pretrained(os.path.join(self.dir, directory), attn_implementation=attn_implementation,
                                   **kwargs)

    def heads(self):
        return load_safetensors(os.path.join(self.dir, "heads.safetensors"))

    @property
    def is_dynamic_rope(self):
        """Whether the frequencies depend on the longest position of the call (dynamic and
        LongRoPE), so a padded row need not equal the row alone."""
        return "dynamic" in self.name or "longrope" in self.name

    def padded(self, side):
        width = max(len(p) for p in self.prompts)
        ids, mask = [], []
        for p in self.prompts:
            pad = width - len(p)
            ids.append([PAD] * pad + p if side == "left" else p + [PAD] * pad)
            mask.append([0] * pad + [1] * len(p) if side == "left" else [1] * len(p) + [0] * pad)
        return core.tensor(ids), core.tensor(mask)


def positions_from_mask(mask):
    """HF generate's position ids: cumsum(mask) - 1, with 0 at padding."""
    return (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)


def assert_close(actual, expected, what, atol=ATOL):
    actual = actual.numpy() if hasattr(actual, "numpy") else np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    error = float(np.max(np.abs(actual - expected))) if actual.size else 0.0
    assert error <= atol, f"{what}: max |diff| {error:.3g} > {atol}"


def _valid_rows(logits, mask):
    """Per row, the logits at its non-padding positions."""
    mask = np.asarray(mask.numpy(), dtype=bool)
    return [np.asarray(logits)[r][mask[r]] for r in range(mask.shape[0])]


def _sampling_processors(settings):
    from mindnlp.transformers.generation.logits_process import (
        LogitsProcessorList,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    return LogitsProcessorList([TemperatureLogitsWarper(settings["temperature"]),
                                TopKLogitsWarper(settings["top_k"]), TopPLogitsWarper(settings["top_p"])])


def _finite_close(actual, expected, what):
    """Processed logits: the same tokens filtered out (-inf), the kept ones within ATOL."""
    actual = actual.numpy()
    kept = np.isfinite(expected)
    assert np.array_equal(np.isfinite(actual), kept), f"{what}: different tokens were filtered"
    assert_close(actual[kept], expected[kept], what)


class DecoderParityMixin:
    """Parity tests of a family; the subclass defines a `case` fixture parametrised over its cases."""

    @pytest.fixture(params=["eager", "sdpa"])
    def attn(self, request):
        return request.param

    def test_unpadded_logits(self, case, attn):
        for row, prompt in enumerate(case.prompts):
            with core.no_grad():
                logits = case.load(attn_implementation=attn)(core.tensor([prompt])).logits[0]
            assert_close(logits, case.expected[f"unpadded/{row}"], f"{case.name} row {row}")

    def test_left_padded_logits(self, case, attn):
        ids, mask = case.padded("left")
        with core.no_grad():
            logits = case.load(attn_implementation=attn)(ids, attention_mask=mask,
                                                         position_ids=positions_from_mask(mask)).logits.numpy()
        ours, theirs = _valid_rows(logits, mask), _valid_rows(case.expected["left_padded"], mask)
        for row in range(len(case.prompts)):
            assert_close(ours[row], theirs[row], f"{case.name} left-padded row {row} vs HF")
            if not case.is_dynamic_rope:
                assert_close(ours[row], case.expected[f"unpadded/{row}"],
                             f"{case.name} left-padded row {row} vs unpadded")

    def test_right_padded_logits_and_loss(self, case, attn):
        ids, mask = case.padded("right")
        labels = ids.masked_fill(mask == 0, -100)
        with core.no_grad():
            out = case.load(attn_implementation=attn)(ids, attention_mask=mask, labels=labels)
        ours, theirs = _valid_rows(out.logits.numpy(), mask), _valid_rows(case.expected["right_padded"], mask)
        for row in range(len(case.prompts)):
            assert_close(ours[row], theirs[row], f"{case.name} right-padded row {row} vs HF")
            if not case.is_dynamic_rope:
                assert_close(ours[row], case.expected[f"unpadded/{row}"],
                             f"{case.name} right-padded row {row} vs unpadded")
        assert_close(out.loss, case.expected["loss"], f"{case.name} loss")

    def test_greedy_generation(self, case):
        ids, mask = case.padded("left")
        batch = case.load().generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=10, pad_token_id=PAD)
        np.testing.assert_array_equal(batch.numpy(), case.expected["greedy"])
        single = case.load().generate(core.tensor([case.prompts[0]]), do_sample=False, max_new_tokens=10,
                                      pad_token_id=PAD)
        np.testing.assert_array_equal(single.numpy(), case.expected["greedy_single"])

    def test_beam_search_generation(self, case):
        ids, mask = case.padded("left")
        out = case.load().generate(ids, attention_mask=mask, pad_token_id=PAD, return_dict_in_generate=True,
                                   output_scores=True, **case.info["beam"])
        np.testing.assert_array_equal(out.sequences.numpy(), case.expected["beam/sequences"])
        assert_close(out.sequences_scores, case.expected["beam/sequences_scores"], f"{case.name} beam scores")

    def test_sampling_first_step_distribution(self, case):
        """generate() with sampling: the processed logits of the first step equal HF's."""
        ids, mask = case.padded("left")
        settings = dict(case.info["sampling"], max_new_tokens=1)
        out = case.load().generate(ids, attention_mask=mask, pad_token_id=PAD, return_dict_in_generate=True,
                                   output_scores=True, **settings)
        _finite_close(out.scores[0], case.expected["sample/scores"][0], f"{case.name} first sampling step")

    def test_sampling_distributions_along_hf_samples(self, case):
        """For each prefix HF sampled, our logits through the same warpers equal HF's processed logits.

        Not for dynamic RoPE, whose cached decode (HF's run) and full re-forward (ours here)
        use different frequencies by design.
        """
        sequences = core.tensor(case.expected["sample/sequences"])
        ids, mask = case.padded("left")
        processors = _sampling_processors(case.info["sampling"])
        model = case.load()
        steps = case.expected["sample/scores"] if not case.is_dynamic_rope else case.expected["sample/scores"][:1]
        for step, expected in enumerate(steps):
            prefix = sequences[:, : ids.shape[1] + step]
            full_mask = core.cat([mask, core.ones((mask.shape[0], step), dtype=mask.dtype)], dim=1)
            with core.no_grad():
                logits = model(prefix, attention_mask=full_mask, position_ids=positions_from_mask(full_mask),
                               logits_to_keep=1).logits[:, -1, :]
            _finite_close(processors(prefix, logits), expected, f"{case.name} sampling step {step}")

    def test_sequence_classification(self, case):
        if "seq_cls/left/logits" not in case.expected:
            pytest.skip(f"no classification-head fixtures for {case.name} (HF ships none, or the model tests cover it)")
        model = case.load("ForSequenceClassification", num_labels=3)
        with core.no_grad():
            model.score.weight.copy_(case.heads()["seq_cls/score.weight"])
            for side in ("left", "right"):
                ids, mask = case.padded(side)
                out = model(ids, attention_mask=mask, labels=core.tensor([2, 0, 1]))
                assert_close(out.logits, case.expected[f"seq_cls/{side}/logits"], f"{case.name} {side} logits")
                assert_close(out.loss, case.expected[f"seq_cls/{side}/loss"], f"{case.name} {side} loss")

    def test_token_classification(self, case):
        if "tok_cls/logits" not in case.expected:
            pytest.skip(f"no classification-head fixtures for {case.name} (HF ships none, or the model tests cover it)")
        model = case.load("ForTokenClassification", num_labels=5)
        heads = case.heads()
        ids, mask = case.padded("right")
        labels = (ids % 5).masked_fill(mask == 0, -100)
        classifier = getattr(model, model.classifier_name)
        with core.no_grad():
            classifier.weight.copy_(heads["tok_cls/score.weight"])
            classifier.bias.copy_(heads["tok_cls/score.bias"])
            out = model(ids, attention_mask=mask, labels=labels)
        for row, (ours, theirs) in enumerate(zip(_valid_rows(out.logits.numpy(), mask),
                                                 _valid_rows(case.expected["tok_cls/logits"], mask))):
            assert_close(ours, theirs, f"{case.name} token logits row {row}")
        assert_close(out.loss, case.expected["tok_cls/loss"], f"{case.name} token loss")


class QuestionAnsweringParityMixin:
    """For families with a question-answering head; its checkpoint is saved on its own (`qa/`)."""

    def test_question_answering(self, case):
        ids, mask = case.padded("right")
        with core.no_grad():
            out = case.load("ForQuestionAnswering", directory="qa")(
                ids, attention_mask=mask, start_positions=core.tensor([3, 1, 0]), end_positions=core.tensor([7, 4, 2]))
        for name in ("start_logits", "end_logits"):
            for row, (ours, theirs) in enumerate(zip(_valid_rows(out[name].numpy(), mask),
                                                     _valid_rows(case.expected[f"qa/{name}"], mask))):
                assert_close(ours, theirs, f"{case.name} {name} row {row}")
        assert_close(out.loss, case.expected["qa/loss"], f"{case.name} qa loss")
