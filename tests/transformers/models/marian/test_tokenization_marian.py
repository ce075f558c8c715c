"""MarianTokenizer and BART's tokenizer against what HF transformers gave on the same files
(tests/fixtures/bart/{marian_tokenizer,bart_tokenizer}, made by make_bart_fixtures.py)."""
import json
import os

import pytest

from mindnlp.transformers import AutoTokenizer, BartTokenizer, MarianTokenizer, RobertaTokenizerFast

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures")
MARIAN = os.path.join(FIXTURES, "bart", "marian_tokenizer")


def expected(folder):
    with open(os.path.join(folder, "expected.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("name", ["shared", "separate"])
def test_source_and_target_ids_match_hf(name):
    folder = os.path.join(MARIAN, name)
    want = expected(folder)
    tokenizer = MarianTokenizer.from_pretrained(folder)
    batch = tokenizer(want["texts"], text_target=want["targets"])
    assert batch["labels"] == want["labels"]
    assert tokenizer.batch_decode(batch["labels"], skip_special_tokens=True) == want["decoded_targets"]
    assert tokenizer(want["texts"][:3], padding=True)["input_ids"] == want["padded"]
    assert (tokenizer.vocab_size, len(tokenizer)) == (want["vocab_size"], want["len"])
    # A leading language code the vocabulary lacks is one <unk> in HF; the rest is the same.
    rows = range(len(want["texts"]) - 2) if name == "separate" else range(len(want["texts"]))
    assert [batch["input_ids"][i] for i in rows] == [want["input_ids"][i] for i in rows]
    assert [tokenizer.tokenize(want["texts"][i]) for i in rows] == [want["tokens"][i] for i in rows]
    if name == "shared":
        assert tokenizer.batch_decode(batch["input_ids"], skip_special_tokens=True,
                                      use_source_tokenizer=True) == want["decoded_sources"]


def test_target_side_is_used_only_for_targets():
    tokenizer = MarianTokenizer.from_pretrained(os.path.join(MARIAN, "separate"))
    source = tokenizer("Hallo Welt!")["input_ids"]
    target = tokenizer(text_target="Hallo Welt!")["input_ids"]
    assert source != target
    assert tokenizer("Hallo Welt!")["input_ids"] == source  # back on the source side afterwards
    assert target[-1] == tokenizer.target_encoder["</s>"]


def test_saved_tokenizer_reloads_with_marian_files(tmp_path):
    tokenizer = MarianTokenizer.from_pretrained(os.path.join(MARIAN, "separate"))
    tokenizer.save_pretrained(tmp_path)
    assert {"source.spm", "target.spm", "vocab.json", "target_vocab.json"} <= set(os.listdir(tmp_path))
    with open(os.path.join(tmp_path, "tokenizer_config.json"), encoding="utf-8") as fh:
        config = json.load(fh)
    assert config["tokenizer_class"] == "MarianTokenizer" and config["separate_vocabs"] is True
    reloaded = AutoTokenizer.from_pretrained(str(tmp_path))
    assert type(reloaded) is MarianTokenizer
    texts = ["Hello world!", "The quick fox."]
    assert reloaded(texts, text_target=["Hallo", "Der Fuchs"]) == tokenizer(texts, text_target=["Hallo", "Der Fuchs"])


def test_bart_tokenizer_is_robertas_and_matches_hf():
    assert BartTokenizer is RobertaTokenizerFast
    want = expected(os.path.join(FIXTURES, "bart", "bart_tokenizer"))
    tokenizer = BartTokenizer.from_pretrained(os.path.join(FIXTURES, "tokenizers", "roberta_vocab_merges_only"))
    batch = tokenizer(want["texts"], text_target=want["targets"], padding=True)
    assert batch["input_ids"] == want["input_ids"]
    assert batch["attention_mask"] == want["attention_mask"]
    assert batch["labels"] == want["labels"]
    assert tokenizer.batch_decode(batch["input_ids"], skip_special_tokens=True) == want["decoded"]
