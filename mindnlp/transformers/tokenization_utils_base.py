# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""What every tokenizer shares, whatever does the splitting: the encoded-batch container, special
tokens, padding and truncation options, chat templates, and the on-disk format.

The format is Hugging Face's (tokenizer_config.json, special_tokens_map.json, chat_template.jinja,
plus the backend's own files), so a folder saved here loads in HF transformers and the reverse.
The splitting itself lives in `tokenization_utils_fast.PreTrainedTokenizerFast` (the `tokenizers`
library) or in a Python subclass of `tokenization_python.PythonBackend`.
"""
import copy
import json
import os
import re
from collections import UserDict
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
from tokenizers import AddedToken

from ..core.serialization import write_text_atomic
from .utils.hub import cached_file

TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
SPECIAL_TOKENS_MAP_FILE = "special_tokens_map.json"
ADDED_TOKENS_FILE = "added_tokens.json"
FULL_TOKENIZER_FILE = "tokenizer.json"
CHAT_TEMPLATE_FILE = "chat_template.jinja"
LEGACY_CHAT_TEMPLATE_FILE = "chat_template.json"
CHAT_TEMPLATE_DIR = "additional_chat_templates"

# A model_max_length above LARGE_INTEGER means "the checkpoint did not say": padding or truncating
# to it is then switched off instead of producing absurd lengths.
VERY_LARGE_INTEGER = int(1e30)
LARGE_INTEGER = int(1e20)

# tokenizer_config.json keys that describe how a tokenizer was loaded, not what it is.
_LOADING_KEYS = (
    "name_or_path",
    "is_local",
    "local_files_only",
    "backend",
    "files_loaded",
    "tokenizer_file",
    "special_tokens_map_file",
    "auto_map",
)


class _StrEnum(str, Enum):
    """A string enum whose error for a bad value lists the accepted ones."""

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"{value!r} is not a valid {cls.__name__}; choose one of {[m.value for m in cls]}")


class PaddingStrategy(_StrEnum):
    LONGEST = "longest"
    MAX_LENGTH = "max_length"
    DO_NOT_PAD = "do_not_pad"


class TruncationStrategy(_StrEnum):
    ONLY_FIRST = "only_first"
    ONLY_SECOND = "only_second"
    LONGEST_FIRST = "longest_first"
    DO_NOT_TRUNCATE = "do_not_truncate"


class TensorType(_StrEnum):
    """`return_tensors` values. "pt" and "ms" both give mindnlp core tensors: code written for
    PyTorch passes "pt" and runs unchanged on `from mindnlp import core as torch`."""

    PYTORCH = "pt"
    MINDSPORE = "ms"
    NUMPY = "np"


class CharSpan(NamedTuple):
    """Characters [start, end) of the original string."""

    start: int
    end: int


class TokenSpan(NamedTuple):
    """Tokens [start, end) of an encoded sequence."""

    start: int
    end: int


def to_py_obj(obj):
    """Turn numpy arrays, numpy scalars and core tensors (anything with `tolist`) into Python lists and ints."""
    if isinstance(obj, Mapping):
        return {key: to_py_obj(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_py_obj(item) for item in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return obj


def _check_token_ids(token_ids):
    """What `decode` accepts, after arrays and tensors became lists: an int, a list of ints, or a
    list of such lists. Anything else is a TypeError that says what came instead (the tokenizers
    library would say "Can't extract `str` to `Vec`")."""
    if isinstance(token_ids, int):
        return
    rows = token_ids if isinstance(token_ids, list) and token_ids and isinstance(token_ids[0], list) else [token_ids]
    for row in rows:
        if isinstance(row, list) and all(isinstance(i, int) for i in row):
            continue
        wrong = row if not isinstance(row, list) else next(i for i in row if not isinstance(i, int))
        hint = ("; to turn text into ids, call the tokenizer: tokenizer(text)[\"input_ids\"]"
                if isinstance(wrong, str) else "")
        raise TypeError(f"decode() takes token ids (an int, a list of ints, or an array or tensor of ints), got "
                        f"{type(wrong).__name__} {wrong!r:.40}{hint}")


def _json_text(obj):
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _added_tokens_from_json(obj):
    """Rebuild AddedToken objects that tokenizer_config.json files of HF v4 store as
    {"__type": "AddedToken", "content": ...}; everything else is returned unchanged."""
    if isinstance(obj, dict) and obj.get("__type") == "AddedToken":
        fields = {key: value for key, value in obj.items() if key != "__type"}
        return AddedToken(**fields)
    if isinstance(obj, list):
        return [_added_tokens_from_json(item) for item in obj]
    if isinstance(obj, dict):
        return {key: _added_tokens_from_json(value) for key, value in obj.items()}
    return obj


class BatchEncoding(UserDict):
    """The output of a tokenizer call: a dict of `input_ids`, `attention_mask`, ... that also reads
    as attributes (`enc.input_ids`), plus the `tokenizers.Encoding` objects behind it, which map
    between characters, words and tokens (`word_ids`, `char_to_token`, ...).

    `encodings` holds one Encoding per row of the batch (overflowing windows are rows of their own).
    """

    def __init__(self, data=None, encoding=None, tensor_type=None, n_sequences=None):
        super().__init__(data)
        if encoding is not None and not isinstance(encoding, (list, tuple)):
            encoding = [encoding]
        self._encodings = encoding
        if n_sequences is None and encoding:
            n_sequences = encoding[0].n_sequences
        self._n_sequences = n_sequences
        self.convert_to_tensors(tensor_type)

    @property
    def n_sequences(self):
        """1 for single sequences, 2 for pairs, None when unknown."""
        return self._n_sequences

    @property
    def is_fast(self):
        return self._encodings is not None

    @property
    def encodings(self):
        return self._encodings

    def __getitem__(self, item):
        """A string key gives a field; an int gives that row's `tokenizers.Encoding`; a slice gives
        every field restricted to those rows."""
        if isinstance(item, str):
            return self.data[item]
        if isinstance(item, slice):
            return {key: value[item] for key, value in self.data.items()}
        if self._encodings is not None:
            return self._encodings[item]
        raise KeyError(f"{item!r}: index with a field name or a slice (this encoding carries no per-row Encoding)")

    def __getattr__(self, item):
        try:
            return self.data[item]
        except KeyError:
            raise AttributeError(f"BatchEncoding has no field {item!r}") from None

    def __getstate__(self):
        return {"data": self.data, "encodings": self._encodings, "n_sequences": self._n_sequences}

    def __setstate__(self, state):
        self.data = state["data"]
        self._encodings = state["encodings"]
        self._n_sequences = state.get("n_sequences")

    def _encoding(self, batch_index):
        if not self._encodings:
            raise ValueError("token/word/character alignment needs the tokenizers.Encoding objects, which this encoding lacks")
        return self._encodings[batch_index]

    def tokens(self, batch_index=0):
        """The token strings of row `batch_index`."""
        return self._encoding(batch_index).tokens

    def sequence_ids(self, batch_index=0):
        """For each token, 0 or 1 for the sequence it came from, None for added special tokens."""
        return self._encoding(batch_index).sequence_ids

    def word_ids(self, batch_index=0):
        """For each token, the index of the word it belongs to, None for special tokens."""
        return self._encoding(batch_index).word_ids

    def _split_index(self, batch_or_index, index):
        """Alignment methods take (index) for row 0 or (batch_index, index)."""
        if index is None:
            return 0, batch_or_index
        return batch_or_index, index

    def token_to_sequence(self, batch_or_token_index, token_index=None):
        batch_index, token_index = self._split_index(batch_or_token_index, token_index)
        if token_index < 0:
            token_index += len(self._encoding(batch_index).ids)
        return self._encoding(batch_index).token_to_sequence(token_index)

    def token_to_word(self, batch_or_token_index, token_index=None):
        batch_index, token_index = self._split_index(batch_or_token_index, token_index)
        if token_index < 0:
            token_index += len(self._encoding(batch_index).ids)
        return self._encoding(batch_index).token_to_word(token_index)

    def word_to_tokens(self, batch_or_word_index, word_index=None, sequence_index=0):
        batch_index, word_index = self._split_index(batch_or_word_index, word_index)
        span = self._encoding(batch_index).word_to_tokens(word_index, sequence_index)
        return TokenSpan(*span) if span is not None else None

    def token_to_chars(self, batch_or_token_index, token_index=None):
        batch_index, token_index = self._split_index(batch_or_token_index, token_index)
        span = self._encoding(batch_index).token_to_chars(token_index)
        return CharSpan(*span) if span is not None else None

    def char_to_token(self, batch_or_char_index, char_index=None, sequence_index=0):
        batch_index, char_index = self._split_index(batch_or_char_index, char_index)
        return self._encoding(batch_index).char_to_token(char_index, sequence_index)

    def word_to_chars(self, batch_or_word_index, word_index=None, sequence_index=0):
        batch_index, word_index = self._split_index(batch_or_word_index, word_index)
        return CharSpan(*self._encoding(batch_index).word_to_chars(word_index, sequence_index))

    def char_to_word(self, batch_or_char_index, char_index=None, sequence_index=0):
        batch_index, char_index = self._split_index(batch_or_char_index, char_index)
        return self._encoding(batch_index).char_to_word(char_index, sequence_index)

    def convert_to_tensors(self, tensor_type=None):
        """Turn every field into a numpy array ("np") or a mindnlp core tensor ("pt", "ms").

        Rows of different lengths cannot form a tensor: that is an error naming the field, with
        the options that make the rows equal.
        """
        if tensor_type is None:
            return self
        tensor_type = TensorType(tensor_type)
        for key, value in self.items():
            if isinstance(value, np.ndarray) or (tensor_type != TensorType.NUMPY and hasattr(value, "tolist")):
                array = value
            else:
                array = _to_int_array(key, value)
            if tensor_type != TensorType.NUMPY and isinstance(array, np.ndarray):
                from mindnlp import core

                array = core.tensor(array)
            self[key] = array
        return self

    def to(self, device):
        """Move every tensor field to `device` (core tensors only); returns self."""
        self.data = {key: value.to(device) if hasattr(value, "to") else value for key, value in self.data.items()}
        return self


def _to_int_array(key, value):
    if isinstance(value, list):
        # The tokenizer's own output (lists of ints, rows of equal length) converts directly:
        # walking it with to_py_obj first costs a Python call per token.
        try:
            array = np.asarray(value)
        except ValueError:              # rows of different lengths: reported below
            array = None
        if array is not None and array.dtype.kind in "biuf" and array.size:
            return array
    value = to_py_obj(value)
    if isinstance(value, list) and value and isinstance(value[0], list) and len({len(row) for row in value}) > 1:
        raise ValueError(
            f"cannot make a tensor of `{key}`: its rows have different lengths "
            f"{sorted({len(row) for row in value})}; pass padding=True (and truncation=True) to make them equal"
        )
    array = np.asarray(value)
    if array.size == 0:
        return np.asarray(value, dtype=np.int64)
    return array


class PreTrainedTokenizerBase:
    """Special tokens, padding/truncation rules, chat templates and saving/loading, shared by all
    tokenizers. Subclasses supply the vocabulary and the encoding itself (`_encode_plus`, `_decode`,
    `convert_tokens_to_ids`, `_add_tokens`, ...)."""

    # Maps __init__ argument names to the file names of the vocabulary files the class can be
    # built from when there is no tokenizer.json, e.g. {"vocab_file": "vocab.txt"}.
    vocab_files_names = {}
    # The vocabulary-file arguments read even beside a tokenizer.json, as files that hold more
    # than the vocabulary (Whisper's normalizer.json spelling table).
    auxiliary_files_names = ()
    # Whether a folder's tokenizer.json builds this class; Python tokenizers read only their own
    # vocabulary files, even where a tokenizer.json sits beside them.
    reads_tokenizer_json = True
    # Whether keyword arguments the call does not know go on to `tokenize` (a Python tokenizer's
    # `prepare_for_tokenization` options, e.g. `add_prefix_space=True`); otherwise they are an error.
    accepts_tokenize_kwargs = False
    # The first name is the model's main input: `pad` reads the sequence length from it.
    model_input_names = ["input_ids", "attention_mask"]
    padding_side = "right"
    truncation_side = "right"
    SPECIAL_TOKENS_ATTRIBUTES = [
        "bos_token",
        "eos_token",
        "unk_token",
        "sep_token",
        "pad_token",
        "cls_token",
        "mask_token",
    ]

    def __init__(self, **kwargs):
        if "additional_special_tokens" in kwargs and not kwargs.get("extra_special_tokens"):
            kwargs["extra_special_tokens"] = kwargs.pop("additional_special_tokens")
        kwargs.pop("additional_special_tokens", None)
        object.__setattr__(self, "_special_tokens_map", dict.fromkeys(self.SPECIAL_TOKENS_ATTRIBUTES))
        object.__setattr__(self, "_extra_special_tokens", [])
        # Model-specific named tokens (`image_token`, ...) get the same attribute access as the
        # standard ones; the class-level list is copied so one instance's names never leak into another.
        object.__setattr__(self, "SPECIAL_TOKENS_ATTRIBUTES", list(self.SPECIAL_TOKENS_ATTRIBUTES))

        self.init_kwargs = {key: value for key, value in copy.deepcopy(kwargs).items() if key not in _LOADING_KEYS}
        self.name_or_path = kwargs.pop("name_or_path", "")
        self._pad_token_type_id = 0

        model_specific = dict(kwargs.pop("model_specific_special_tokens", None) or {})
        for key in list(kwargs):
            value = kwargs[key]
            if key in self.SPECIAL_TOKENS_ATTRIBUTES:
                kwargs.pop(key)
                if value is not None:
                    self._check_token_value(key, value)
                    self._special_tokens_map[key] = value
            elif key == "extra_special_tokens":
                kwargs.pop(key)
                if isinstance(value, dict):
                    model_specific.update(value)
                elif isinstance(value, (list, tuple)):
                    for token in value:
                        self._check_token_value(key, token)
                    self._extra_special_tokens = list(value)
                elif value is not None:
                    raise TypeError(f"extra_special_tokens must be a list of tokens or a dict of named tokens, got {type(value).__name__}")
            elif key.endswith("_token") and isinstance(value, (str, AddedToken)):
                model_specific[key] = kwargs.pop(key)
        for key, value in model_specific.items():
            self._check_token_value(key, value)
            if key not in self.SPECIAL_TOKENS_ATTRIBUTES:
                self.SPECIAL_TOKENS_ATTRIBUTES.append(key)
            self._special_tokens_map[key] = value

        model_max_length = kwargs.pop("model_max_length", kwargs.pop("max_len", None))
        self.model_max_length = model_max_length if model_max_length is not None else VERY_LARGE_INTEGER
        self.padding_side = kwargs.pop("padding_side", type(self).padding_side)
        self._check_side("padding_side", self.padding_side)
        self.truncation_side = kwargs.pop("truncation_side", type(self).truncation_side)
        self._check_side("truncation_side", self.truncation_side)
        self.model_input_names = list(kwargs.pop("model_input_names", type(self).model_input_names))
        self.clean_up_tokenization_spaces = kwargs.pop("clean_up_tokenization_spaces", False)
        self.split_special_tokens = kwargs.pop("split_special_tokens", False)
        chat_template = kwargs.pop("chat_template", None)
        if isinstance(chat_template, (list, tuple)):
            # tokenizer_config.json stores several templates as [{"name": ..., "template": ...}].
            chat_template = {entry["name"]: entry["template"] for entry in chat_template}
        self.chat_template = chat_template

    @staticmethod
    def _check_side(name, value):
        if value not in ("left", "right"):
            raise ValueError(f"{name} must be 'left' or 'right', got {value!r}")

    @staticmethod
    def _check_token_value(name, value):
        if not isinstance(value, (str, AddedToken)):
            raise TypeError(f"special token {name} must be a str or tokenizers.AddedToken, got {type(value).__name__}")

    # ---- special tokens -------------------------------------------------------------------

    def __getattr__(self, key):
        """`bos_token` gives the token string, `bos_token_id` its id (None when unset); likewise
        for every named special token and for `extra_special_tokens(_ids)`. Only reached for names
        that are not ordinary attributes."""
        state = self.__dict__
        base = key[: -len("_id")] if key.endswith("_id") else key[: -len("_ids")] if key.endswith("_ids") else key
        special = state.get("_special_tokens_map", {})
        if base in special:
            value = special[base]
            if value is None:
                return None
            return self.convert_tokens_to_ids(str(value)) if key != base else str(value)
        if base == "extra_special_tokens" and "_extra_special_tokens" in state:
            tokens = [str(token) for token in state["_extra_special_tokens"]]
            return self.convert_tokens_to_ids(tokens) if key != base else tokens
        raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")

    def __setattr__(self, key, value):
        """Assigning `pad_token = "<pad>"` (or `pad_token_id = 0`) records the special token; it
        does not add it to the vocabulary (use `add_special_tokens` for that)."""
        base = key[: -len("_id")] if key.endswith("_id") else key[: -len("_ids")] if key.endswith("_ids") else key
        special = self.__dict__.get("_special_tokens_map")
        if special is not None and base in self.SPECIAL_TOKENS_ATTRIBUTES:
            if key != base and value is not None:
                value = self.convert_ids_to_tokens(value)
            if value is not None:
                self._check_token_value(base, value)
            special[base] = value
            return
        if special is not None and base == "extra_special_tokens":
            if key != base and value is not None:
                value = [self.convert_ids_to_tokens(index) for index in value]
            if value is not None and not isinstance(value, (list, tuple)):
                raise TypeError(f"extra_special_tokens must be a list, got {type(value).__name__}")
            object.__setattr__(self, "_extra_special_tokens", list(value or []))
            return
        object.__setattr__(self, key, value)

    def __bool__(self):
        # `if tokenizer:` must not fall back on __len__ (the vocabulary size).
        return True

    @property
    def added_tokens_encoder(self):
        """{content: id} for every added token, in id order."""
        return {token.content: index for index, token in sorted(self.added_tokens_decoder.items())}

    @property
    def pad_token_type_id(self):
        return self._pad_token_type_id

    @property
    def special_tokens_map(self):
        """The named special tokens that are set, as {attribute: token string}."""
        return {attr: str(value) for attr, value in self._special_tokens_map.items() if value is not None}

    @property
    def all_special_tokens(self):
        """Every special token string (named, then extra), without duplicates."""
        tokens = [str(value) for value in self._special_tokens_map.values() if value is not None]
        tokens += [str(token) for token in self._extra_special_tokens]
        return list(dict.fromkeys(tokens))

    @property
    def all_special_ids(self):
        return self.convert_tokens_to_ids(self.all_special_tokens)

    def add_special_tokens(self, special_tokens_dict, replace_extra_special_tokens=True):
        """Set named special tokens (`{"pad_token": "[PAD]"}`) and/or `extra_special_tokens`, adding
        those the vocabulary lacks. Returns how many tokens were new (resize the model's embeddings
        to `len(tokenizer)` after adding)."""
        if not special_tokens_dict:
            return 0
        special_tokens_dict = dict(special_tokens_dict)
        if "additional_special_tokens" in special_tokens_dict and not special_tokens_dict.get("extra_special_tokens"):
            special_tokens_dict["extra_special_tokens"] = special_tokens_dict.pop("additional_special_tokens")
        to_add = []
        for key, value in special_tokens_dict.items():
            if key == "extra_special_tokens":
                if not isinstance(value, (list, tuple)):
                    raise ValueError(f"extra_special_tokens must be a list of str or AddedToken, got {value!r}")
                for token in value:
                    self._check_token_value(key, token)
                new_tokens = [
                    AddedToken(token, normalized=False, special=True) if isinstance(token, str) else token
                    for token in value
                    if replace_extra_special_tokens or str(token) not in self.extra_special_tokens
                ]
                if replace_extra_special_tokens:
                    self._extra_special_tokens = list(new_tokens)
                else:
                    self._extra_special_tokens.extend(new_tokens)
                to_add.extend(new_tokens)
            elif key in self.SPECIAL_TOKENS_ATTRIBUTES:
                self._check_token_value(key, value)
                if isinstance(value, str):
                    value = AddedToken(value, normalized=False, special=True)
                self._special_tokens_map[key] = value
                to_add.append(value)
            else:
                raise ValueError(
                    f"{key!r} is not a special token attribute; use one of {self.SPECIAL_TOKENS_ATTRIBUTES + ['extra_special_tokens']}"
                )
        return self.add_tokens(to_add, special_tokens=True)

    def add_tokens(self, new_tokens, special_tokens=False):
        """Add tokens (str or AddedToken) the vocabulary lacks; they are never split. Returns the
        number of new ids."""
        if not new_tokens:
            return 0
        if not isinstance(new_tokens, (list, tuple)):
            new_tokens = [new_tokens]
        for token in new_tokens:
            self._check_token_value("new token", token)
        return self._add_tokens(list(new_tokens), special_tokens=special_tokens)

    def get_special_tokens_mask(self, token_ids_0, token_ids_1=None, already_has_special_tokens=False):
        """1 for special tokens, 0 for others, over ids that already contain their special tokens
        (what data collators pass). For raw text, ask the tokenizer call itself with
        `return_special_tokens_mask=True`."""
        if not already_has_special_tokens:
            raise ValueError(
                "get_special_tokens_mask works on ids that already contain special tokens "
                "(already_has_special_tokens=True); use tokenizer(text, return_special_tokens_mask=True) for raw text"
            )
        if token_ids_1 is not None:
            raise ValueError("token_ids_1 must be None when the ids already contain their special tokens")
        special = set(self.all_special_ids)
        return [1 if int(index) in special else 0 for index in to_py_obj(token_ids_0)]

    # ---- lengths and strategies -----------------------------------------------------------

    @property
    def max_len_single_sentence(self):
        return self.model_max_length - self.num_special_tokens_to_add(pair=False)

    @property
    def max_len_sentences_pair(self):
        return self.model_max_length - self.num_special_tokens_to_add(pair=True)

    def _get_padding_truncation_strategies(self, padding=False, truncation=None, max_length=None, pad_to_multiple_of=None):
        """Resolve the user-facing `padding`/`truncation`/`max_length` options into strategies.

        `max_length` alone means truncation (HF's behaviour); a missing `max_length` falls back
        to `model_max_length`, and when the checkpoint gave none, max-length padding and
        truncation are switched off.
        """
        if max_length is not None and padding is False and truncation is None:
            truncation = TruncationStrategy.LONGEST_FIRST
        if padding is True:
            padding_strategy = PaddingStrategy.LONGEST
        elif padding is False or padding is None:
            padding_strategy = PaddingStrategy.DO_NOT_PAD
        else:
            padding_strategy = PaddingStrategy(padding)
        if truncation is True:
            truncation_strategy = TruncationStrategy.LONGEST_FIRST
        elif truncation is False or truncation is None:
            truncation_strategy = TruncationStrategy.DO_NOT_TRUNCATE
        else:
            truncation_strategy = TruncationStrategy(truncation)

        if max_length is None:
            if padding_strategy == PaddingStrategy.MAX_LENGTH:
                if self.model_max_length > LARGE_INTEGER:
                    padding_strategy = PaddingStrategy.DO_NOT_PAD
                else:
                    max_length = self.model_max_length
            if truncation_strategy != TruncationStrategy.DO_NOT_TRUNCATE:
                if self.model_max_length > LARGE_INTEGER:
                    truncation_strategy = TruncationStrategy.DO_NOT_TRUNCATE
                else:
                    max_length = self.model_max_length
        elif not isinstance(max_length, int) or max_length < 0:
            raise ValueError(f"max_length must be a non-negative int, got {max_length!r}")

        if padding_strategy != PaddingStrategy.DO_NOT_PAD and (self.pad_token is None or self.pad_token_id < 0):
            raise ValueError(
                "asked to pad but the tokenizer has no pad token: set one, e.g. "
                "`tokenizer.pad_token = tokenizer.eos_token` or `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`"
            )
        if (
            truncation_strategy != TruncationStrategy.DO_NOT_TRUNCATE
            and padding_strategy != PaddingStrategy.DO_NOT_PAD
            and pad_to_multiple_of is not None
            and max_length is not None
            and max_length % pad_to_multiple_of != 0
        ):
            raise ValueError(
                f"truncation length ({max_length}) is not a multiple of pad_to_multiple_of ({pad_to_multiple_of})"
            )
        return padding_strategy, truncation_strategy, max_length

    # ---- encoding -------------------------------------------------------------------------

    def __call__(
        self,
        text=None,
        text_pair=None,
        text_target=None,
        text_pair_target=None,
        add_special_tokens=True,
        padding=False,
        truncation=None,
        max_length=None,
        stride=0,
        is_split_into_words=False,
        pad_to_multiple_of=None,
        padding_side=None,
        return_tensors=None,
        return_token_type_ids=None,
        return_attention_mask=None,
        return_overflowing_tokens=False,
        return_special_tokens_mask=False,
        return_offsets_mapping=False,
        return_length=False,
        verbose=True,
        **kwargs,
    ):
        """Tokenize a string, a pair, a batch of either, or pre-split words
        (`is_split_into_words=True`), returning a `BatchEncoding`.

        `text_target` encodes labels the same way; with `text` too, its ids land in `labels`.
        `max_target_length` caps the targets separately.
        """
        if text is None and text_target is None:
            raise ValueError("pass `text` or `text_target` to tokenize")
        if padding_side is not None:
            self._check_side("padding_side", padding_side)
        max_target_length = kwargs.pop("max_target_length", None)
        split_special_tokens = kwargs.pop("split_special_tokens", self.split_special_tokens)
        if kwargs and not self.accepts_tokenize_kwargs:
            raise TypeError(f"unexpected tokenizer arguments: {sorted(kwargs)}")
        padding_strategy, truncation_strategy, max_length = self._get_padding_truncation_strategies(
            padding=padding, truncation=truncation, max_length=max_length, pad_to_multiple_of=pad_to_multiple_of
        )
        options = dict(
            add_special_tokens=add_special_tokens,
            padding_strategy=padding_strategy,
            truncation_strategy=truncation_strategy,
            stride=stride,
            is_split_into_words=is_split_into_words,
            pad_to_multiple_of=pad_to_multiple_of,
            padding_side=padding_side,
            return_tensors=return_tensors,
            return_token_type_ids=return_token_type_ids,
            return_attention_mask=return_attention_mask,
            return_overflowing_tokens=return_overflowing_tokens,
            return_special_tokens_mask=return_special_tokens_mask,
            return_offsets_mapping=return_offsets_mapping,
            return_length=return_length,
            split_special_tokens=split_special_tokens,
            **kwargs,
        )
        encodings = None
        if text is not None:
            encodings = self._encode_plus(text, text_pair, max_length=max_length, **options)
        if text_target is None:
            return encodings
        target_length = max_target_length if max_target_length is not None else max_length
        self._switch_to_target_mode()
        try:
            targets = self._encode_plus(text_target, text_pair_target, max_length=target_length, **options)
        finally:
            self._switch_to_input_mode()
        if encodings is None:
            return targets
        encodings["labels"] = targets["input_ids"]
        return encodings

    def _switch_to_input_mode(self):
        """Encode inputs from here on. Tokenizers whose targets are tokenized differently
        (Marian's target-language model) switch back here after encoding `text_target`."""

    def _switch_to_target_mode(self):
        """Encode targets (`text_target`) from here on; nothing changes unless the tokenizer
        has a target side of its own."""

    def encode(
        self,
        text,
        text_pair=None,
        add_special_tokens=True,
        padding=False,
        truncation=None,
        max_length=None,
        stride=0,
        padding_side=None,
        return_tensors=None,
        **kwargs,
    ):
        """The `input_ids` of one text (or pair): `tokenizer(text, ...)["input_ids"]`."""
        encoded = self(
            text,
            text_pair,
            add_special_tokens=add_special_tokens,
            padding=padding,
            truncation=truncation,
            max_length=max_length,
            stride=stride,
            padding_side=padding_side,
            return_tensors=return_tensors,
            return_attention_mask=False,
            return_token_type_ids=False,
            **kwargs,
        )
        return encoded["input_ids"]

    def pad(
        self,
        encoded_inputs,
        padding=True,
        max_length=None,
        pad_to_multiple_of=None,
        padding_side=None,
        return_attention_mask=None,
        return_tensors=None,
    ):
        """Pad one encoded example or a batch (a dict of lists, or a list of dicts as a data
        collator receives) to the longest row or to `max_length`. numpy or tensor inputs come back
        as the same kind unless `return_tensors` says otherwise."""
        if isinstance(encoded_inputs, (list, tuple)) and encoded_inputs and isinstance(encoded_inputs[0], Mapping):
            encoded_inputs = {key: [example[key] for example in encoded_inputs] for key in encoded_inputs[0]}
        main_input = self.model_input_names[0]
        if main_input not in encoded_inputs:
            raise ValueError(f"pad needs the field {main_input!r}; got fields {list(encoded_inputs)}")
        if padding_side is not None:
            self._check_side("padding_side", padding_side)
        required = encoded_inputs[main_input]
        if required is None or len(required) == 0:
            if return_attention_mask:
                encoded_inputs["attention_mask"] = []
            return BatchEncoding(dict(encoded_inputs))

        first = required[0]
        if isinstance(first, (list, tuple)):
            first = next((row[0] for row in required if len(row)), 0)
        if not isinstance(first, int):
            if return_tensors is None:
                return_tensors = "np" if isinstance(first, (np.ndarray, np.generic)) else "pt"
            encoded_inputs = {key: to_py_obj(value) for key, value in encoded_inputs.items()}
        else:
            encoded_inputs = dict(encoded_inputs)

        padding_strategy, _, max_length = self._get_padding_truncation_strategies(padding=padding, max_length=max_length)
        required = encoded_inputs[main_input]
        pad_options = dict(
            pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side, return_attention_mask=return_attention_mask
        )
        if required and not isinstance(required[0], (list, tuple)):
            padded = self._pad(encoded_inputs, max_length=max_length, padding_strategy=padding_strategy, **pad_options)
            return BatchEncoding(padded, tensor_type=return_tensors)

        batch_size = len(required)
        for key, value in encoded_inputs.items():
            if len(value) != batch_size:
                raise ValueError(f"field {key!r} has {len(value)} rows but {main_input!r} has {batch_size}")
        if padding_strategy == PaddingStrategy.LONGEST:
            max_length = max(len(row) for row in required)
            padding_strategy = PaddingStrategy.MAX_LENGTH
        batch = {}
        for i in range(batch_size):
            row = {key: value[i] for key, value in encoded_inputs.items()}
            padded = self._pad(row, max_length=max_length, padding_strategy=padding_strategy, **pad_options)
            for key, value in padded.items():
                batch.setdefault(key, []).append(value)
        return BatchEncoding(batch, tensor_type=return_tensors)

    def _pad(self, encoded_inputs, max_length=None, padding_strategy=PaddingStrategy.DO_NOT_PAD,
             pad_to_multiple_of=None, padding_side=None, return_attention_mask=None):
        """Pad one example (a dict of flat lists) on `padding_side`; pads `attention_mask` with 0,
        `token_type_ids` with the pad type id and `special_tokens_mask` with 1."""
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        main_input = self.model_input_names[0]
        required = list(encoded_inputs[main_input])
        if padding_strategy == PaddingStrategy.LONGEST:
            max_length = len(required)
        if max_length is not None and pad_to_multiple_of is not None and max_length % pad_to_multiple_of != 0:
            max_length = (max_length // pad_to_multiple_of + 1) * pad_to_multiple_of
        if return_attention_mask and "attention_mask" not in encoded_inputs:
            encoded_inputs["attention_mask"] = [1] * len(required)
        if padding_strategy == PaddingStrategy.DO_NOT_PAD or len(required) >= max_length:
            return encoded_inputs
        difference = max_length - len(required)
        fills = {main_input: self.pad_token_id, "token_type_ids": self.pad_token_type_id, "special_tokens_mask": 1}
        if return_attention_mask:
            fills["attention_mask"] = 0
        side = padding_side if padding_side is not None else self.padding_side
        for key, fill in fills.items():
            if key not in encoded_inputs:
                continue
            values = list(encoded_inputs[key])
            pad = [fill] * difference
            encoded_inputs[key] = values + pad if side == "right" else pad + values
        return encoded_inputs

    # ---- decoding -------------------------------------------------------------------------

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None, **kwargs):
        """Ids back to text. A batch (list of lists, 2-D array or tensor) gives a list of strings."""
        token_ids = to_py_obj(token_ids)
        _check_token_ids(token_ids)
        if isinstance(token_ids, list) and token_ids and isinstance(token_ids[0], list):
            return [
                self._decode(row, skip_special_tokens=skip_special_tokens,
                             clean_up_tokenization_spaces=clean_up_tokenization_spaces, **kwargs)
                for row in token_ids
            ]
        return self._decode(token_ids, skip_special_tokens=skip_special_tokens,
                            clean_up_tokenization_spaces=clean_up_tokenization_spaces, **kwargs)

    def batch_decode(self, sequences, skip_special_tokens=False, clean_up_tokenization_spaces=None, **kwargs):
        """A list of id sequences to a list of strings."""
        result = self.decode(sequences, skip_special_tokens=skip_special_tokens,
                             clean_up_tokenization_spaces=clean_up_tokenization_spaces, **kwargs)
        return [result] if isinstance(result, str) else result

    @staticmethod
    def clean_up_tokenization(text):
        """Undo the spaces WordPiece decoding leaves before punctuation and English contractions."""
        for before, after in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                              (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
            text = text.replace(before, after)
        return text

    # ---- chat templates -------------------------------------------------------------------

    def get_chat_template(self, chat_template=None, tools=None):
        """The template source to render: `chat_template` itself, or the name of one of several
        stored templates, or the stored one ("tool_use" when tools are given and it exists)."""
        if isinstance(self.chat_template, dict):
            templates = self.chat_template
            if chat_template is not None and chat_template in templates:
                return templates[chat_template]
            if chat_template is not None:
                return chat_template
            if tools is not None and "tool_use" in templates:
                return templates["tool_use"]
            if "default" in templates:
                return templates["default"]
            raise ValueError(
                f"this tokenizer has several chat templates and none is named 'default'; pass chat_template= one of {sorted(templates)}"
            )
        if chat_template is not None:
            return chat_template
        if self.chat_template is None:
            raise ValueError("this tokenizer has no chat template; pass chat_template= a Jinja template string")
        return self.chat_template

    def apply_chat_template(
        self,
        conversation,
        tools=None,
        documents=None,
        chat_template=None,
        add_generation_prompt=False,
        continue_final_message=False,
        tokenize=True,
        padding=False,
        truncation=False,
        max_length=None,
        return_tensors=None,
        return_dict=True,
        return_assistant_tokens_mask=False,
        tokenizer_kwargs=None,
        **kwargs,
    ):
        """Render a conversation (a list of {"role", "content"} dicts, or a batch of them) with the
        Jinja chat template, and tokenize it unless `tokenize=False`.

        The template sees `messages`, `tools`, `documents`, `add_generation_prompt`, the special
        tokens by name (`bos_token`, ...) and any extra keyword arguments, plus HF's helpers
        `raise_exception` and `strftime_now`. With `tokenize=True` the result is a `BatchEncoding`
        (`return_dict=True`) or the ids; special tokens are not added again, as the template writes
        them. `return_assistant_tokens_mask` marks the tokens inside `{% generation %}` blocks.
        """
        if not tokenize:
            return_dict = False
        if return_assistant_tokens_mask and not (tokenize and return_dict):
            raise ValueError("return_assistant_tokens_mask=True needs tokenize=True and return_dict=True")
        if continue_final_message and add_generation_prompt:
            raise ValueError("continue_final_message and add_generation_prompt cannot both be set")
        if continue_final_message and return_assistant_tokens_mask:
            raise ValueError("continue_final_message cannot be combined with return_assistant_tokens_mask")
        template = self.get_chat_template(chat_template, tools)
        if not isinstance(conversation, (list, tuple)) or len(conversation) == 0:
            raise ValueError("conversation must be a non-empty list of messages (or a list of such lists)")
        is_batched = isinstance(conversation[0], (list, tuple))
        conversations = conversation if is_batched else [conversation]

        rendered, generation_spans = [], []
        for chat in conversations:
            text, spans = _render_chat(
                template,
                chat,
                tools=tools,
                documents=documents,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
                track_generation=return_assistant_tokens_mask,
                template_kwargs={**self.special_tokens_map, **kwargs},
            )
            rendered.append(text)
            generation_spans.append(spans)
        if not tokenize:
            return rendered if is_batched else rendered[0]

        out = self(
            rendered if is_batched else rendered[0],
            padding=padding,
            truncation=truncation,
            max_length=max_length,
            add_special_tokens=False,
            return_tensors=return_tensors,
            **(tokenizer_kwargs or {}),
        )
        if not return_dict:
            return out["input_ids"]
        if return_assistant_tokens_mask:
            rows = out["input_ids"] if (is_batched or return_tensors) else [out["input_ids"]]
            masks = []
            for i, row in enumerate(rows):
                mask = [0] * len(row)
                for start_char, end_char in generation_spans[i]:
                    start = out.char_to_token(i, start_char)
                    end = out.char_to_token(i, end_char - 1)
                    if start is None:
                        break
                    for position in range(start, end + 1 if end is not None else len(row)):
                        mask[position] = 1
                masks.append(mask)
            out["assistant_masks"] = masks if (is_batched or return_tensors) else masks[0]
            if return_tensors:
                out.convert_to_tensors(return_tensors)
        return out

    # ---- loading --------------------------------------------------------------------------

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path,
        *init_inputs,
        revision=None,
        cache_dir=None,
        local_files_only=False,
        token=None,
        subfolder="",
        mirror=None,
        endpoint=None,
        **kwargs,
    ):
        """Load a tokenizer from a local folder, the Hugging Face cache or a hub repo id (or from
        the path of a single tokenizer.json). Keyword arguments override tokenizer_config.json
        (e.g. `model_max_length=128`, `padding_side="left"`, `pad_token="<pad>"`)."""
        path = str(pretrained_model_name_or_path)
        kwargs.pop("trust_remote_code", None)  # no code is ever loaded from a repo
        kwargs.pop("use_fast", None)  # every tokenizer here is backed by `tokenizers`
        hub = dict(revision=revision, cache_dir=cache_dir, local_files_only=local_files_only, token=token,
                   subfolder=subfolder, mirror=mirror, endpoint=endpoint)

        def optional(filename):
            return cached_file(path, filename, raise_if_missing=False, **hub)

        if os.path.isfile(path):
            if os.path.basename(path) != FULL_TOKENIZER_FILE and not path.endswith(".json"):
                raise ValueError(f"{path} is a file: pass a folder, a hub repo id, or the path of a tokenizer.json")
            files = {"tokenizer_file": path}
        else:
            files = {
                "tokenizer_config_file": optional(TOKENIZER_CONFIG_FILE),
                "tokenizer_file": optional(FULL_TOKENIZER_FILE) if cls.reads_tokenizer_json else None,
                "special_tokens_map_file": optional(SPECIAL_TOKENS_MAP_FILE),
                "chat_template_file": optional(CHAT_TEMPLATE_FILE),
            }
            if files["chat_template_file"] is None:
                files["legacy_chat_template_file"] = optional(LEGACY_CHAT_TEMPLATE_FILE)
            for arg_name in cls.auxiliary_files_names:
                files[arg_name] = optional(cls.vocab_files_names[arg_name])
            if files["tokenizer_file"] is None:
                # Vocabulary files are fetched only when they are needed to build the tokenizer.
                files["added_tokens_file"] = optional(ADDED_TOKENS_FILE)
                for arg_name, filename in cls.vocab_files_names.items():
                    files[arg_name] = optional(filename)
                if not any(files.get(arg_name) for arg_name in cls.vocab_files_names):
                    wanted = [FULL_TOKENIZER_FILE, *cls.vocab_files_names.values()]
                    raise OSError(f"{path} has no tokenizer files that {cls.__name__} can load (looked for {', '.join(wanted)})")
        extra_templates = {}
        template_dir = Path(path, subfolder or "", CHAT_TEMPLATE_DIR)
        if template_dir.is_dir():
            extra_templates = {file.stem: file.read_text(encoding="utf-8") for file in sorted(template_dir.glob("*.jinja"))}
        return cls._from_files(files, path, extra_templates, init_inputs, kwargs)

    @classmethod
    def _from_files(cls, files, name_or_path, extra_templates, init_inputs, user_kwargs):
        """Assemble the constructor arguments from the resolved files (tokenizer_config.json first,
        then the legacy files where it is silent), then the caller's overrides."""
        config = {}
        if files.get("tokenizer_config_file"):
            config = _read_json(files["tokenizer_config_file"])
        config.pop("tokenizer_class", None)
        for key in _LOADING_KEYS:
            config.pop(key, None)
        if not init_inputs:
            init_inputs = tuple(config.pop("init_inputs", ()))
        config = _added_tokens_from_json(config)
        if files.get("tokenizer_file"):
            # tokenizer.json already holds the post-processor these two flags would rebuild.
            config.pop("add_bos_token", None)
            config.pop("add_eos_token", None)

        templates = dict(extra_templates)
        if files.get("chat_template_file"):
            templates["default"] = Path(files["chat_template_file"]).read_text(encoding="utf-8")
        elif files.get("legacy_chat_template_file"):
            templates["default"] = _read_json(files["legacy_chat_template_file"])["chat_template"]
        if list(templates) == ["default"]:
            config["chat_template"] = templates["default"]
        elif templates:
            config["chat_template"] = templates

        added_tokens_decoder = {
            int(index): AddedToken(**token) if isinstance(token, dict) else token
            for index, token in config.pop("added_tokens_decoder", {}).items()
        }
        if files.get("special_tokens_map_file") and not added_tokens_decoder:
            for key, value in _added_tokens_from_json(_read_json(files["special_tokens_map_file"])).items():
                if isinstance(value, dict):
                    value = AddedToken(**{k: v for k, v in value.items() if k != "special"}, special=True)
                elif isinstance(value, list):
                    value = [AddedToken(**{k: v for k, v in t.items() if k != "special"}, special=True)
                             if isinstance(t, dict) else t for t in value]
                config[key] = value
        if files.get("added_tokens_file"):
            special = {str(config[key]) for key in cls.SPECIAL_TOKENS_ATTRIBUTES if config.get(key)}
            for content, index in _read_json(files["added_tokens_file"]).items():
                is_special = content in special
                added_tokens_decoder.setdefault(
                    int(index), AddedToken(content, normalized=not is_special, special=is_special)
                )

        config.update(user_kwargs)
        for arg_name in ("tokenizer_file", *cls.vocab_files_names):
            if files.get(arg_name) and user_kwargs.get(arg_name) is None:
                config[arg_name] = files[arg_name]
        config["added_tokens_decoder"] = added_tokens_decoder
        config["name_or_path"] = name_or_path
        return cls(*init_inputs, **config)

    # ---- saving ---------------------------------------------------------------------------

    def _config_for_save(self):
        """tokenizer_config.json: the constructor arguments, with the live values of the settings
        that can change after loading."""
        config = {key: value for key, value in copy.deepcopy(self.init_kwargs).items() if key not in _LOADING_KEYS}
        for key in ("added_tokens_decoder", "additional_special_tokens", "extra_special_tokens", "chat_template",
                    "model_specific_special_tokens", *self.vocab_files_names, "merges_file"):
            config.pop(key, None)
        config.update(
            model_max_length=self.model_max_length,
            padding_side=self.padding_side,
            truncation_side=self.truncation_side,
            clean_up_tokenization_spaces=self.clean_up_tokenization_spaces,
            split_special_tokens=self.split_special_tokens,
        )
        if list(self.model_input_names) != list(type(self).model_input_names):
            config["model_input_names"] = list(self.model_input_names)
        config.update(self.special_tokens_map)
        if self._extra_special_tokens:
            config["extra_special_tokens"] = self.extra_special_tokens
        return _added_tokens_to_json(config)

    def save_pretrained(self, save_directory, filename_prefix=None):
        """Write tokenizer_config.json, special_tokens_map.json, the chat template(s) and the
        backend's files into `save_directory`; HF transformers loads the result. Each file is
        written atomically. Returns the paths written."""
        save_directory = str(save_directory)
        if os.path.isfile(save_directory):
            raise ValueError(f"save_pretrained needs a directory, but {save_directory} is a file")
        os.makedirs(save_directory, exist_ok=True)
        prefix = filename_prefix + "-" if filename_prefix else ""
        config = self._config_for_save()
        written = []

        if isinstance(self.chat_template, str):
            template_path = os.path.join(save_directory, prefix + CHAT_TEMPLATE_FILE)
            written.append(write_text_atomic(template_path, self.chat_template))
        elif isinstance(self.chat_template, dict):
            template_dir = os.path.join(save_directory, prefix + CHAT_TEMPLATE_DIR)
            for name, template in self.chat_template.items():
                if name == "default":
                    target = os.path.join(save_directory, prefix + CHAT_TEMPLATE_FILE)
                else:
                    if not re.fullmatch(r"[\w.-]+", name) or name.startswith("."):
                        raise ValueError(f"chat template name {name!r} cannot be used as a file name")
                    os.makedirs(template_dir, exist_ok=True)
                    target = os.path.join(template_dir, f"{name}.jinja")
                written.append(write_text_atomic(target, template))

        config["tokenizer_class"] = self._saved_class_name()
        config_path = os.path.join(save_directory, prefix + TOKENIZER_CONFIG_FILE)
        written.append(write_text_atomic(config_path, _json_text(config)))

        special_map = dict(self.special_tokens_map)
        if self._extra_special_tokens:
            # The v4 name, which older loaders read from this file.
            special_map["additional_special_tokens"] = self.extra_special_tokens
        special_path = os.path.join(save_directory, prefix + SPECIAL_TOKENS_MAP_FILE)
        written.append(write_text_atomic(special_path, _json_text(special_map)))
        written.extend(self._save_backend(save_directory, prefix))
        return tuple(written)

    def _saved_class_name(self):
        """The `tokenizer_class` written to tokenizer_config.json: the HF name of this class."""
        return type(self).__name__

    def __repr__(self):
        return (
            f"{type(self).__name__}(name_or_path={self.name_or_path!r}, vocab_size={self.vocab_size}, "
            f"model_max_length={self.model_max_length}, padding_side={self.padding_side!r}, "
            f"truncation_side={self.truncation_side!r}, special_tokens={self.special_tokens_map})"
        )


def _added_tokens_to_json(obj):
    """AddedToken values become the dicts HF writes ({"content": ..., "lstrip": ..., ...})."""
    if isinstance(obj, AddedToken):
        return obj.__getstate__()
    if isinstance(obj, (list, tuple)):
        return [_added_tokens_to_json(item) for item in obj]
    if isinstance(obj, dict):
        return {key: _added_tokens_to_json(value) for key, value in obj.items()}
    return obj


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from err


# ---- chat template rendering --------------------------------------------------------------

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


@lru_cache(maxsize=32)
def _compile_chat_template(source):
    """Compile a template in Jinja's immutable sandbox (templates come from the hub and are
    untrusted), with the settings and helpers HF's templates are written against."""
    import jinja2
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationTracker(Extension):
        """`{% generation %}...{% endgeneration %}` marks assistant text; while tracking, the
        character span of each block's output is recorded for the assistant token mask."""

        tags = {"generation"}

        def __init__(self, environment):
            super().__init__(environment)
            environment.extend(generation_spans=None, rendered_blocks=None)

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_track", []), [], [], body).set_lineno(lineno)

        def _track(self, caller):
            output = caller()
            spans = self.environment.generation_spans
            if spans is not None:
                start = len("".join(self.environment.rendered_blocks))
                spans.append((start, start + len(output)))
            return output

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        # Jinja's own tojson escapes HTML characters, which would change the prompt text.
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTracker, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    try:
        return env.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as err:
        raise ValueError(f"the chat template is not valid Jinja (line {err.lineno}): {err.message}") from err


def _render_chat(template_source, chat, *, tools, documents, add_generation_prompt, continue_final_message,
                 track_generation, template_kwargs):
    """Render one conversation; returns the text and the character spans of `{% generation %}` blocks."""
    for message in chat:
        if not isinstance(message, Mapping):
            raise TypeError(f"chat messages must be dicts with 'role' and 'content', got {message!r}")
    chat = [{key: value for key, value in message.items() if value is not None} for message in chat]
    if tools is not None:
        for tool in tools:
            if not isinstance(tool, Mapping):
                raise TypeError(f"tools must be JSON-schema dicts, got {type(tool).__name__}")
    if documents is not None:
        for document in documents:
            if not isinstance(document, Mapping):
                raise TypeError("documents must be dicts, ideally with 'title' and 'text' keys")

    final_text = None
    if continue_final_message:
        field = continue_final_message if isinstance(continue_final_message, str) else "content"
        final_text = chat[-1].get(field)
        if not isinstance(final_text, str):
            raise ValueError(f"continue_final_message is set but the last message has no text {field!r} to continue")
        chat[-1] = {**chat[-1], field: final_text + _CONTINUE_TAG}

    template = _compile_chat_template(template_source)
    variables = dict(template_kwargs, messages=chat, tools=tools, documents=documents,
                     add_generation_prompt=add_generation_prompt)
    spans = []
    if track_generation:
        env = template.environment
        blocks = []
        env.generation_spans, env.rendered_blocks = spans, blocks
        try:
            for block in template.generate(**variables):
                blocks.append(block)
        finally:
            env.generation_spans, env.rendered_blocks = None, None
        text = "".join(blocks)
    else:
        text = template.render(**variables)

    if final_text is not None:
        tag = _CONTINUE_TAG.strip()
        if final_text.strip() not in text or tag not in text:
            raise ValueError("continue_final_message is set but the template dropped (part of) the final message")
        at = text.rindex(tag)
        # Keep the text exactly up to the final message's end; if the template trimmed trailing
        # spaces around the tag, trim them here as well.
        text = text[:at] if text[at: at + len(_CONTINUE_TAG)] == _CONTINUE_TAG else text[:at].rstrip()
    return text, spans
