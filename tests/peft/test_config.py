"""LoraConfig: HF peft's fields and defaults, adapter_config.json round trips, and errors."""
import json
import os
import warnings

import pytest

from mindnlp import peft
from mindnlp.peft.tuners.tuners_utils import check_target_module_exists

from .testing_common import FIXTURES, load_expected


def test_defaults_match_hf_peft():
    ours = peft.LoraConfig().to_dict()
    theirs = load_expected()["lora_config_defaults"]
    for key, value in ours.items():
        assert value == theirs[key], key
    # every field HF peft has that we lack is one of the features we refuse unless left at its default
    from mindnlp.peft.tuners.lora.config import _UNSUPPORTED_FIELD_DEFAULTS
    assert set(theirs) - set(ours) <= set(_UNSUPPORTED_FIELD_DEFAULTS) | {"runtime_config"}


def test_save_and_load_round_trip(tmp_path):
    config = peft.LoraConfig(r=4, lora_alpha=16, target_modules=["q", "v"], rank_pattern={"q": 2},
                             task_type="CAUSAL_LM", use_dora=True)
    config.save_pretrained(tmp_path)
    with open(tmp_path / "adapter_config.json") as file:
        saved = json.load(file)
    assert saved["target_modules"] == ["q", "v"] and saved["peft_type"] == "LORA"
    loaded = peft.PeftConfig.from_pretrained(tmp_path)
    assert isinstance(loaded, peft.LoraConfig)
    assert loaded.to_dict() == config.to_dict()


def test_loads_every_hf_fixture_config():
    for name in ("bert_rank_pattern", "mlp_regex_rslora", "llama_dora", "conv"):
        config = peft.PeftConfig.from_pretrained(os.path.join(FIXTURES, name))
        with open(os.path.join(FIXTURES, name, "adapter_config.json")) as file:
            original = json.load(file)
        assert config.r == original["r"] and config.use_dora == original["use_dora"]


def test_unknown_keys_from_newer_versions_are_dropped_with_a_warning(tmp_path):
    with open(os.path.join(FIXTURES, "mlp_lin0", "adapter_config.json")) as file:
        data = json.load(file)
    data["a_future_option"] = 3
    with open(tmp_path / "adapter_config.json", "w") as file:
        json.dump(data, file)
    with pytest.warns(UserWarning, match=r"Unexpected keyword arguments \['a_future_option'\]"):
        config = peft.LoraConfig.from_pretrained(tmp_path)
    assert config.r == data["r"]


def test_known_but_unsupported_features_are_refused(tmp_path):
    with open(os.path.join(FIXTURES, "mlp_lin0", "adapter_config.json")) as file:
        data = json.load(file)
    data["lora_bias"] = True
    with open(tmp_path / "adapter_config.json", "w") as file:
        json.dump(data, file)
    with pytest.raises(NotImplementedError, match="lora_bias=True"):
        peft.LoraConfig.from_pretrained(tmp_path)


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(target_modules="q", layers_to_transform=[0]), ValueError, "cannot be used when `target_modules` is a str"),
    (dict(target_modules=["q"], layers_pattern="layers"), ValueError, "`layers_to_transform` must also"),
    (dict(bias="some"), NotImplementedError, "Requested bias: some"),
    (dict(init_lora_weights="loftq"), ValueError, "init_lora_weights='loftq' is not supported"),
    (dict(task_type="TRANSLATION"), ValueError, "Invalid task type"),
])
def test_invalid_configs(kwargs, error, message):
    with pytest.raises(error, match=message):
        peft.LoraConfig(**kwargs)


@pytest.mark.parametrize("config, key, expected", [
    (dict(target_modules=["query"]), "bert.encoder.layer.0.attention.self.query", True),
    (dict(target_modules=["query"]), "bert.encoder.layer.0.attention.self.query_proj", False),
    (dict(target_modules=["lin0"]), "lin0", True),
    (dict(target_modules=r".*\.self\.(query|key)"), "encoder.layer.1.attention.self.key", True),
    (dict(target_modules=r".*\.self\.(query|key)"), "encoder.layer.1.attention.self.value", False),
    (dict(target_modules=["query"], layers_to_transform=[1], layers_pattern="layer"),
     "encoder.layer.1.attention.self.query", True),
    (dict(target_modules=["query"], layers_to_transform=[1], layers_pattern="layer"),
     "encoder.layer.0.attention.self.query", False),
    (dict(target_modules=["query"], layers_to_transform=0), "model.layers.0.query", True),
    (dict(target_modules=["query"], exclude_modules=["self.query"]), "layer.0.self.query", False),
    (dict(target_modules=["dense"], modules_to_save=["pooler"]), "bert.pooler.dense", False),
])
def test_target_module_matching(config, key, expected):
    assert check_target_module_exists(peft.LoraConfig(**config), key) == expected


def test_unmatched_targets_raise():
    from .cases import make_case

    with pytest.raises(ValueError, match="Target modules .*nothing.* not found in the base model"):
        peft.get_peft_model(make_case("mlp").make_model(), peft.LoraConfig(target_modules=["nothing"]))


def test_unsupported_layer_type_raises():
    from .cases import make_case

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="is not supported"):
            peft.get_peft_model(make_case("mlp").make_model(), peft.LoraConfig(target_modules=["relu"]))
