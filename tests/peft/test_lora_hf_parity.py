"""Adapters trained and saved by HF peft load here and give HF peft's outputs; adapters saved
here are what HF peft writes and reads (tests/fixtures/make_peft_fixtures.py records both)."""
import contextlib
import io
import json
import os
import struct

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft

from .cases import make_case, run_logits
from .testing_common import FIXTURES, load_expected, load_outputs

CASE_KINDS = {
    "mlp_lin0": "mlp", "mlp_bias_all_mts": "mlp", "mlp_lora_only_dora": "mlp", "mlp_regex_rslora": "mlp",
    "emb_conv1d": "emb_conv1d", "emb_dora": "emb_conv1d", "conv": "conv", "conv_dora": "conv",
    "bert_qv": "bert", "bert_all_linear": "bert", "bert_rank_pattern": "bert", "bert_bias_all": "bert",
    "bert_rslora_regex": "bert", "bert_dora": "bert", "bert_layers": "bert", "bert_embedding": "bert",
    "llama_qv": "llama", "llama_all_linear": "llama", "llama_dora": "llama",
}
# float32 outputs of deep models accumulate more rounding than the toy ones
TOLERANCE = {"bert": 1e-5, "llama": 1e-5}


def _case(name):
    return make_case(CASE_KINDS[name])


def _header(path):
    with open(path, "rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        return file.read(length)


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_hf_adapter_outputs(name):
    case = _case(name)
    outputs = load_outputs()
    tolerance = TOLERANCE.get(CASE_KINDS[name], 1e-6)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(FIXTURES, name))
    np.testing.assert_allclose(run_logits(model, case), outputs[f"{name}/active"], rtol=1e-4, atol=tolerance)
    assert list(model.get_nb_trainable_parameters()) == list(outputs[f"{name}/nb_params_loaded"])
    with model.disable_adapter():
        np.testing.assert_allclose(run_logits(model, case), outputs[f"{name}/disabled"], rtol=1e-4, atol=tolerance)
    merged = model.merge_and_unload()
    np.testing.assert_allclose(run_logits(merged, case), outputs[f"{name}/merged"], rtol=1e-4, atol=tolerance)


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_trainable_parameters_match_hf(name):
    """A fresh adapter with the fixture's config: same counts and print_trainable_parameters text."""
    case = _case(name)
    config = peft.LoraConfig.from_pretrained(os.path.join(FIXTURES, name))
    config.inference_mode = False
    if config.task_type == "SEQ_CLS":  # PeftModelForSequenceClassification adds its heads again
        config.modules_to_save = [m for m in config.modules_to_save if m not in ("classifier", "score")] or None
    model = peft.get_peft_model(case.make_model(), config)
    assert list(model.get_nb_trainable_parameters()) == list(load_outputs()[f"{name}/nb_params"])
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        model.print_trainable_parameters()
    assert printed.getvalue() == load_expected()["print_trainable_parameters"][name]


@pytest.mark.parametrize("name", sorted(CASE_KINDS))
def test_saved_file_matches_hf_byte_for_byte_header(name, tmp_path):
    """Same tensor names, dtypes, shapes and layout as the file HF peft wrote for this adapter."""
    case = _case(name)
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(FIXTURES, name))
    model.save_pretrained(tmp_path)
    ours, theirs = tmp_path / "adapter_model.safetensors", os.path.join(FIXTURES, name, "adapter_model.safetensors")
    assert _header(ours) == _header(theirs)
    with open(tmp_path / "adapter_config.json") as file:
        saved = json.load(file)
    with open(os.path.join(FIXTURES, name, "adapter_config.json")) as file:
        original = json.load(file)
    for key, value in saved.items():
        if key in ("target_modules", "exclude_modules") and isinstance(value, list):
            assert sorted(value) == sorted(original[key]), key  # a set, written in hash order by HF peft
        elif key == "modules_to_save" and value is not None:
            # a SEQ_CLS wrapper appends its heads again on loading, in HF peft as well
            assert set(value) == set(original[key]), key
        elif key not in ("base_model_name_or_path", "auto_mapping"):
            assert value == original[key], key


def test_mindnlp_saved_adapters_load_in_hf_peft():
    """Recorded by the fixture script: each adapter re-saved by mindnlp, loaded by HF peft."""
    with open(os.path.join(FIXTURES, "interop.json")) as file:
        report = json.load(file)
    checked = [name for name, entry in report.items() if "skipped" not in entry]
    assert set(checked) >= {name for name, kind in CASE_KINDS.items() if kind != "llama"} | {"mindnlp_trained"}
    for name in checked:
        assert report[name]["max_abs_difference"] < 1e-5, name
        if name != "mindnlp_trained":
            assert report[name]["same_safetensors_header"], name


def test_mindnlp_trained_adapter_matches_hf_peft_outputs():
    """The adapter mindnlp trained: HF peft's outputs (recorded) equal ours, recomputed here."""
    case = make_case("mlp")
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(FIXTURES, "mindnlp_trained"))
    outputs = load_outputs()
    np.testing.assert_allclose(run_logits(model, case), outputs["mindnlp_trained/peft"], rtol=1e-5, atol=1e-6)


def test_causal_lm_wrapper_generates_like_the_merged_model():
    case = _case("llama_qv")
    model = peft.PeftModel.from_pretrained(case.make_model(), os.path.join(FIXTURES, "llama_qv"))
    assert type(model).__name__ == "PeftModelForCausalLM"
    prompt = core.tensor([[2, 14, 35, 61]])
    generated = model.generate(input_ids=prompt, max_new_tokens=5, do_sample=False)
    assert generated.tolist() == load_outputs()["llama_qv/generated"].tolist()
    merged = model.merge_and_unload()
    assert generated.tolist() == merged.generate(input_ids=prompt, max_new_tokens=5, do_sample=False).tolist()
    assert generated.shape[1] == 9
