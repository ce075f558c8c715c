"""BERT parity with Hugging Face transformers on a tiny checkpoint HF saved.

Fixtures come from tests/fixtures/make_bert_fixtures.py: the checkpoint in three layouts,
the head weights HF initialised for each head class, and the outputs and losses HF computed.
"""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import (AutoModel, AutoModelForMaskedLM, AutoModelForPreTraining,
                                  AutoModelForSequenceClassification, BertConfig)
from mindnlp.transformers.models.bert import modeling_bert

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "bert")
ATOL = 1e-4

with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as _fh:
    EXPECTED = json.load(_fh)
OUTPUTS = dict(np.load(os.path.join(FIXTURES, "outputs.npz")))
HEADS = load_safetensors(os.path.join(FIXTURES, "heads.safetensors"))
FLOAT_LABELS = {"seq_cls_regression", "seq_cls_multi"}


def inputs_for(case):
    inputs = EXPECTED["inputs"]
    if case == "multiple_choice":
        return {k: core.tensor([v]) for k, v in inputs.items()}
    return {k: core.tensor(v) for k, v in inputs.items()}


def labels_for(case):
    labels = {}
    for key, value in EXPECTED["labels"][case].items():
        dtype = core.float32 if key == "labels" and case in FLOAT_LABELS else core.long
        labels[key] = core.tensor(value, dtype=dtype)
    return labels


def load_case(case, folder="pretraining"):
    """The head model of `case` loaded from `folder`, with the head weights HF initialised copied in."""
    spec = EXPECTED["cases"][case]
    cls = getattr(modeling_bert, spec["class"])
    model, info = cls.from_pretrained(os.path.join(FIXTURES, folder), output_loading_info=True, **spec["overrides"])
    head = {key.split("/", 1)[1]: value for key, value in HEADS.items() if key.startswith(case + "/")}
    if head:
        result = model.load_state_dict(head, strict=False)
        assert not result.unexpected_keys
    return model, info


def assert_outputs_match(case, model):
    with core.no_grad():
        outputs = model(**inputs_for(case))
        with_labels = model(**inputs_for(case), **labels_for(case))
    prefix = case + "/"
    names = [key[len(prefix):] for key in OUTPUTS if key.startswith(prefix)]
    assert names
    for name in names:
        want = OUTPUTS[prefix + name]
        got = with_labels.loss if name == "loss" else outputs[name]
        assert got is not None, f"{case}: no {name}"
        np.testing.assert_allclose(got.numpy(), want, atol=ATOL, rtol=0, err_msg=f"{case}/{name}")


@pytest.mark.parametrize("case", sorted(EXPECTED["cases"]))
def test_head_outputs_and_losses_match_hf(case):
    model, info = load_case(case)
    assert not model.training
    spec = EXPECTED["cases"][case]
    assert sorted(info["missing_keys"]) == spec["missing_keys"]
    assert sorted(info["unexpected_keys"]) == spec["unexpected_keys"]
    assert_outputs_match(case, model)


@pytest.mark.parametrize("folder", ["pretraining_bin", "pretraining_sharded"])
def test_bin_and_sharded_checkpoints_load_the_same_weights(folder):
    model, info = load_case("pretraining", folder)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set()
    assert_outputs_match("pretraining", model)


def test_tied_decoder_shares_the_embedding_and_bias():
    model, _ = load_case("pretraining")
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert model.cls.predictions.decoder.bias is model.cls.predictions.bias
    assert float(model.cls.predictions.bias.abs().sum()) > 0


def test_base_checkpoint_loads_into_head_model_and_reports_missing_head():
    """base/ has no "bert." prefix: the head model adds it and reports only its own head as missing."""
    model, info = modeling_bert.BertForPreTraining.from_pretrained(os.path.join(FIXTURES, "base"),
                                                                    output_loading_info=True)
    reference, _ = load_case("pretraining")
    assert info["unexpected_keys"] == set()
    assert sorted(info["missing_keys"]) == [
        "cls.predictions.bias", "cls.predictions.transform.LayerNorm.bias",
        "cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.dense.weight", "cls.seq_relationship.bias", "cls.seq_relationship.weight"]
    for name, value in reference.bert.state_dict().items():
        np.testing.assert_array_equal(model.bert.state_dict()[name].numpy(), value.numpy(), err_msg=name)


def test_head_checkpoint_loads_into_base_model():
    """pretraining/ has the "bert." prefix: BertModel strips it and ignores the heads."""
    model, info = modeling_bert.BertModel.from_pretrained(os.path.join(FIXTURES, "pretraining"),
                                                          output_loading_info=True)
    assert info["missing_keys"] == set()
    assert sorted(info["unexpected_keys"]) == EXPECTED["cases"]["model"]["unexpected_keys"]
    assert_outputs_match("model", model)


def test_auto_classes_pick_the_bert_heads():
    folder = os.path.join(FIXTURES, "pretraining")
    assert type(AutoModel.from_pretrained(folder)) is modeling_bert.BertModel
    assert type(AutoModelForPreTraining.from_pretrained(folder)) is modeling_bert.BertForPreTraining
    assert type(AutoModelForMaskedLM.from_pretrained(folder)) is modeling_bert.BertForMaskedLM
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=5)
    assert type(model) is modeling_bert.BertForSequenceClassification
    assert model.classifier.weight.shape == (5, 32)


def test_hf_loaded_what_mindnlp_saved():
    """Recorded by the fixture script: HF loads mindnlp's save_pretrained output to identical outputs."""
    for layout, result in EXPECTED["hf_loads_mindnlp_save"].items():
        assert result["identical"], layout
        assert result["missing_keys"] == [] and result["unexpected_keys"] == [], layout


@pytest.mark.parametrize("kwargs", [{}, {"max_shard_size": "40KB"}, {"safe_serialization": False}])
def test_save_pretrained_round_trip(tmp_path, kwargs):
    model, _ = load_case("pretraining")
    model.save_pretrained(tmp_path, **kwargs)
    reloaded, info = modeling_bert.BertForPreTraining.from_pretrained(tmp_path, output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set()
    assert reloaded.cls.predictions.decoder.weight is reloaded.bert.embeddings.word_embeddings.weight
    assert_outputs_match("pretraining", reloaded)
    assert BertConfig.from_pretrained(tmp_path).architectures == ["BertForPreTraining"]


def test_float16_loading_keeps_the_requested_dtype():
    model = modeling_bert.BertModel.from_pretrained(os.path.join(FIXTURES, "pretraining"), dtype=core.float16)
    assert model.dtype == core.float16
    with core.no_grad():
        hidden = model(**inputs_for("model")).last_hidden_state
    assert hidden.dtype == core.float16
    np.testing.assert_allclose(hidden.float().numpy(), OUTPUTS["model/last_hidden_state"], atol=2e-2)
