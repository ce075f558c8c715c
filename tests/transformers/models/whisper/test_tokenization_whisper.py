"""WhisperTokenizer against HF's on a tiny vocabulary with Whisper's special tokens
(tests/fixtures/whisper/tokenizer): prefixes, decoding with and without timestamps, offsets."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer, WhisperTokenizer

FOLDER = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "whisper", "tokenizer")


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(FOLDER, "expected.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture()
def tokenizer():
    return WhisperTokenizer.from_pretrained(FOLDER)


def test_prefixes_and_encodings_match_hf(expected, tokenizer):
    for key, want in expected["encodings"].items():
        language, task, predict = key.split("-")
        tokenizer.set_prefix_tokens(language=None if language == "None" else language,
                                    task=None if task == "None" else task, predict_timestamps=predict == "True")
        assert tokenizer.prefix_tokens == want["prefix"], key
        assert tokenizer(expected["texts"])["input_ids"] == want["batch"], key
        assert tokenizer(expected["texts"][0], expected["texts"][1])["input_ids"] == want["pair"], key


def test_decoding_matches_hf(expected, tokenizer):
    assert tokenizer.timestamp_begin == expected["timestamp_begin"]
    for name, case in expected["decode"].items():
        ids = case["ids"]
        assert tokenizer.decode(ids) == case["text"], name
        assert tokenizer.decode(core.tensor(ids), skip_special_tokens=True) == case["skip_special"], name
        assert tokenizer.decode(np.array(ids), decode_with_timestamps=True) == case["with_timestamps"], name
        got = tokenizer.decode(ids, output_offsets=True, skip_special_tokens=True)
        assert got["text"] == case["offsets"]["text"], name
        assert [o["text"] for o in got["offsets"]] == [o["text"] for o in case["offsets"]["offsets"]], name
        for a, b in zip(got["offsets"], case["offsets"]["offsets"]):
            assert a["timestamp"] == pytest.approx(tuple(b["timestamp"])), name


def test_prompt_helpers_match_hf(expected, tokenizer):
    assert [list(p) for p in tokenizer.get_decoder_prompt_ids(task="translate", language="spanish")] == \
        expected["decoder_prompt_ids"]
    assert tokenizer.get_prompt_ids("the sat").tolist() == expected["prompt_ids"]
    with pytest.raises(ValueError, match="disallowed special token"):
        tokenizer.get_prompt_ids("the <|en|>")


def test_bad_settings_and_auto_class(tokenizer):
    with pytest.raises(ValueError, match="Unsupported language"):
        tokenizer.set_prefix_tokens(language="klingon")
    with pytest.raises(ValueError, match="Unsupported task"):
        WhisperTokenizer.from_pretrained(FOLDER, task="summarize")
    assert type(AutoTokenizer.from_pretrained(FOLDER)) is WhisperTokenizer
    assert WhisperTokenizer._convert_to_list(core.tensor([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
