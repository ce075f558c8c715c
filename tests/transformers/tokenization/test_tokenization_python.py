"""Custom tokenizers written on mindnlp's `PythonBackend` and `SentencePieceBackend` give what the
same subclasses give on HF transformers' bases (recorded by
tests/fixtures/make_python_tokenizer_fixtures.py): ids, tokens, masks, padding and truncation,
added-token splitting, decoding, chat templates, and the saved files."""
import functools
import json
import os
import shutil

import pytest

from mindnlp.transformers import AutoTokenizer, PreTrainedTokenizer, PythonBackend, SentencePieceBackend
from tests.transformers.tokenization.cases import CHAT_TEMPLATE, chat_cases, run_chat_case, run_encode_case
from tests.transformers.tokenization.python_tokenizers import (
    ADDED_TEXTS, PATTERNS, added_token_calls, python_encode_cases, spm_tokenizer_class, structure_calls,
    word_tokenizer_class,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
WORD_DIR = os.path.join(FIXTURES, "python_tokenizers", "word")
VOCAB_FILE = os.path.join(WORD_DIR, "vocab.json")
SPM = {"spm_llama": os.path.join(FIXTURES, "tokenizers", "spm_llama", "tokenizer.model"),
       "spm_unigram": os.path.join(FIXTURES, "tokenizers", "spm_unigram", "tokenizer.model")}
SPM_KEYS = [(name, legacy) for name in SPM for legacy in (True, False)]

WordTokenizer = word_tokenizer_class(PythonBackend)
SpmTokenizer = spm_tokenizer_class(SentencePieceBackend)


@functools.lru_cache(maxsize=None)
def expected():
    with open(os.path.join(FIXTURES, "python_tokenizers", "expected.json"), encoding="utf-8") as f:
        return json.load(f)


def spm_key(name, legacy):
    return f"{name}_legacy" if legacy else name


def make(key):
    if key == "word":
        return WordTokenizer(VOCAB_FILE)
    name, _, legacy = key.partition("_legacy")
    return SpmTokenizer(SPM[name], legacy=bool(_))


ALL_KEYS = ["word", *(spm_key(name, legacy) for name, legacy in SPM_KEYS)]


def test_exports():
    from mindnlp.transformers import tokenization_utils

    assert PreTrainedTokenizer is PythonBackend
    assert tokenization_utils.PreTrainedTokenizer is PythonBackend
    assert tokenization_utils.SentencePieceBackend is SentencePieceBackend
    assert issubclass(SentencePieceBackend, PythonBackend)
    assert WordTokenizer(VOCAB_FILE).is_fast is False


@pytest.mark.parametrize("key", ALL_KEYS)
@pytest.mark.parametrize("case", python_encode_cases(True), ids=lambda case: case["name"])
def test_encode_matches_hf(key, case):
    recorded = expected()[key]["encode"][case["name"]]
    result = run_encode_case(make(key), case)
    if "error" in recorded:
        # HF fails on these inputs too (with an internal AssertionError where mindnlp says why).
        assert "error" in result
    else:
        assert result == recorded


@pytest.mark.parametrize("key", ALL_KEYS)
def test_chat_and_structure_match_hf(key):
    tokenizer = make(key)
    tokenizer.chat_template = CHAT_TEMPLATE
    for case in chat_cases():
        recorded, result = expected()[key]["chat"][case["name"]], run_chat_case(tokenizer, case)
        if recorded.get("error") == "TypeError":
            # HF fails inside (assistant masks need character offsets, which Python tokenizers lack);
            # mindnlp refuses with a message that says so.
            assert result["error"] == "ValueError", case["name"]
        else:
            assert result == recorded, case["name"]
    assert structure_calls(tokenizer) == expected()[key]["structure"]


@pytest.mark.parametrize("name,legacy", SPM_KEYS)
def test_sentencepiece_tokens_and_added_tokens_match_hf(name, legacy):
    recorded = expected()[spm_key(name, legacy)]
    tokenizer = SpmTokenizer(SPM[name], legacy=legacy)
    assert {text: tokenizer.tokenize(text) for text in recorded["tokenize"]} == recorded["tokenize"]
    assert added_token_calls(SpmTokenizer(SPM[name], legacy=legacy)) == recorded["added"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_special_tokens_patterns_match_hf(pattern):
    tokenizer = WordTokenizer(VOCAB_FILE, special_tokens_pattern=pattern, bos_token="[CLS]", eos_token="[SEP]")
    assert structure_calls(tokenizer) == expected()["word_patterns"][pattern]


def test_token_type_patterns_and_casing_match_hf():
    assert structure_calls(WordTokenizer(VOCAB_FILE, token_type_ids_pattern="all_zeros")) == expected()["word_all_zeros"]
    cased = WordTokenizer(VOCAB_FILE, do_lower_case=False)
    assert {text: cased.tokenize(text) for text in ADDED_TEXTS} == expected()["word_uncased_off"]


def test_added_tokens_match_hf():
    assert added_token_calls(WordTokenizer(VOCAB_FILE)) == expected()["word_added"]


def test_loads_what_hf_saved():
    tokenizer = WordTokenizer.from_pretrained(os.path.join(WORD_DIR, "saved"))
    assert {text: tokenizer.encode(text) for text in ADDED_TEXTS} == expected()["word_reloaded"]
    assert tokenizer.extra_special_tokens == ["<ctrl>"]


def test_saves_what_hf_saves(tmp_path):
    tokenizer = WordTokenizer(VOCAB_FILE)
    added_token_calls(tokenizer)
    written = tokenizer.save_pretrained(tmp_path)
    assert {os.path.basename(path) for path in written} >= {"tokenizer_config.json", "added_tokens.json", "vocab.json"}
    hf_dir = os.path.join(WORD_DIR, "saved")
    for name in ("added_tokens.json", "vocab.json"):
        with open(tmp_path / name, encoding="utf-8") as ours, open(os.path.join(hf_dir, name), encoding="utf-8") as hf:
            assert json.load(ours) == json.load(hf), name
    with open(tmp_path / "tokenizer_config.json", encoding="utf-8") as ours, \
            open(os.path.join(hf_dir, "tokenizer_config.json"), encoding="utf-8") as hf:
        ours, hf = json.load(ours), json.load(hf)
    for key in ("added_tokens_decoder", "extra_special_tokens", "do_lower_case", "cls_token", "tokenizer_class"):
        assert ours[key] == hf[key], key
    reloaded = WordTokenizer.from_pretrained(tmp_path)
    assert {text: reloaded.encode(text) for text in ADDED_TEXTS} == expected()["word_reloaded"]


def test_sentencepiece_save_round_trip(tmp_path):
    tokenizer = SpmTokenizer(SPM["spm_llama"], legacy=False)
    tokenizer.add_tokens(["<new>"])
    tokenizer.save_pretrained(tmp_path)
    assert (tmp_path / "tokenizer.model").read_bytes() == open(SPM["spm_llama"], "rb").read()
    reloaded = SpmTokenizer.from_pretrained(tmp_path)
    assert reloaded.encode("Hello <new> world") == tokenizer.encode("Hello <new> world")
    assert reloaded.legacy is False


def test_bad_input_is_refused():
    tokenizer = WordTokenizer(VOCAB_FILE)
    with pytest.raises(ValueError, match="special_tokens_pattern"):
        WordTokenizer(VOCAB_FILE, special_tokens_pattern="sandwich")
    with pytest.raises(ValueError, match="needs bos_token"):
        WordTokenizer(VOCAB_FILE, special_tokens_pattern="bos").encode("hello")
    with pytest.raises(ValueError, match="list of int ids"):
        tokenizer(3.5)
    with pytest.raises(TypeError, match="must be a str or tokenizers.AddedToken"):
        tokenizer.add_tokens([3])
    with pytest.raises(OSError, match="sentencepiece .model"):
        SpmTokenizer(os.path.join(WORD_DIR, "missing.model"))


def test_subclass_without_hooks_says_what_is_missing():
    class Bare(PythonBackend):
        vocab = {"[UNK]": 0}

        @property
        def vocab_size(self):
            return 1

        def get_vocab(self):
            return dict(self.vocab)

    with pytest.raises(NotImplementedError, match="_tokenize"):
        Bare().tokenize("hi")


def test_auto_tokenizer_loads_a_saved_sentencepiece_backend():
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "python_tokenizers", "spm_saved"))
    assert type(tokenizer) is SentencePieceBackend
    assert {text: tokenizer.encode(text) for text in expected()["spm_saved"]} == expected()["spm_saved"]


def test_python_tokenizer_ignores_a_tokenizer_json_beside_its_vocabulary(tmp_path):
    shutil.copytree(os.path.join(WORD_DIR, "saved"), tmp_path, dirs_exist_ok=True)
    (tmp_path / "tokenizer.json").write_text("not the word tokenizer", encoding="utf-8")
    tokenizer = WordTokenizer.from_pretrained(tmp_path)
    assert {text: tokenizer.encode(text) for text in ADDED_TEXTS} == expected()["word_reloaded"]


def test_call_options_reach_prepare_for_tokenization():
    class Exclaiming(WordTokenizer):
        def prepare_for_tokenization(self, text, is_split_into_words=False, exclaim=False, **kwargs):
            return (text + " !" if exclaim else text), kwargs

    tokenizer = Exclaiming(VOCAB_FILE)
    plain, exclaimed = tokenizer("hello world")["input_ids"], tokenizer("hello world", exclaim=True)["input_ids"]
    assert exclaimed == plain[:-1] + tokenizer.convert_tokens_to_ids(["!"]) + plain[-1:]
    assert tokenizer.tokenize("hello", exclaim=True) == ["hello", "!"]
    with pytest.raises(TypeError, match="does not take \\['shout'\\]"):
        tokenizer("hello world", shout=True)
