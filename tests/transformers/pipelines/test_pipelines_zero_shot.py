"""pipeline("zero-shot-classification") against Hugging Face's, call by call.

tests/fixtures/make_zero_shot_fixtures.py ran HF's pipeline on the tiny DistilBERT and RoBERTa
sequence classifiers of tests/fixtures/encoders (HF's head weights, the labels renamed as an NLI
model's): one text and lists of texts, one or several labels, `multi_label` on and off, a custom
hypothesis template, batches of pairs, a premise cut to the tokenizer's limit and a hypothesis
too long for that. The same calls here must rank the labels in the same order, with scores
within 1e-5.
"""
import functools
import json
import os

import numpy as np
import pytest

from mindnlp.transformers import (AutoTokenizer, DistilBertForSequenceClassification, RobertaForSequenceClassification,
                                  pipeline)
from mindnlp.transformers.pipelines import ZeroShotClassificationPipeline

from ..encoder_fixtures import EncoderFixtures

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
MODEL_CLASSES = {"distilbert": DistilBertForSequenceClassification, "roberta": RobertaForSequenceClassification}
SCORE_ATOL = 1e-5

with open(os.path.join(FIXTURES, "zero_shot", "calls.json"), encoding="utf-8") as fh:
    RECORDED = json.load(fh)
CALLS = RECORDED["calls"]


@functools.lru_cache(maxsize=None)
def classifier(family):
    """The family's fixture classifier with HF's head weights and the NLI label names HF used."""
    fixtures = EncoderFixtures(family)
    id2label = {int(i): label for i, label in RECORDED["id2label"][family].items()}
    model = MODEL_CLASSES[family].from_pretrained(fixtures.checkpoint, id2label=id2label,
                                                  label2id={label: i for i, label in id2label.items()})
    result = model.load_state_dict(fixtures.head_weights("seq_cls_single"), strict=False)
    assert not result.unexpected_keys, result.unexpected_keys
    pipe = pipeline("zero-shot-classification", model=model.eval(), tokenizer=AutoTokenizer.from_pretrained(
        fixtures.checkpoint))
    assert isinstance(pipe, ZeroShotClassificationPipeline)
    return pipe


@pytest.mark.parametrize("record", CALLS, ids=[f"{r['family']}-{i}" for i, r in enumerate(CALLS)])
def test_matches_hf_pipeline(record):
    got = classifier(record["family"])(record["inputs"], **record["kwargs"])
    want = record["output"]
    assert isinstance(got, type(want))
    if isinstance(want, dict):
        got, want = [got], [want]
    assert len(got) == len(want)
    for answer, expected in zip(got, want):
        assert sorted(answer) == ["labels", "scores", "sequence"]
        assert answer["sequence"] == expected["sequence"]
        assert answer["labels"] == expected["labels"]
        assert all(isinstance(score, float) for score in answer["scores"])
        np.testing.assert_allclose(answer["scores"], expected["scores"], atol=SCORE_ATOL, rtol=0)


def test_the_recorded_calls_cover_both_entailment_positions_and_truncation():
    """DistilBERT's entailment id is 0 (so contradiction is the last logit), RoBERTa's is 2 (the
    first). Over its limit, a pair loses premise tokens; a pair whose hypothesis alone is over the
    limit is fed whole."""
    assert [classifier(family).entailment_id for family in MODEL_CLASSES] == [0, 2]
    for family in MODEL_CLASSES:
        pipe = classifier(family)
        limit, cut, whole = pipe.tokenizer.model_max_length, 0, 0
        for record in CALLS:
            if record["family"] != family or not isinstance(record["inputs"], str):
                continue
            template = record["kwargs"].get("hypothesis_template", "This example is {}.")
            for label in record["output"]["labels"]:
                pair = [record["inputs"], template.format(label)]
                length = len(pipe.tokenizer(*pair)["input_ids"])
                fed = pipe._tokenize_pair(pair)["input_ids"].shape[1]
                cut += length > limit and fed == limit
                whole += fed == length > limit
        assert (cut, whole) == (2, 1), family
