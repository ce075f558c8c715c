"""Stopping criteria against Hugging Face's (fixtures), stop strings through the fixture tokenizers."""
import json
import os
import time

import pytest

from mindnlp import core
from mindnlp.transformers import PreTrainedTokenizerFast
from mindnlp.transformers.generation import (
    EosTokenCriteria, MaxLengthCriteria, MaxTimeCriteria, StoppingCriteriaList, StopStringCriteria,
)

from .tiny_lm import FIXTURES

with open(os.path.join(FIXTURES, "criteria.json")) as _fh:
    CASES = json.load(_fh)
TOKENIZERS = os.path.join(FIXTURES, "..", "tokenizers")
_tokenizers = {}


def tokenizer(folder):
    if folder not in _tokenizers:
        _tokenizers[folder] = PreTrainedTokenizerFast.from_pretrained(os.path.join(TOKENIZERS, folder))
    return _tokenizers[folder]


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] in ("eos", "max_length")])
def test_eos_and_max_length_match_transformers(case):
    input_ids = core.tensor(case["input_ids"])
    if case["kind"] == "eos":
        criterion = EosTokenCriteria(case["eos_token_id"])
    else:
        criterion = MaxLengthCriteria(case["max_length"])
    result = criterion(input_ids, None)
    assert result.dtype == core.bool
    assert result.tolist() == case["expected"]


STOP_CASES = [c for c in CASES if c["kind"] == "stop_strings"]


@pytest.mark.parametrize("case", STOP_CASES, ids=[f"{c['tokenizer']}-{c['stop_strings']}" for c in STOP_CASES])
def test_stop_strings_match_transformers(case):
    criterion = StopStringCriteria(tokenizer=tokenizer(case["tokenizer"]), stop_strings=case["stop_strings"])
    results = [bool(criterion(core.tensor([sequence]), None)[0]) for sequence in case["sequences"]]
    assert results == case["expected"]
    # Batched: the same answers, row by row (rows of equal length).
    by_length = {}
    for sequence, expected in zip(case["sequences"], case["expected"]):
        by_length.setdefault(len(sequence), []).append((sequence, expected))
    for rows in by_length.values():
        batch = core.tensor([sequence for sequence, _ in rows])
        assert criterion(batch, None).tolist() == [expected for _, expected in rows]


def test_stop_strings_must_be_given():
    with pytest.raises(ValueError, match="stop_strings"):
        StopStringCriteria(tokenizer=tokenizer("gpt2_bpe"), stop_strings=[])


def test_max_time_and_list():
    input_ids = core.tensor([[1, 2], [3, 4]])
    assert MaxTimeCriteria(max_time=100.0)(input_ids, None).tolist() == [False, False]
    assert MaxTimeCriteria(max_time=0.5, initial_timestamp=time.time() - 1)(input_ids, None).tolist() == [True, True]
    criteria = StoppingCriteriaList([MaxLengthCriteria(5), EosTokenCriteria(4)])
    assert criteria(input_ids, None).tolist() == [False, True]
    assert criteria.max_length == 5
    assert StoppingCriteriaList([EosTokenCriteria(4)]).max_length is None
