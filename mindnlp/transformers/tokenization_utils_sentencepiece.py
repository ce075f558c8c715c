# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`SentencePieceBackend`: a Python tokenizer over a sentencepiece `.model` file (HF v5's base of
slow sentencepiece tokenizers: T5, Llama, XLNet, ... and remote-code ones).

The model file is read by mindnlp's own protobuf reader and run by the `tokenizers` library with
sentencepiece's normalisation and unigram/BPE model (see `convert_slow_tokenizer`), so the
`sentencepiece` package is not needed. `sp_model` offers the part of
`sentencepiece.SentencePieceProcessor` that tokenizer code calls.
"""
import os
import shutil

from tokenizers import AddedToken, normalizers

from ..core.serialization import atomic_write
from .convert_slow_tokenizer import SPIECE_UNDERLINE, SentencePieceModel, merges_by_score, sentencepiece_tokenizer
from .tokenization_python import PythonBackend

__all__ = ["SPIECE_UNDERLINE", "SentencePieceBackend", "SentencePieceExtractor", "SentencePieceProcessor"]


class SentencePieceProcessor:
    """Pieces, ids and encoding of a sentencepiece model, named as in `sentencepiece`.

    `add_dummy_prefix=False` stops the "▁" that sentencepiece prepends to the text (HF's
    `legacy=False` tokenizers add it themselves only where a word really starts).
    """

    def __init__(self, model_file, add_dummy_prefix=None):
        model = SentencePieceModel(model_file)
        if add_dummy_prefix is None:
            add_dummy_prefix = model.add_dummy_prefix
        # Sentencepiece prepends its "▁" to the normalised text even when that text already starts
        # with a space (the tokenizers library's Metaspace would not), so it is a normaliser step here.
        model.add_dummy_prefix = False
        self._tokenizer = sentencepiece_tokenizer(model)
        if add_dummy_prefix:
            steps = [self._tokenizer.normalizer] if self._tokenizer.normalizer is not None else []
            self._tokenizer.normalizer = normalizers.Sequence([*steps, normalizers.Prepend(SPIECE_UNDERLINE)])
        self._unk_id = model.unk_id
        self._pieces = [piece for piece, _, _ in model.pieces]
        self._ids = model.vocab_dict()
        with open(model_file, "rb") as f:
            self._proto = f.read()

    def encode(self, text, out_type=int):
        """The pieces (`out_type=str`) or ids of `text`."""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        return encoding.tokens if out_type is str else encoding.ids

    def piece_to_id(self, piece):
        """The id of `piece`, the unknown piece's id for pieces not in the model."""
        return self._ids.get(piece, self._unk_id)

    def id_to_piece(self, index):
        if not 0 <= index < len(self._pieces):
            raise IndexError(f"piece id {index} is out of range for a model of {len(self._pieces)} pieces")
        return self._pieces[index]

    IdToPiece = id_to_piece
    PieceToId = piece_to_id

    def get_piece_size(self):
        return len(self._pieces)

    GetPieceSize = get_piece_size

    def serialized_model_proto(self):
        return self._proto


class SentencePieceExtractor:
    """A sentencepiece model's vocabulary, piece scores and BPE merges, as HF's extractor gives them
    to the converters that build a `tokenizers` pipeline (read here without the sentencepiece
    package)."""

    def __init__(self, model):
        self._model = SentencePieceModel(model)

    def extract(self, vocab_scores=None):
        """({piece: id}, [(piece, score)] in id order, merges by score (merges_by_score)).
        `vocab_scores` is accepted for HF's signature and, as there, not used."""
        scores = [(piece, score) for piece, score, _ in self._model.pieces]
        return self._model.vocab_dict(), scores, merges_by_score(scores)


class SentencePieceBackend(PythonBackend):
    """A `PythonBackend` whose splitting and vocabulary are a sentencepiece model (`vocab_file`).

    `legacy=False` drops sentencepiece's dummy "▁" prefix: text after an added token then starts
    a piece only if it starts with a space.
    """

    vocab_files_names = {"vocab_file": "tokenizer.model"}

    def __init__(self, **kwargs):
        self.vocab_file = kwargs.get("vocab_file")
        if self.vocab_file is None or not os.path.isfile(self.vocab_file):
            raise OSError(f"{type(self).__name__} needs vocab_file= the path of a sentencepiece .model file, "
                          f"got {self.vocab_file!r}")
        if kwargs.pop("sp_model_kwargs", None):
            raise ValueError("sp_model_kwargs (sampling, ...) needs the sentencepiece package, which mindnlp does not use; "
                             "drop it to tokenize deterministically")
        self.legacy = kwargs.get("legacy", True)
        self.sp_model = SentencePieceProcessor(self.vocab_file, add_dummy_prefix=None if self.legacy else False)
        super().__init__(**kwargs)

    @property
    def vocab_size(self):
        return self.sp_model.get_piece_size()

    def get_vocab(self):
        vocab = {self.convert_ids_to_tokens(index): index for index in range(self.vocab_size)}
        vocab.update(self._added_tokens_encoder)
        return vocab

    def _extra_no_split_tokens(self):
        """The special tokens are kept whole even when the model has them as ordinary pieces."""
        return set(self.all_special_tokens)

    def _add_tokens(self, new_tokens, special_tokens=False):
        # A token already registered as this very AddedToken is not registered again.
        known = list(self._added_tokens_decoder.values())
        fresh = [token for token in new_tokens
                 if not (isinstance(token, AddedToken) and any(token == other for other in known))]
        return super()._add_tokens(fresh, special_tokens=special_tokens)

    def _tokenize(self, text, **kwargs):
        """Sentencepiece's pieces of `text`. Without the dummy prefix (`legacy=False`) the model
        would drop a leading "▁"; encoding behind the unk token and cutting it off keeps it."""
        if self.legacy or not text.startswith((SPIECE_UNDERLINE, " ")):
            return self.sp_model.encode(text, out_type=str)
        unk = str(self.unk_token)
        tokens = self.sp_model.encode(unk + text, out_type=str)
        unk_length = len(self.sp_model.encode(unk))
        return tokens[unk_length:] if len(tokens) >= unk_length else tokens

    def _convert_token_to_id(self, token):
        return self.sp_model.piece_to_id(token)

    def _convert_id_to_token(self, index):
        return self.sp_model.id_to_piece(index)

    def convert_tokens_to_string(self, tokens):
        """Pieces to text: "▁" back to spaces, outer spaces stripped."""
        return "".join(tokens).replace(SPIECE_UNDERLINE, " ").strip()

    def save_vocabulary(self, save_directory, filename_prefix=None):
        """Copy the .model file (or write the model it was loaded from, if the file is gone)."""
        prefix = filename_prefix + "-" if filename_prefix else ""
        target = os.path.join(save_directory, prefix + self.vocab_files_names["vocab_file"])
        if os.path.isfile(self.vocab_file):
            if os.path.abspath(self.vocab_file) != os.path.abspath(target):
                shutil.copyfile(self.vocab_file, target)
        else:
            with atomic_write(target) as file:
                file.write(self.sp_model.serialized_model_proto())
        return (target,)
