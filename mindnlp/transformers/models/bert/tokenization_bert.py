# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BERT's WordPiece tokenizer: lower-casing and accent options, `[CLS] A [SEP] B [SEP]` with
token type ids."""
from tokenizers import normalizers

from ...convert_slow_tokenizer import wordpiece_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast


class BertTokenizerFast(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or builds BERT's pipeline from a WordPiece vocab.txt.

    `do_lower_case`, `strip_accents` and `tokenize_chinese_chars` override what a tokenizer.json
    normaliser says, so `from_pretrained(path, do_lower_case=False)` gives a cased tokenizer.
    """

    vocab_files_names = {"vocab_file": "vocab.txt"}
    model_input_names = ["input_ids", "token_type_ids", "attention_mask"]

    def __init__(
        self,
        vocab_file=None,
        tokenizer_file=None,
        do_lower_case=True,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        tokenize_chinese_chars=True,
        strip_accents=None,
        **kwargs,
    ):
        tokenizer_object = self.given_or_built_backend(
            kwargs, tokenizer_file,
            lambda: wordpiece_tokenizer(
                vocab_file, unk_token=unk_token, cls_token=cls_token, sep_token=sep_token, do_lower_case=do_lower_case,
                tokenize_chinese_chars=tokenize_chinese_chars, strip_accents=strip_accents),
            vocab_file=vocab_file)
        super().__init__(
            tokenizer_object=tokenizer_object,
            tokenizer_file=tokenizer_file,
            do_lower_case=do_lower_case,
            unk_token=unk_token,
            sep_token=sep_token,
            pad_token=pad_token,
            cls_token=cls_token,
            mask_token=mask_token,
            tokenize_chinese_chars=tokenize_chinese_chars,
            strip_accents=strip_accents,
            **kwargs,
        )
        self.do_lower_case = do_lower_case
        normalizer = self._tokenizer.normalizer
        if isinstance(normalizer, normalizers.BertNormalizer) and (
            normalizer.lowercase != do_lower_case
            or normalizer.strip_accents != strip_accents
            or normalizer.handle_chinese_chars != tokenize_chinese_chars
        ):
            self._tokenizer.normalizer = normalizers.BertNormalizer(
                clean_text=normalizer.clean_text, handle_chinese_chars=tokenize_chinese_chars,
                strip_accents=strip_accents, lowercase=do_lower_case,
            )


BertTokenizer = BertTokenizerFast
