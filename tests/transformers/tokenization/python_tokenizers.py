"""Custom Python tokenizers, written once against whichever `PythonBackend` / `SentencePieceBackend`
is passed in, and the calls whose outputs are compared between HF transformers and mindnlp.

tests/fixtures/make_python_tokenizer_fixtures.py builds them on HF's base classes and records
the outputs; tests/transformers/tokenization/test_tokenization_python.py builds them on mindnlp's
and compares. This is how a remote-code tokenizer is written: only the vocabulary hooks.
"""
import json
import re

from tokenizers import AddedToken

from tests.transformers.tokenization.cases import BATCH, PAIR, TEXT, UNICODE, to_json

WORD_RE = re.compile(r"\w+|[^\w\s]")

ADDED_TEXTS = [
    "hello newword world",
    "hello <lst>   world",
    "hello   <rst>   world",
    "hello swx sw world sw",
    "a<ctrl>b [CLS] hello [SEP]",
    "HELLO NewWord",
]


def word_tokenizer_class(base):
    """A lower-casing word-level tokenizer over a vocab.json, with BERT's [CLS] A [SEP] B [SEP]."""

    class WordTokenizer(base):
        vocab_files_names = {"vocab_file": "vocab.json"}

        def __init__(self, vocab_file, do_lower_case=True, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                     pad_token="[PAD]", mask_token="[MASK]", **kwargs):
            with open(vocab_file, encoding="utf-8") as f:
                self.vocab = json.load(f)
            self.ids_to_tokens = {index: token for token, index in self.vocab.items()}
            self.do_lower_case = do_lower_case
            kwargs.setdefault("special_tokens_pattern", "cls_sep")
            super().__init__(vocab_file=vocab_file, do_lower_case=do_lower_case, unk_token=unk_token,
                             cls_token=cls_token, sep_token=sep_token, pad_token=pad_token, mask_token=mask_token,
                             **kwargs)

        @property
        def vocab_size(self):
            return len(self.vocab)

        def get_vocab(self):
            return {**self.vocab, **self._added_tokens_encoder}

        def _tokenize(self, text, **kwargs):
            return WORD_RE.findall(text.lower() if self.do_lower_case else text)

        def _convert_token_to_id(self, token):
            return self.vocab.get(token, self.vocab[str(self.unk_token)])

        def _convert_id_to_token(self, index):
            return self.ids_to_tokens.get(index, str(self.unk_token))

    return WordTokenizer


def spm_tokenizer_class(base):
    """A sentencepiece tokenizer that starts every sequence with bos and pads with unk, as Llama's does."""

    class BosSentencePieceTokenizer(base):
        def __init__(self, vocab_file, unk_token="<unk>", bos_token="<s>", eos_token="</s>", pad_token="<unk>",
                     **kwargs):
            kwargs.setdefault("special_tokens_pattern", "bos")
            super().__init__(vocab_file=vocab_file, unk_token=unk_token, bos_token=bos_token, eos_token=eos_token,
                             pad_token=pad_token, **kwargs)

    return BosSentencePieceTokenizer


def python_encode_cases(has_pad_token):
    """The shared encode cases minus offsets, which Python tokenizers do not track (asking for
    them gives the other fields, as in HF), plus inputs given as ids and batches of pairs."""
    from tests.transformers.tokenization.cases import encode_cases

    cases = [case for case in encode_cases(has_pad_token) if not case["kwargs"].get("return_offsets_mapping")]
    cases += [
        {"name": "offsets_ignored", "kwargs": {"text": TEXT, "return_offsets_mapping": True}},
        {"name": "unicode", "kwargs": {"text": UNICODE}},
        {"name": "ids_input", "kwargs": {"text": [5, 6, 7], "text_pair": [8, 9]}},
        {"name": "batch_of_pairs", "kwargs": {"text": [(TEXT, PAIR), ("short", "one")], "padding": bool(has_pad_token)}},
        {"name": "pair_longest_first_left", "kwargs": {"text": TEXT, "text_pair": PAIR, "truncation": "longest_first",
                                                       "max_length": 9, "truncation_side": "left"}},
    ]
    return cases


def added_token_calls(tokenizer):
    """Add plain, stripping, single-word and special tokens, then tokenize, encode and decode."""
    result = {
        "add_plain": tokenizer.add_tokens(["newword", "hello"]),
        "add_flags": tokenizer.add_tokens([AddedToken("<lst>", lstrip=True), AddedToken("<rst>", rstrip=True),
                                           AddedToken("sw", single_word=True)]),
        "add_special": tokenizer.add_special_tokens({"extra_special_tokens": ["<ctrl>"]}),
        "len": len(tokenizer),
        "vocab_size": tokenizer.vocab_size,
        "added_vocab": tokenizer.get_added_vocab(),
        "added_tokens_decoder": {str(index): [token.content, token.special, token.lstrip, token.rstrip,
                                              token.single_word, token.normalized]
                                 for index, token in tokenizer.added_tokens_decoder.items()},
        "all_special_tokens": tokenizer.all_special_tokens,
        "all_special_ids": tokenizer.all_special_ids,
    }
    for i, text in enumerate(ADDED_TEXTS):
        ids = tokenizer.encode(text)
        result[f"text{i}"] = {
            "tokenize": tokenizer.tokenize(text),
            "tokenize_split_special": tokenizer.tokenize(text, split_special_tokens=True),
            "encode": ids,
            "decode": tokenizer.decode(ids),
            "decode_skip": tokenizer.decode(ids, skip_special_tokens=True),
        }
    return to_json(result)


def structure_calls(tokenizer):
    """Special-token layouts, masks and token types straight from the hooks."""
    a, b = [10, 11, 12], [13, 14]
    result = {
        "num_special_single": tokenizer.num_special_tokens_to_add(),
        "num_special_pair": tokenizer.num_special_tokens_to_add(pair=True),
        "build_single": tokenizer.build_inputs_with_special_tokens(a),
        "build_pair": tokenizer.build_inputs_with_special_tokens(a, b),
        "mask_single": tokenizer.get_special_tokens_mask(a),
        "mask_pair": tokenizer.get_special_tokens_mask(a, b),
        "mask_already": tokenizer.get_special_tokens_mask(tokenizer.build_inputs_with_special_tokens(a, b),
                                                          already_has_special_tokens=True),
        "types_single": tokenizer.create_token_type_ids_from_sequences(a),
        "types_pair": tokenizer.create_token_type_ids_from_sequences(a, b),
        "prepare_for_model": dict(tokenizer.prepare_for_model(a, b, truncation="only_second", max_length=7,
                                                              return_special_tokens_mask=True)),
        "batch_decode": tokenizer.batch_decode([tokenizer.encode(text) for text in BATCH], skip_special_tokens=True),
        "decode_unicode": tokenizer.decode(tokenizer.encode(UNICODE)),
    }
    return to_json(result)


PATTERNS = ["none", "eos", "bos", "bos_eos", "cls_double_sep", "cls_sep"]
