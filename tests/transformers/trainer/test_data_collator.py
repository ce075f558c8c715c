"""Data collators against HF's outputs on the same inputs (tests/fixtures/trainer/collators.json)."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer
from mindnlp.transformers.data import (DataCollatorForLanguageModeling, DataCollatorForSeq2Seq,
                                       DataCollatorForTokenClassification, DataCollatorWithPadding,
                                       DefaultDataCollator, default_data_collator)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
with open(os.path.join(FIXTURES, "trainer", "collators.json")) as file:
    CASES = json.load(file)


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "tokenizers", "wordpiece_vocab_only"))


def check(batch, expected, int_keys=()):
    assert sorted(batch) == sorted(expected)
    for key, value in expected.items():
        got = batch[key]
        assert isinstance(got, core.Tensor), key
        np.testing.assert_array_equal(got.numpy(), np.array(value), err_msg=key)
        if key in int_keys:
            assert got.dtype == core.int64, key


IDS = ("input_ids", "attention_mask", "token_type_ids", "labels")


def test_with_padding(tokenizer):
    case = CASES["with_padding"]
    check(DataCollatorWithPadding(tokenizer)(case["features"]), case["output"], IDS)
    case = CASES["with_padding_multiple_of_8"]
    check(DataCollatorWithPadding(tokenizer, pad_to_multiple_of=8)(case["features"]), case["output"], IDS)


def test_with_padding_left(tokenizer):
    case = CASES["with_padding_left"]
    tokenizer.padding_side = "left"
    try:
        check(DataCollatorWithPadding(tokenizer)(case["features"]), case["output"], IDS)
    finally:
        tokenizer.padding_side = "right"


def test_with_padding_numpy(tokenizer):
    case = CASES["with_padding"]
    batch = DataCollatorWithPadding(tokenizer, return_tensors="np")(case["features"])
    assert isinstance(batch["input_ids"], np.ndarray)
    np.testing.assert_array_equal(batch["input_ids"], case["output"]["input_ids"])


@pytest.mark.parametrize("name", ["default_label_int", "default_label_float", "default_label_ids"])
def test_default_data_collator(name):
    case = CASES[name]
    batch = default_data_collator(case["features"])
    check(batch, case["output"], ("input_ids", "attention_mask"))
    expected_dtype = core.float32 if name == "default_label_float" else core.int64
    assert batch["labels"].dtype == expected_dtype
    as_numpy = DefaultDataCollator(return_tensors="np")(case["features"])
    np.testing.assert_array_equal(as_numpy["labels"], np.array(case["output"]["labels"]))


def test_default_data_collator_stacks_tensors_and_drops_strings():
    features = [{"x": core.tensor([1.0, 2.0]), "text": "a", "label": core.tensor(1)},
                {"x": core.tensor([3.0, 4.0]), "text": "b", "label": core.tensor(0)}]
    batch = default_data_collator(features)
    assert sorted(batch) == ["labels", "x"]
    np.testing.assert_array_equal(batch["x"].numpy(), [[1, 2], [3, 4]])
    assert batch["labels"].dtype == core.int64 and batch["labels"].tolist() == [1, 0]
    with pytest.raises(ValueError, match="not recognized"):
        default_data_collator(features, return_tensors="tf")


@pytest.mark.parametrize("name,multiple", [("token_classification", None), ("token_classification_multiple_of_8", 8)])
def test_token_classification(tokenizer, name, multiple):
    case = CASES[name]
    batch = DataCollatorForTokenClassification(tokenizer, pad_to_multiple_of=multiple)(case["features"])
    check(batch, case["output"], IDS)


@pytest.mark.parametrize("name,multiple", [("seq2seq", None), ("seq2seq_multiple_of_4", 4)])
def test_seq2seq(tokenizer, name, multiple):
    case = CASES[name]
    check(DataCollatorForSeq2Seq(tokenizer, pad_to_multiple_of=multiple)(case["features"]), case["output"], IDS)


def test_seq2seq_builds_decoder_inputs_with_the_model(tokenizer):
    class Shifter:
        def prepare_decoder_input_ids_from_labels(self, labels):
            return labels + 1

    case = CASES["seq2seq"]
    batch = DataCollatorForSeq2Seq(tokenizer, model=Shifter())(case["features"])
    np.testing.assert_array_equal(batch["decoder_input_ids"].numpy(), np.array(case["output"]["labels"]) + 1)


@pytest.mark.parametrize("name", ["causal_lm_lists", "causal_lm_dicts", "mlm_full_mask", "mlm_no_mask"])
def test_language_modeling_deterministic_cases(tokenizer, name):
    case = CASES[name]
    options = {"causal_lm_lists": dict(mlm=False), "causal_lm_dicts": dict(mlm=False),
               "mlm_full_mask": dict(mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0),
               "mlm_no_mask": dict(mlm_probability=0.0)}[name]
    check(DataCollatorForLanguageModeling(tokenizer, **options)(case["features"]), case["output"], IDS)


def test_mlm_masking_follows_the_80_10_10_rule(tokenizer):
    features = [list(range(5, 205))] * 50  # 10,000 ordinary tokens
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)
    batch = collator(features)
    inputs, labels = batch["input_ids"].numpy(), batch["labels"].numpy()
    original = np.array(features)
    selected = labels != -100
    assert abs(selected.mean() - 0.15) < 0.015
    np.testing.assert_array_equal(labels[selected], original[selected])
    mask_id = tokenizer.convert_tokens_to_ids("[MASK]")
    as_mask = (inputs == mask_id) & selected
    unchanged = (inputs == original) & selected
    assert abs(as_mask.sum() / selected.sum() - 0.8) < 0.04
    assert abs(unchanged.sum() / selected.sum() - 0.1) < 0.03  # includes random draws equal to the original
    np.testing.assert_array_equal(inputs[~selected], original[~selected])
    again = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)(features)
    np.testing.assert_array_equal(again["input_ids"].numpy(), inputs)


def test_mlm_never_masks_special_tokens(tokenizer):
    encoded = [dict(tokenizer(s, return_special_tokens_mask=True)) for s in ["hello world", "the movie was good"]]
    batch = DataCollatorForLanguageModeling(tokenizer, mlm_probability=1.0)(encoded)
    labels = batch["labels"].numpy()
    assert "special_tokens_mask" not in batch
    assert (labels[:, 0] == -100).all() and labels[0, 3:].tolist() == [-100] * (labels.shape[1] - 3)


def test_language_modeling_errors(tokenizer):
    with pytest.raises(ValueError, match="mlm_probability"):
        DataCollatorForLanguageModeling(tokenizer, mlm_probability=1.5)
    with pytest.raises(ValueError, match="should not exceed 1"):
        DataCollatorForLanguageModeling(tokenizer, mask_replace_prob=0.8, random_replace_prob=0.3)
    tokenizer_without_pad = AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "tokenizers", "gpt2_bpe"))
    with pytest.raises(ValueError, match="does not have a pad token"):
        DataCollatorForLanguageModeling(tokenizer_without_pad, mlm=False)([[1, 2, 3], [4, 5]])
    with pytest.raises(ValueError, match="mask token"):
        DataCollatorForLanguageModeling(tokenizer_without_pad, mlm=True)
