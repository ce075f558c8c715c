"""Pipelines against Hugging Face's, call by call, on the tiny encoder fixtures.

tests/fixtures/make_encoder_fixtures.py ran HF's pipelines (transformers 5.x; question-answering
and `return_all_scores` under 4.57, the last release that had them) on the fixture models
with the head weights HF initialised, and recorded each call and its output. Here the same
calls run on our models with the same weights: scores and features must agree within 1e-4,
everything else (labels, tokens, words, offsets, answers, nesting) exactly.
"""
import importlib
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer, pipeline

from ..encoder_fixtures import ATOL, ROOT, EncoderFixtures

MODULES = {"distilbert": "mindnlp.transformers.models.distilbert.modeling_distilbert",
           "roberta": "mindnlp.transformers.models.roberta.modeling_roberta"}


def _recorded_calls():
    calls = []
    for family in MODULES:
        for name in ("pipelines.json", "pipelines_v4.json"):
            path = os.path.join(ROOT, family, name)
            with open(path, encoding="utf-8") as fh:
                records = json.load(fh)["calls"]
            calls += [pytest.param(family, record, id=f"{family}-{record['task']}-{i}-{name.split('.')[0]}")
                      for i, record in enumerate(records)]
    return calls


_MODELS = {}


def _model(family, case):
    """Our model of a fixture case (cached: several calls share one)."""
    if (family, case) not in _MODELS:
        model, _ = EncoderFixtures(family).load_case(importlib.import_module(MODULES[family]), case)
        _MODELS[family, case] = model
    return _MODELS[family, case]


def plain(value):
    """Our outputs in the JSON form the fixture script wrote HF's in."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, core.Tensor):
        return {"tensor": value.tolist(), "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return value.item()
    return value


def assert_same(got, want, path="output"):
    """Floats within ATOL, everything else equal, with the same structure."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), f"{path}: keys {got!r} != {want!r}"
        for key in want:
            assert_same(got[key], want[key], f"{path}.{key}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        if want and all(isinstance(w, float) for w in want):
            np.testing.assert_allclose(got, want, atol=ATOL, rtol=0, err_msg=path)
            return
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, float):
        assert isinstance(got, (float, int)), f"{path}: {got!r} is not a number"
        assert abs(got - want) <= ATOL, f"{path}: {got} != {want}"
    else:
        assert type(got) is type(want) and got == want, f"{path}: {got!r} != {want!r}"


@pytest.mark.parametrize("family, record", _recorded_calls())
def test_pipeline_call_matches_hf(family, record):
    tokenizer = AutoTokenizer.from_pretrained(EncoderFixtures(family).checkpoint)
    pipe = pipeline(record["task"], model=_model(family, record["case"]), tokenizer=tokenizer)
    kwargs = dict(record["call"])
    args = (kwargs.pop("inputs"),) if "inputs" in kwargs else ()
    assert_same(plain(pipe(*args, **kwargs)), record["output"])
