"""Behaviour of the tokenizer API beyond the recorded HF outputs: adding tokens, padding helpers,
tensors, alignment, saving, AutoTokenizer's class choice, and the errors bad input gets."""
import json
import os
import pickle

import numpy as np
import pytest
from tokenizers import AddedToken, Tokenizer

from mindnlp.transformers import (
    AutoTokenizer,
    BatchEncoding,
    BertTokenizerFast,
    GPT2TokenizerFast,
    PreTrainedTokenizerFast,
)
from mindnlp.transformers.convert_slow_tokenizer import (
    SentencePieceModel,
    load_merges_txt,
)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tokenizers")


def fixture(name):
    return os.path.join(FIXTURES, name)


@pytest.fixture
def bert():
    return AutoTokenizer.from_pretrained(fixture("wordpiece_vocab_only"))


@pytest.fixture
def gpt2():
    return AutoTokenizer.from_pretrained(fixture("gpt2_bpe"))


@pytest.fixture
def llama():
    return AutoTokenizer.from_pretrained(fixture("llama_chat"))


# ---- special and added tokens ---------------------------------------------------------------


def test_special_token_attributes_and_ids(bert):
    assert (bert.cls_token, bert.sep_token, bert.pad_token, bert.unk_token, bert.mask_token) == (
        "[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]")
    assert bert.cls_token_id == bert.get_vocab()["[CLS]"]
    assert bert.bos_token is None and bert.bos_token_id is None
    bert.pad_token_id = bert.mask_token_id
    assert bert.pad_token == "[MASK]"


def test_add_tokens_are_never_split_and_extend_the_vocabulary(bert):
    before = len(bert)
    the_id = bert.convert_tokens_to_ids("the")
    # As in HF, the count includes "the", which keeps its id but is now never split.
    assert bert.add_tokens(["newword", "the"]) == 2
    assert len(bert) == before + 1 and bert.convert_tokens_to_ids("the") == the_id
    assert bert.tokenize("the newword the") == ["the", "newword", "the"]
    assert bert.convert_tokens_to_ids("newword") == before


def test_add_special_tokens_sets_attributes_and_is_skipped_when_decoding(gpt2):
    added = gpt2.add_special_tokens({"pad_token": "<pad>", "extra_special_tokens": ["<tool>"]})
    assert added == 2
    assert gpt2.pad_token == "<pad>" and gpt2.pad_token_id == len(gpt2) - 2
    assert gpt2.extra_special_tokens == ["<tool>"]
    assert "<tool>" in gpt2.all_special_tokens
    ids = gpt2.encode("call <tool> now")
    assert gpt2.convert_tokens_to_ids("<tool>") in ids
    assert gpt2.decode(ids, skip_special_tokens=True) == "call  now"
    with pytest.raises(ValueError, match="not a special token attribute"):
        gpt2.add_special_tokens({"start_token": "<go>"})


def test_add_tokens_rejects_non_strings(bert):
    with pytest.raises(TypeError, match="str or tokenizers.AddedToken"):
        bert.add_tokens([3])


def test_split_special_tokens_encodes_them_as_text(llama):
    whole = llama("</s>", add_special_tokens=False)["input_ids"]
    split = llama("</s>", add_special_tokens=False, split_special_tokens=True)["input_ids"]
    assert whole == [llama.eos_token_id]
    assert len(split) > 1 and llama.eos_token_id not in split


def test_add_bos_and_eos_token_rebuild_the_post_processor(llama):
    ids = llama.encode("hello")
    assert ids[0] == llama.bos_token_id and ids[-1] != llama.eos_token_id
    assert llama.add_bos_token and not llama.add_eos_token
    llama.add_eos_token = True
    assert llama.encode("hello")[-1] == llama.eos_token_id
    pair = llama("hello", "world")
    assert pair["input_ids"].count(llama.bos_token_id) == 2


def test_get_special_tokens_mask(bert):
    ids = bert.encode("hello world")
    assert bert.get_special_tokens_mask(ids, already_has_special_tokens=True) == [1] + [0] * (len(ids) - 2) + [1]
    with pytest.raises(ValueError, match="already_has_special_tokens"):
        bert.get_special_tokens_mask(ids)


# ---- calls, padding, tensors ------------------------------------------------------------------


def test_bad_options_get_clear_errors(bert, gpt2):
    with pytest.raises(ValueError, match="not a valid PaddingStrategy"):
        bert("hi", padding="everything")
    with pytest.raises(ValueError, match="not a valid TruncationStrategy"):
        bert("hi", truncation="middle")
    with pytest.raises(ValueError, match="padding_side must be 'left' or 'right'"):
        bert("hi", padding=True, padding_side="center")
    with pytest.raises(ValueError, match="no pad token"):
        gpt2(["a", "b c"], padding=True)
    with pytest.raises(ValueError, match="not a valid TensorType"):
        bert("hi", return_tensors="tf")
    with pytest.raises(ValueError, match="text must be a str"):
        bert(123)
    with pytest.raises(TypeError, match="unexpected tokenizer arguments"):
        bert("hi", paddding=True)
    with pytest.raises(ValueError, match="pass `text` or `text_target`"):
        bert()
    with pytest.raises(ValueError, match="stride"):
        bert("a b c d e f g", truncation=True, max_length=4, stride=2, return_overflowing_tokens=True)
    with pytest.raises(ValueError, match="multiple of pad_to_multiple_of"):
        bert("hi", padding=True, truncation=True, max_length=10, pad_to_multiple_of=8)


def test_ragged_batch_cannot_become_a_tensor(bert):
    with pytest.raises(ValueError, match="`input_ids`.*padding=True"):
        bert(["hello", "hello world again"], return_tensors="np")


def test_max_length_padding_without_model_max_length_is_switched_off(gpt2):
    gpt2.pad_token = gpt2.eos_token
    assert gpt2.model_max_length > 1e20
    unpadded = [len(row) for row in gpt2(["a", "a b c"])["input_ids"]]
    out = gpt2(["a", "a b c"], padding="max_length")
    assert [len(row) for row in out["input_ids"]] == unpadded and unpadded[0] != unpadded[1]


def test_return_tensors_pt_gives_core_tensors(bert):
    from mindnlp import core

    out = bert(["hello world", "hello"], padding=True, return_tensors="pt")
    assert isinstance(out["input_ids"], core.Tensor)
    assert out["input_ids"].dtype == core.int64
    assert out["attention_mask"].tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    assert bert.decode(out["input_ids"][0], skip_special_tokens=True) == "hello world"
    assert out.to("cpu")["input_ids"].tolist() == out["input_ids"].tolist()


def test_pad_collates_examples(bert):
    examples = [bert("hello"), bert("hello world again")]
    batch = bert.pad(examples, padding_side="left")
    assert batch["attention_mask"][0][:2] == [0, 0]
    assert batch["input_ids"][0][:2] == [bert.pad_token_id] * 2
    assert batch["token_type_ids"][0][:2] == [0, 0]
    arrays = bert.pad({"input_ids": [np.array([5, 6]), np.array([7])]})
    assert isinstance(arrays["input_ids"], np.ndarray)
    assert arrays["input_ids"].tolist() == [[5, 6], [7, bert.pad_token_id]]
    single = bert.pad({"input_ids": [5, 6]}, padding="max_length", max_length=4)
    assert single["input_ids"] == [5, 6, bert.pad_token_id, bert.pad_token_id]
    with pytest.raises(ValueError, match="needs the field 'input_ids'"):
        bert.pad({"ids": [[1]]})


def test_batch_encoding_access_and_alignment(bert):
    out = bert(["hello world", "the lazy dog"])
    assert out.input_ids is out["input_ids"]
    assert out[1].ids == out["input_ids"][1]
    assert out[:1] == {key: value[:1] for key, value in out.items()}
    assert out.tokens(1) == ["[CLS]", "the", "la", "##zy", "do", "##g", "[SEP]"]
    assert out.word_ids(1) == [None, 0, 1, 1, 2, 2, None]
    assert out.sequence_ids(1) == [None, 0, 0, 0, 0, 0, None]
    assert out.char_to_token(1, 6) == 3  # the "z" of "lazy"
    assert out.token_to_chars(1, 3) == (6, 8)
    assert out.word_to_tokens(1, 1) == (2, 4)
    assert out.word_to_chars(1, 2) == (9, 12)
    assert out.token_to_word(1, 4) == 2 and out.char_to_word(1, 10) == 2
    assert out.n_sequences == 1
    copy = pickle.loads(pickle.dumps(out))
    assert copy["input_ids"] == out["input_ids"]
    with pytest.raises(AttributeError):
        _ = out.not_a_field
    plain = BatchEncoding({"input_ids": [[1, 2]]})
    with pytest.raises(ValueError, match="alignment"):
        plain.word_ids()


def test_decode_accepts_arrays_and_tensors(bert):
    ids = bert.encode("hello world")
    assert bert.decode(np.array(ids), skip_special_tokens=True) == "hello world"
    assert bert.decode(np.array([ids, ids]), skip_special_tokens=True) == ["hello world", "hello world"]
    assert bert.batch_decode(np.array(ids)[None], skip_special_tokens=True) == ["hello world"]


def test_bert_options_override_the_tokenizer_json_normaliser():
    cased = BertTokenizerFast.from_pretrained(fixture("wordpiece_vocab_only"), do_lower_case=False)
    lower = BertTokenizerFast.from_pretrained(fixture("wordpiece_vocab_only"))
    assert lower.tokenize("HELLO") == ["hello"]
    assert cased.tokenize("HELLO") != ["hello"]


def test_gpt2_add_prefix_space(gpt2):
    spaced = GPT2TokenizerFast.from_pretrained(fixture("gpt2_bpe"), add_prefix_space=True)
    assert spaced.tokenize("Hello")[0].startswith("Ġ")
    assert not gpt2.tokenize("Hello")[0].startswith("Ġ")


def test_roberta_mask_takes_the_space_before_it(tmp_path):
    """Built from vocab.json + merges.txt, RoBERTa's mask absorbs the preceding space as HF's does
    (no stray "Ġ" token before it), and keeps doing so once saved and reloaded."""
    roberta = AutoTokenizer.from_pretrained(fixture("roberta_vocab_merges_only"))
    ids = roberta("This is a <mask>.")["input_ids"]
    assert ids[-3:] == [roberta.mask_token_id, roberta.convert_tokens_to_ids("."), roberta.sep_token_id]
    assert ids[-4] == roberta.convert_tokens_to_ids("Ġa")
    roberta.save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path)("This is a <mask>.")["input_ids"] == ids


# ---- chat templates ------------------------------------------------------------------------


def test_chat_template_errors(llama, bert):
    with pytest.raises(ValueError, match="no chat template"):
        bert.apply_chat_template([{"role": "user", "content": "hi"}])
    with pytest.raises(ValueError, match="non-empty list"):
        llama.apply_chat_template([])
    with pytest.raises(ValueError, match="cannot both be set"):
        llama.apply_chat_template([{"role": "user", "content": "hi"}], add_generation_prompt=True,
                                  continue_final_message=True)
    with pytest.raises(ValueError, match="not valid Jinja"):
        llama.apply_chat_template([{"role": "user", "content": "hi"}], chat_template="{% for %}")


def test_chat_template_sandbox_blocks_attribute_escapes(llama):
    from jinja2.exceptions import SecurityError

    with pytest.raises(SecurityError):
        llama.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                  chat_template="{{ messages.__class__.__mro__ }}")


def test_several_chat_templates_round_trip(llama, tmp_path):
    llama.chat_template = {"default": "{{ messages[0]['content'] }}", "tool_use": "T:{{ tools | length }}"}
    llama.save_pretrained(tmp_path)
    assert (tmp_path / "additional_chat_templates" / "tool_use.jinja").read_text() == "T:{{ tools | length }}"
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    chat = [{"role": "user", "content": "hey"}]
    assert reloaded.apply_chat_template(chat, tokenize=False) == "hey"
    assert reloaded.apply_chat_template(chat, tools=[{"name": "x"}], tokenize=False) == "T:1"
    assert reloaded.apply_chat_template(chat, chat_template="tool_use", tools=[], tokenize=False) == "T:0"


# ---- saving --------------------------------------------------------------------------------


def test_save_pretrained_writes_hf_files(bert, tmp_path):
    bert.add_special_tokens({"extra_special_tokens": ["<ent>"]})
    bert.model_max_length = 20
    written = bert.save_pretrained(tmp_path)
    assert sorted(os.path.basename(path) for path in written) == [
        "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    assert sorted(os.listdir(tmp_path)) == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "BertTokenizer"
    assert config["model_max_length"] == 20 and config["do_lower_case"] is True
    assert config["extra_special_tokens"] == ["<ent>"]
    assert "name_or_path" not in config and "vocab_file" not in config
    special = json.loads((tmp_path / "special_tokens_map.json").read_text())
    assert special["cls_token"] == "[CLS]" and special["additional_special_tokens"] == ["<ent>"]
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    assert reloaded.extra_special_tokens == ["<ent>"] and reloaded.model_max_length == 20
    assert reloaded("a <ent>")["input_ids"] == bert("a <ent>")["input_ids"]


def test_save_pretrained_refuses_a_file(bert, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        bert.save_pretrained(target)


def test_from_pretrained_overrides_and_single_file(tmp_path):
    tok = AutoTokenizer.from_pretrained(fixture("llama_chat"), padding_side="right", model_max_length=8)
    assert tok.padding_side == "right" and tok.model_max_length == 8
    generic = PreTrainedTokenizerFast.from_pretrained(os.path.join(fixture("gpt2_bpe"), "tokenizer.json"))
    assert generic.encode("hello world") == AutoTokenizer.from_pretrained(fixture("gpt2_bpe")).encode("hello world")


# ---- AutoTokenizer's choice of class -------------------------------------------------------


def _copy_tokenizer_json(source, target):
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(source, "tokenizer.json"), encoding="utf-8") as f:
        (target / "tokenizer.json").write_text(f.read(), encoding="utf-8")


def test_auto_tokenizer_falls_back_to_the_generic_class(tmp_path):
    _copy_tokenizer_json(fixture("gpt2_bpe"), tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "SomeNewTokenizer"}))
    assert type(AutoTokenizer.from_pretrained(tmp_path)) is PreTrainedTokenizerFast


def test_auto_tokenizer_byte_level_llama_class_loads_generically(tmp_path):
    _copy_tokenizer_json(fixture("gpt2_bpe"), tmp_path)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "LlamaTokenizerFast"}))
    tok = AutoTokenizer.from_pretrained(tmp_path)
    assert type(tok) is PreTrainedTokenizerFast and tok.bos_token is None


def test_auto_tokenizer_uses_config_model_type(tmp_path):
    for name in ("vocab.json", "merges.txt"):
        with open(os.path.join(fixture("qwen2_vocab_merges_only"), name), encoding="utf-8") as f:
            (tmp_path / name).write_text(f.read(), encoding="utf-8")
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert type(AutoTokenizer.from_pretrained(tmp_path)) is GPT2TokenizerFast


def test_auto_tokenizer_errors_name_the_problem(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "SomeNewTokenizer"}))
    with pytest.raises(ValueError, match="SomeNewTokenizer"):
        AutoTokenizer.from_pretrained(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="cannot tell which tokenizer"):
        AutoTokenizer.from_pretrained(empty)
    with pytest.raises(ValueError, match="unknown tokenizer_type"):
        AutoTokenizer.from_pretrained(empty, tokenizer_type="nope")
    with pytest.raises(OSError, match="no tokenizer files that BertTokenizerFast can load"):
        BertTokenizerFast.from_pretrained(empty)


def test_constructors_without_files_explain_what_they_need():
    with pytest.raises(ValueError, match="tokenizer_file="):
        PreTrainedTokenizerFast()
    with pytest.raises(ValueError, match="vocab.txt"):
        BertTokenizerFast()
    with pytest.raises(TypeError, match="tokenizers.Tokenizer"):
        PreTrainedTokenizerFast(tokenizer_object="not a tokenizer")


def test_tokenizer_object_is_copied():
    backend = Tokenizer.from_file(os.path.join(fixture("gpt2_bpe"), "tokenizer.json"))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|endoftext|>")
    tok.add_tokens([AddedToken("zzz")])
    assert backend.token_to_id("zzz") is None


# ---- vocabulary file readers ---------------------------------------------------------------


def test_vocabulary_file_errors(tmp_path):
    merges = tmp_path / "merges.txt"
    merges.write_text("#version: 0.2\na b\nc d e\n")
    with pytest.raises(ValueError, match="line 3"):
        load_merges_txt(str(merges))
    not_spm = tmp_path / "tokenizer.model"
    not_spm.write_bytes(b"\xff\xff\xff")
    with pytest.raises(ValueError, match="not a sentencepiece model"):
        SentencePieceModel(str(not_spm))


def test_sentencepiece_reader_reads_the_trainer_spec():
    spm = SentencePieceModel(os.path.join(fixture("spm_llama"), "tokenizer.model"))
    assert spm.model_type == 2 and spm.byte_fallback
    assert (spm.unk_id, spm.bos_id, spm.eos_id, spm.pad_id) == (0, 1, 2, -1)
    assert spm.pieces[1][0] == "<s>" and len(spm.pieces) == 400
    assert not spm.add_dummy_prefix or spm.remove_extra_whitespaces is False


def test_clean_up_tokenization_spaces_only_where_it_is_safe(gpt2):
    unigram = AutoTokenizer.from_pretrained(fixture("spm_unigram"))
    ids = unigram.encode("hello , world", add_special_tokens=False)
    assert unigram.decode(ids) == "hello , world"
    assert unigram.decode(ids, clean_up_tokenization_spaces=True) == "hello, world"
    # Byte-level BPE decodes the exact text; the clean-up would delete a real space.
    ids = gpt2.encode("hello , world")
    assert gpt2.decode(ids, clean_up_tokenization_spaces=True) == "hello , world"


def test_tokenizer_pickles_for_worker_processes(llama):
    copy = pickle.loads(pickle.dumps(llama))
    assert copy.encode("hi there") == llama.encode("hi there")
    assert copy.pad_token_id == llama.pad_token_id and copy.chat_template == llama.chat_template


def test_model_tokenizers_need_a_tokenizer_json_or_all_their_vocabulary_files(gpt2):
    folder = fixture("qwen2_vocab_merges_only")
    vocab, merges = os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")
    with pytest.raises(ValueError, match=r"vocab_file= and merges_file= \(vocab.json, merges.txt\)"):
        GPT2TokenizerFast(vocab_file=vocab)
    with pytest.raises(ValueError, match=r"BertTokenizerFast needs tokenizer_file= \(tokenizer.json\) or vocab_file="):
        BertTokenizerFast()
    built = GPT2TokenizerFast(vocab_file=vocab, merges_file=merges)
    assert built.backend_tokenizer.get_vocab_size() == len(json.load(open(vocab, encoding="utf-8")))
    # a given backend is used as it is, and the vocabulary files are not needed
    given = GPT2TokenizerFast(tokenizer_object=gpt2.backend_tokenizer)
    assert given("Hello world")["input_ids"] == gpt2("Hello world")["input_ids"]
