"""Logits processors against Hugging Face's on the same random (input_ids, scores) (fixtures)."""
import json
import math
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.generation import logits_process

from .tiny_lm import FIXTURES

with open(os.path.join(FIXTURES, "processors.json")) as _fh:
    SPECS = json.load(_fh)
ARRAYS = np.load(os.path.join(FIXTURES, "processors.npz"))


def prefix_allowed_tokens(batch_id, sent):
    """The constraint used by the fixture script."""
    last = int(sent[-1])
    return [batch_id, (last * 3) % 32, (last + 5) % 32]


def build(spec, input_ids):
    kwargs = dict(spec["kwargs"])
    kwargs.pop("after_top_k", None)  # the fixture's scores were top-k filtered already
    if isinstance(kwargs.get("prompt_ignore_length"), list):
        kwargs["prompt_ignore_length"] = core.tensor(kwargs["prompt_ignore_length"])
    if kwargs.get("encoder_input_ids") == "input_ids":
        kwargs["encoder_input_ids"] = input_ids[::2] if "NGram" in spec["class"] else input_ids
    if spec["class"] == "PrefixConstrainedLogitsProcessor":
        kwargs["prefix_allowed_tokens_fn"] = prefix_allowed_tokens
    return getattr(logits_process, spec["class"])(**kwargs)


@pytest.mark.parametrize("spec", SPECS, ids=[f"{s['key']}-{s['class']}" for s in SPECS])
def test_processor_matches_transformers(spec):
    key = spec["key"]
    input_ids = core.tensor(ARRAYS[key + "_input_ids"])
    scores = core.tensor(ARRAYS[key + "_scores"])
    original = scores.numpy().copy()
    processor = build(spec, input_ids)
    result = processor(input_ids, scores)
    expected = ARRAYS[key + "_expected"]
    assert result.shape == tuple(expected.shape)
    assert result.dtype == core.float32
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6, atol=1e-6)
    # Processors return new scores; the input is left as it was.
    np.testing.assert_array_equal(scores.numpy(), original)


def test_processor_list_passes_extra_kwargs_and_checks_them():
    class NeedsTemperature(logits_process.LogitsProcessor):
        def __call__(self, input_ids, scores, temperature):
            return scores / temperature

    processors = logits_process.LogitsProcessorList([NeedsTemperature(), logits_process.TopKLogitsWarper(2)])
    scores = core.tensor([[1.0, 4.0, 2.0, 3.0]])
    out = processors(core.tensor([[0]]), scores, temperature=2.0)
    assert out.tolist() == [[-math.inf, 2.0, -math.inf, 1.5]]
    with pytest.raises(ValueError, match="required parameters"):
        processors(core.tensor([[0]]), scores)


@pytest.mark.parametrize("make, message", [
    (lambda: logits_process.TemperatureLogitsWarper(0.0), "do_sample=False"),
    (lambda: logits_process.TemperatureLogitsWarper(1), "strictly positive float"),
    (lambda: logits_process.TopKLogitsWarper(0), "top_k"),
    (lambda: logits_process.TopPLogitsWarper(1.5), "top_p"),
    (lambda: logits_process.TopPLogitsWarper(0.5, min_tokens_to_keep=0), "min_tokens_to_keep"),
    (lambda: logits_process.MinPLogitsWarper(2.0), "min_p"),
    (lambda: logits_process.TypicalLogitsWarper(1.0), "typical_p"),
    (lambda: logits_process.RepetitionPenaltyLogitsProcessor(0.0), "penalty"),
    (lambda: logits_process.NoRepeatNGramLogitsProcessor(0), "ngram_size"),
    (lambda: logits_process.NoBadWordsLogitsProcessor([]), "non-empty list"),
    (lambda: logits_process.NoBadWordsLogitsProcessor([[1, -2]]), "positive integers"),
    (lambda: logits_process.MinLengthLogitsProcessor(-1, 2), "min_length"),
    (lambda: logits_process.EpsilonLogitsWarper(1.0), "epsilon_cutoff"),
    (lambda: logits_process.EtaLogitsWarper(0.0), "eta_cutoff"),
    (lambda: logits_process.SequenceBiasLogitsProcessor({(1,): 1}), "floats as values"),
])
def test_bad_arguments_raise_like_transformers(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_sequence_bias_rejects_tokens_outside_vocabulary():
    processor = logits_process.SequenceBiasLogitsProcessor({(40,): 1.0})
    with pytest.raises(ValueError, match="vocabulary size is 4"):
        processor(core.tensor([[0]]), core.zeros(1, 4))
