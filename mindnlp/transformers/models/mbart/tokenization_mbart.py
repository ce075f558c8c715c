# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mBART's tokenizer: sentencepiece pieces in fairseq's numbering, with the 25 language codes
of mBART-cc25 as special tokens.

A sequence is tagged with its language at the end, `tokens </s> src_lang` (and labels encoded
with `text_target=` as `tokens </s> tgt_lang`); generation starts the decoder from the target
code (`forced_bos_token_id`, which the translation pipeline sets from `tgt_lang`).
`MBart50Tokenizer` differs in where the code goes (first) and in its language list.
"""
from tokenizers import AddedToken, decoders, pre_tokenizers, processors

from ...convert_slow_tokenizer import SentencePieceModel, fairseq_unigram_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast

FAIRSEQ_LANGUAGE_CODES = ["ar_AR", "cs_CZ", "de_DE", "en_XX", "es_XX", "et_EE", "fi_FI", "fr_XX", "gu_IN", "hi_IN",
                          "it_IT", "ja_XX", "kk_KZ", "ko_KR", "lt_LT", "lv_LV", "my_MM", "ne_NP", "nl_XX", "ro_RO",
                          "ru_RU", "si_LK", "tr_TR", "vi_VN", "zh_CN"]


class MBartTokenizer(PreTrainedTokenizerFast):
    """Loads tokenizer.json, or builds the unigram model from sentencepiece.bpe.model.

    `src_lang` (default en_XX) and `tgt_lang` choose the codes that tag inputs and targets;
    setting `tokenizer.src_lang` re-tags the inputs that follow."""

    vocab_files_names = {"vocab_file": "sentencepiece.bpe.model", "tokenizer_file": "tokenizer.json"}
    model_input_names = ["input_ids", "attention_mask"]
    language_codes = FAIRSEQ_LANGUAGE_CODES

    def __init__(self, vocab_file=None, tokenizer_file=None, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                 cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>", src_lang=None,
                 tgt_lang=None, additional_special_tokens=None, **kwargs):
        if isinstance(mask_token, str):
            mask_token = AddedToken(mask_token, lstrip=True, rstrip=False, normalized=False, special=True)
        def build():
            spm = SentencePieceModel(vocab_file)
            backend = fairseq_unigram_tokenizer(spm, self.language_codes, bos_token=bos_token, pad_token=pad_token,
                                                eos_token=eos_token, unk_token=unk_token, mask_token=mask_token)
            self.build_text_pipeline(backend, spm)
            return backend

        tokenizer_object = self.given_or_built_backend(kwargs, tokenizer_file, build, vocab_file=vocab_file)
        codes = list(self.language_codes)
        codes += [token for token in additional_special_tokens or () if str(token) not in codes]
        super().__init__(tokenizer_object=tokenizer_object, tokenizer_file=tokenizer_file, bos_token=bos_token,
                         eos_token=eos_token, sep_token=sep_token, cls_token=cls_token, unk_token=unk_token,
                         pad_token=pad_token, mask_token=mask_token, src_lang=src_lang, tgt_lang=tgt_lang,
                         additional_special_tokens=codes, **kwargs)
        self.lang_code_to_id = {code: self.convert_tokens_to_ids(code) for code in self.language_codes}
        self.id_to_lang_code = {index: code for code, index in self.lang_code_to_id.items()}
        self._src_lang = src_lang if src_lang is not None else "en_XX"
        self.tgt_lang = tgt_lang
        self.set_src_lang_special_tokens(self._src_lang)

    @staticmethod
    def build_text_pipeline(backend, spm):
        """As HF reads a sentencepiece file for mBART: no normalisation, whitespace-separated
        words each written with a leading "▁"."""
        backend.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)])
        backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)

    @property
    def src_lang(self):
        return self._src_lang

    @src_lang.setter
    def src_lang(self, language):
        self._src_lang = language
        self.set_src_lang_special_tokens(language)

    def _language_id(self, language):
        index = self.convert_tokens_to_ids(language)
        if language is None or index is None or index == self.unk_token_id:
            raise ValueError(f"{language!r} is not a language code of {type(self).__name__} (known: "
                             f"{', '.join(self.language_codes)})")
        return index

    def language_tags(self, code):
        """(prefix, suffix) ids around a sequence in the language with id `code`: mBART writes
        `tokens </s> code`, for inputs and targets alike."""
        return [], [self.eos_token_id, code]

    def _tag_with_language(self, language):
        """Wrap every encoded sequence (and pair) in the language's tags (see language_tags)."""
        self.cur_lang_code = self._language_id(language)
        prefix, suffix = self.language_tags(self.cur_lang_code)
        self.prefix_tokens, self.suffix_tokens = prefix, suffix
        before = self.convert_ids_to_tokens(prefix)
        after = self.convert_ids_to_tokens(suffix)
        self._tokenizer.post_processor = processors.TemplateProcessing(
            single=before + ["$A"] + after, pair=before + ["$A", "$B"] + after,
            special_tokens=list(zip(before + after, prefix + suffix)))

    def set_src_lang_special_tokens(self, src_lang):
        """Tag the inputs that follow with `src_lang`."""
        self._tag_with_language(src_lang)

    def set_tgt_lang_special_tokens(self, lang):
        """Tag the targets that follow with `lang`."""
        self._tag_with_language(lang)

    def _switch_to_input_mode(self):
        self.set_src_lang_special_tokens(self.src_lang)

    def _switch_to_target_mode(self):
        if self.tgt_lang is None:
            self.tgt_lang = self._src_lang
        self.set_tgt_lang_special_tokens(self.tgt_lang)

    def _build_translation_inputs(self, raw_inputs, return_tensors, src_lang, tgt_lang, **extra_kwargs):
        """The translation pipeline's inputs: the text tagged with `src_lang`, and generation
        forced to begin with `tgt_lang`."""
        if src_lang is None or tgt_lang is None:
            raise ValueError("Translation requires a `src_lang` and a `tgt_lang` for this model")
        self.src_lang = src_lang
        inputs = self(raw_inputs, add_special_tokens=True, return_tensors=return_tensors, **extra_kwargs)
        inputs["forced_bos_token_id"] = self._language_id(tgt_lang)
        return inputs


MBartTokenizerFast = MBartTokenizer
