"""MBartTokenizer and MBart50Tokenizer against HF's, read from a sentencepiece model and from
the tokenizer.json HF saved (tests/fixtures/make_bart_fixtures.py): ids of inputs, pairs and
`text_target=` labels for several language settings, the translation pipeline's inputs."""
import json
from pathlib import Path

import pytest

from mindnlp.transformers import AutoTokenizer, MBart50Tokenizer, MBartTokenizer

ROOT = Path(__file__).parents[3] / "fixtures" / "bart" / "mbart_tokenizer"
EXPECTED = json.loads((ROOT / "expected.json").read_text(encoding="utf-8"))
CLASSES = {"mbart": MBartTokenizer, "mbart50": MBart50Tokenizer}


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("index", range(2 * len(EXPECTED["cases"])))
def test_ids_equal_hf(name, index):
    record = EXPECTED[name][index]
    tokenizer = CLASSES[name].from_pretrained(ROOT / record["source"], **record["case"])
    batch = tokenizer(EXPECTED["texts"], text_target=EXPECTED["targets"])
    assert batch["input_ids"] == record["input_ids"]
    assert batch["labels"] == record["labels"]
    assert tokenizer(EXPECTED["texts"][0], EXPECTED["texts"][1])["input_ids"] == record["pair"]
    assert tokenizer(EXPECTED["texts"][:3], padding=True)["input_ids"] == record["padded"]
    assert tokenizer.batch_decode(batch["labels"], skip_special_tokens=True) == record["decoded"]
    assert len(tokenizer) == record["len"]
    assert tokenizer.lang_code_to_id == record["lang_code_to_id"]
    translation = tokenizer._build_translation_inputs(EXPECTED["texts"][0], None, "en_XX", "ro_RO")
    assert translation["input_ids"] == record["translation"]["input_ids"]
    assert translation["forced_bos_token_id"] == record["translation"]["forced_bos_token_id"]


@pytest.mark.parametrize("name", CLASSES)
def test_auto_tokenizer_and_src_lang_setter(name):
    tokenizer = AutoTokenizer.from_pretrained(ROOT / name)
    assert type(tokenizer) is CLASSES[name]
    english = tokenizer("Hello world")["input_ids"]
    tokenizer.src_lang = "ro_RO"
    romanian = tokenizer("Hello world")["input_ids"]
    code = tokenizer.convert_tokens_to_ids("ro_RO")
    assert code in romanian and code not in english
    english_code = tokenizer.convert_tokens_to_ids("en_XX")
    assert [english_code if token == code else token for token in romanian] == english


@pytest.mark.parametrize("name", CLASSES)
def test_unknown_language_is_refused(name):
    with pytest.raises(ValueError, match="xx_YY.*not a language code"):
        CLASSES[name].from_pretrained(ROOT / name, src_lang="xx_YY")
    tokenizer = CLASSES[name].from_pretrained(ROOT / name)
    with pytest.raises(ValueError, match="src_lang.*tgt_lang"):
        tokenizer._build_translation_inputs("Hello", None, None, "ro_RO")


def test_save_and_reload_keeps_the_languages(tmp_path):
    tokenizer = MBartTokenizer.from_pretrained(ROOT / "spm", src_lang="ro_RO", tgt_lang="de_DE")
    tokenizer.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(tmp_path)
    assert again.src_lang == "ro_RO" and again.tgt_lang == "de_DE"
    assert again("Hello", text_target="Hallo") == tokenizer("Hello", text_target="Hallo")


def test_missing_files_are_named(tmp_path):
    with pytest.raises(ValueError, match="tokenizer.json.*sentencepiece.bpe.model"):
        MBartTokenizer()
