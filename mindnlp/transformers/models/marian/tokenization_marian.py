# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Marian's tokenizer: a source and a target sentencepiece model, and the model's vocab.json
that numbers their pieces (one joint vocabulary, or `target_vocab.json` for the target side
when `separate_vocabs`).

Text is tokenized with the source model; `text_target=` (labels) with the target model.
Each side is a `tokenizers` pipeline built from the files (see `marian_tokenizer` in
convert_slow_tokenizer), so neither `sentencepiece` nor `protobuf` is needed. Decoding reads
the target side, or with a joint vocabulary the source side as HF does
(`use_source_tokenizer=` chooses).
"""
import json
import os
import shutil

from tokenizers import AddedToken

from ...convert_slow_tokenizer import SentencePieceModel, load_vocab_json, marian_tokenizer
from ...tokenization_utils_fast import PreTrainedTokenizerFast

VOCAB_FILES_NAMES = {
    "source_spm": "source.spm",
    "target_spm": "target.spm",
    "vocab": "vocab.json",
    "target_vocab_file": "target_vocab.json",
}


class MarianTokenizer(PreTrainedTokenizerFast):
    vocab_files_names = VOCAB_FILES_NAMES
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, source_spm=None, target_spm=None, vocab=None, target_vocab_file=None, source_lang=None,
                 target_lang=None, unk_token="<unk>", eos_token="</s>", pad_token="<pad>", model_max_length=512,
                 separate_vocabs=False, **kwargs):
        if source_spm is None or target_spm is None or vocab is None:
            raise ValueError(f"{type(self).__name__} needs source_spm=, target_spm= and vocab= "
                             "(source.spm, target.spm, vocab.json)")
        self.separate_vocabs = separate_vocabs
        self.encoder = load_vocab_json(vocab)
        self.target_encoder = load_vocab_json(target_vocab_file) if separate_vocabs else self.encoder
        self.spm_files = [source_spm, target_spm]
        self.source_lang, self.target_lang = source_lang, target_lang
        tokens = dict(eos_token=str(eos_token), unk_token=str(unk_token))
        self._source_backend = marian_tokenizer(SentencePieceModel(source_spm), self.encoder, **tokens)
        self._target_backend = marian_tokenizer(SentencePieceModel(target_spm), self.target_encoder, **tokens)
        self.supported_language_codes = [] if separate_vocabs else [
            token for token in self.encoder if token.startswith(">>") and token.endswith("<<")]
        super().__init__(tokenizer_object=self._source_backend, source_lang=source_lang, target_lang=target_lang,
                         unk_token=unk_token, eos_token=eos_token, pad_token=pad_token,
                         model_max_length=model_max_length, separate_vocabs=separate_vocabs,
                         target_vocab_file=target_vocab_file, **kwargs)
        # The base class works on a copy of the backend it is given: that copy is the source side.
        # The target side knows the same special tokens (at its own vocabulary's ids).
        self._source_backend = self._tokenizer
        self._target_backend.add_special_tokens([
            AddedToken(str(token), normalized=False, special=True) for token in self.all_special_tokens
            if str(token) in self.target_encoder])
        self._target_backend.encode_special_tokens = self._tokenizer.encode_special_tokens

    @property
    def vocab_size(self):
        return len(self.encoder)

    def get_vocab(self):
        return self.get_src_vocab()

    def get_src_vocab(self):
        return dict(self.encoder, **self.added_tokens_encoder)

    def get_tgt_vocab(self):
        return dict(self.target_encoder)

    def _switch_to_input_mode(self):
        self._tokenizer = self._source_backend

    def _switch_to_target_mode(self):
        self._tokenizer = self._target_backend

    def _decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None,
                use_source_tokenizer=None):
        """Ids are read in the target vocabulary unless `use_source_tokenizer` (default: the
        source side when the vocabulary is joint, as HF)."""
        if use_source_tokenizer is None:
            use_source_tokenizer = not self.separate_vocabs
        self._tokenizer = self._source_backend if use_source_tokenizer else self._target_backend
        try:
            return super()._decode(token_ids, skip_special_tokens=skip_special_tokens,
                                   clean_up_tokenization_spaces=clean_up_tokenization_spaces)
        finally:
            self._switch_to_input_mode()

    def _save_backend(self, save_directory, prefix):
        """The files HF's MarianTokenizer reads: both sentencepiece models and the vocabularies."""
        written = []
        for name, source in zip(("source_spm", "target_spm"), self.spm_files):
            target = os.path.join(save_directory, prefix + VOCAB_FILES_NAMES[name])
            if os.path.abspath(source) != os.path.abspath(target):
                shutil.copyfile(source, target)
            written.append(target)
        vocabularies = [("vocab", self.encoder)]
        if self.separate_vocabs:
            vocabularies.append(("target_vocab_file", self.target_encoder))
        for name, vocab in vocabularies:
            path = os.path.join(save_directory, prefix + VOCAB_FILES_NAMES[name])
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(vocab, fh, indent=2, ensure_ascii=False)
            written.append(path)
        return written

    def _config_for_save(self):
        config = super()._config_for_save()
        if self.separate_vocabs:
            config["target_vocab_file"] = VOCAB_FILES_NAMES["target_vocab_file"]
        return config

    def _saved_class_name(self):
        return "MarianTokenizer"


__all__ = ["MarianTokenizer"]
