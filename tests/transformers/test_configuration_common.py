"""Every model config against what transformers recorded for the same model type
(tests/fixtures/configs/<model_type>.json, made by tests/fixtures/make_config_fixtures.py).

The generic config behaviour (json round trips, num_labels, common keyword arguments) is what
transformers' own `ConfigTester` checks in its test files, which run against mindnlp in CI; what
only a reference run can tell is whether our defaults, overrides and files equal transformers'.
"""
import copy
import json
import os
import tempfile

import pytest

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "configs")
MODEL_TYPES = ["bert", "distilbert", "gemma", "gpt2", "llama", "mistral", "qwen2", "roberta", "xlm-roberta"]


def load_fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def jsonable(obj):
    """`obj` as it reads back from JSON: int keys become strings, tuples lists."""
    return json.loads(json.dumps(obj))


def differing(ours, theirs):
    """{key: (mindnlp value, transformers value)} for every key where the two dicts differ."""
    ours = jsonable(ours)
    return {key: (ours.get(key), theirs.get(key)) for key in set(ours) | set(theirs) if ours.get(key) != theirs.get(key)}


@pytest.fixture(params=MODEL_TYPES)
def recorded(request):
    from mindnlp import transformers

    fixture = load_fixture(f"{request.param}.json")
    return request.param, fixture, getattr(transformers, fixture["class_name"])


def test_default_and_override_dicts_equal_transformers(recorded):
    _, fixture, config_class = recorded
    default = config_class()
    assert differing(default.to_dict(), fixture["default_to_dict"]) == {}
    assert differing(default.to_diff_dict(), fixture["default_to_diff_dict"]) == {}
    overridden = config_class(**copy.deepcopy(fixture["overrides"]))
    assert differing(overridden.to_dict(), fixture["overrides_to_dict"]) == {}
    assert differing(overridden.to_diff_dict(), fixture["overrides_to_diff_dict"]) == {}


def test_loads_the_file_transformers_saved(recorded):
    model_type, fixture, config_class = recorded
    config = config_class.from_pretrained(os.path.join(FIXTURES, "hf_saved", model_type))
    assert differing(config.to_dict(), fixture["overrides_to_dict"]) == {}


def test_saves_the_file_transformers_loaded(recorded):
    # The fixture script loaded this exact file with transformers and found the same to_dict.
    _, fixture, config_class = recorded
    assert fixture["hf_loaded_mindnlp_save_differences"] == []
    assert fixture["hf_loaded_mindnlp_save_class"] == config_class.__name__
    config = config_class(**copy.deepcopy(fixture["overrides"]))
    with tempfile.TemporaryDirectory() as tmpdirname:
        config.save_pretrained(tmpdirname)
        with open(os.path.join(tmpdirname, "config.json"), encoding="utf-8") as f:
            assert f.read() == fixture["mindnlp_saved_config_json"]
