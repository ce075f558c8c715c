"""WhisperTokenizer against HF's on a tiny vocabulary with Whisper's special tokens
(tests/fixtures/whisper/tokenizer): prefixes, decoding with and without timestamps, offsets,
the English and basic text normalizers, word grouping and the ASR pipeline's word chunks."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer, WhisperTokenizer
from mindnlp.transformers.models.whisper.english_normalizer import BasicTextNormalizer, EnglishTextNormalizer
from mindnlp.transformers.models.whisper.tokenization_whisper import _combine_tokens_into_words

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


def test_normalizers_match_hf(expected, tokenizer):
    """Numbers, currencies, contractions, titles, fillers, British spellings, diacritics."""
    for case in expected["normalize"]:
        text = case["text"]
        assert tokenizer.normalize(text) == case["english"], text
        assert tokenizer.basic_normalize(text) == case["basic"], text
        assert tokenizer.basic_normalize(text, remove_diacritics=True) == case["basic_no_diacritics"], text
        assert BasicTextNormalizer(split_letters=True)(text) == case["split_letters"], text


def test_decode_normalized_matches_hf(expected, tokenizer):
    case = expected["decode_normalized"]
    assert tokenizer.decode(case["ids"], normalize=True) == case["normalize"]
    assert tokenizer.decode(core.tensor([case["ids"]]), basic_normalize=True) == [case["basic_normalize"]]
    diacritics = tokenizer(expected["normalize"][10]["text"], add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(diacritics, basic_normalize=True, remove_diacritics=True) == case["remove_diacritics"]


def test_spelling_table_is_saved_and_required(tokenizer, tmp_path):
    tokenizer.save_pretrained(tmp_path)
    assert WhisperTokenizer.from_pretrained(tmp_path).english_spelling_normalizer == \
        tokenizer.english_spelling_normalizer
    with pytest.raises(ValueError, match="normalizer.json"):
        EnglishTextNormalizer(None)


def test_word_grouping_matches_hf(expected, tokenizer):
    """Spaces and punctuation split words, opening / closing punctuation joins its neighbour,
    and Chinese (no spaces) splits on whole characters across byte-level tokens."""
    for case in expected["words"]:
        words, tokens, indices = _combine_tokens_into_words(tokenizer, case["ids"], case["language"])
        assert (words, tokens, indices) == (case["words"], case["tokens"], case["indices"])


def test_word_chunks_of_decode_asr_match_hf(expected, tokenizer):
    for case in expected["decode_asr_words"]:
        outputs = [{key: (tuple(value) if key == "stride" else np.array(value)) for key, value in output.items()}
                   for output in case["outputs"]]
        text, optional = tokenizer._decode_asr(outputs, return_timestamps="word",
                                               return_language=case["return_language"], time_precision=0.02)
        assert text == case["text"]
        assert json.loads(json.dumps(optional["chunks"])) == case["chunks"], case["name"]
