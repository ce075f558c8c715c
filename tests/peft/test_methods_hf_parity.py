"""IA3, LoHa, LoKr, AdaLoRA, prompt tuning, prefix tuning and P-tuning adapters trained and saved by
HF peft load here and give HF peft's outputs; adapters saved here are what HF peft writes and
reads (tests/fixtures/make_peft_methods_fixtures.py records both directions)."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft

from .cases import make_case, run_logits
from .testing_common import FIXTURES

METHODS = os.path.join(FIXTURES, "methods")
CASE_KINDS = {
    "ia3_mlp": "mlp", "ia3_emb_conv1d": "emb_conv1d", "ia3_conv": "conv", "ia3_bert": "bert", "ia3_llama": "llama",
    "loha_mlp": "mlp", "loha_conv": "conv", "loha_bert": "bert",
    "lokr_mlp": "mlp", "lokr_conv": "conv", "lokr_bert": "bert",
    "adalora_mlp": "mlp", "adalora_bert": "bert", "adalora_llama": "llama",
    "prompt_tuning_llama": "llama", "prompt_tuning_bert": "bert", "prefix_tuning_llama": "llama",
    "prefix_tuning_bert": "bert", "p_tuning_llama": "llama", "p_tuning_bert": "bert",
}
MERGEABLE = ("ia3_", "loha_", "lokr_", "adalora_")
# deeper models accumulate more float32 rounding than the toy ones
TOLERANCE = {"bert": 1e-5, "llama": 1e-5}


def _outputs():
    return dict(np.load(os.path.join(METHODS, "outputs.npz")))


def _case(name):
    return make_case(CASE_KINDS[name])


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_hf_adapter_outputs(name):
    case = _case(name)
    outputs = _outputs()
    tolerance = TOLERANCE.get(CASE_KINDS[name], 1e-6)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(METHODS, name))
    # peft's own reload of the file it saved (for prompt tuning on a causal LM: logits on the
    # virtual positions too, as peft returns them)
    np.testing.assert_allclose(run_logits(model, case), outputs[f"{name}/reloaded"], rtol=1e-4, atol=tolerance)
    np.testing.assert_allclose(run_logits(model, case), outputs[f"{name}/active"], rtol=1e-4, atol=1e-4)
    assert list(model.get_nb_trainable_parameters()) == list(outputs[f"{name}/nb_params_loaded"])
    with model.disable_adapter():
        np.testing.assert_allclose(run_logits(model, case), outputs[f"{name}/disabled"], rtol=1e-4, atol=tolerance)
    if name.startswith(MERGEABLE):
        merged = model.merge_and_unload()
        np.testing.assert_allclose(run_logits(merged, case), outputs[f"{name}/merged"], rtol=1e-4, atol=tolerance)


@pytest.mark.parametrize("name", sorted(n for n, kind in CASE_KINDS.items() if kind == "llama"))
def test_causal_lm_generation_matches_hf(name):
    case = _case(name)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(METHODS, name))
    generated = model.generate(input_ids=core.tensor([[2, 14, 35, 61]]), attention_mask=core.ones(1, 4,
                                                                                                  dtype=core.int64),
                               max_new_tokens=5, do_sample=False)
    assert generated.tolist() == _outputs()[f"{name}/generated"].tolist()


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_fresh_adapter_has_hf_parameter_counts(name):
    case = _case(name)
    config = peft.PeftConfig.from_pretrained(os.path.join(METHODS, name))
    config.inference_mode = False
    if getattr(config, "rank_pattern", None) is not None and config.peft_type == "ADALORA":
        config.rank_pattern = None
    if config.task_type == "SEQ_CLS" and config.modules_to_save:
        config.modules_to_save = [m for m in config.modules_to_save if m not in ("classifier", "score")] or None
    model = peft.get_peft_model(case.make_model(), config)
    assert list(model.get_nb_trainable_parameters()) == list(_outputs()[f"{name}/nb_params"])


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_saved_file_and_config_match_hf(name, tmp_path):
    case = _case(name)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(METHODS, name))
    model.save_pretrained(tmp_path)
    ours = core.serialization.load_safetensors(os.path.join(tmp_path, "adapter_model.safetensors"))
    theirs = core.serialization.load_safetensors(os.path.join(METHODS, name, "adapter_model.safetensors"))
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key].dtype == theirs[key].dtype and tuple(ours[key].shape) == tuple(theirs[key].shape), key
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy(), err_msg=key)
    with open(os.path.join(tmp_path, "adapter_config.json")) as file:
        saved = json.load(file)
    with open(os.path.join(METHODS, name, "adapter_config.json")) as file:
        original = json.load(file)
    for key, value in saved.items():
        if key in ("base_model_name_or_path", "auto_mapping"):
            continue
        if isinstance(value, list) and key in ("target_modules", "feedforward_modules", "modules_to_save"):
            assert set(value) == set(original[key]), key
        else:
            assert value == original[key], key
    assert set(original) - set(saved) <= _FIELDS_NOT_IMPLEMENTED, set(original) - set(saved)


# LoRA fields HF peft writes into AdaLoRA configs for LoRA features mindnlp.peft does not have
# (they hold their "off" value in every fixture and are checked on loading by LoraConfig).
_FIELDS_NOT_IMPLEMENTED = {
    "megatron_config", "megatron_core", "trainable_token_indices", "loftq_config", "eva_config", "corda_config",
    "lora_ga_config", "velora_config", "alora_invocation_tokens", "use_qalora", "qalora_group_size",
    "monteclora_config", "layer_replication", "lora_bias", "target_parameters", "use_bdlora", "arrow_config",
    "kasa_config", "ensure_weight_tying",
}


def test_mindnlp_saved_adapters_load_in_hf_peft():
    """Recorded by the fixture script: every case re-saved by mindnlp and loaded by peft gives peft's
    outputs, and adapters trained by mindnlp run in peft as they do here."""
    with open(os.path.join(METHODS, "interop.json")) as file:
        report = json.load(file)
    assert set(report) >= set(CASE_KINDS)
    for name in CASE_KINDS:
        assert report[name]["max_abs_difference"] < 1e-5, name
        assert report[name]["same_safetensors_header"], name
    trained = [name for name in report if name.startswith("mindnlp_")]
    assert len(trained) >= 7
    for name in trained:
        assert report[name]["max_abs_difference"] < 1e-5, name


@pytest.mark.parametrize("name", ["ia3_mlp", "loha_conv", "lokr_mlp", "adalora_bert", "prompt_tuning_llama",
                                  "prefix_tuning_llama", "p_tuning_bert"])
def test_mindnlp_trained_adapter_matches_hf_peft_outputs(name):
    case = _case(name)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(METHODS, f"mindnlp_{name}"))
    np.testing.assert_allclose(run_logits(model, case), _outputs()[f"mindnlp_{name}/peft"], rtol=1e-4, atol=1e-5)
