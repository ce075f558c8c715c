# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PreTrainedTokenizerFast`: a tokenizer whose splitting, vocabulary and alignment come from a
`tokenizers.Tokenizer` (the Rust library HF's fast tokenizers wrap).

The backend is loaded from tokenizer.json as it is, or built by a model class from its vocabulary
files (see `convert_slow_tokenizer`). Padding and truncation are set on the backend for each call
and cleared when not asked for, so a setting stored in tokenizer.json never leaks into a call.
"""
import copy
import json
import os

from tokenizers import AddedToken, Tokenizer, processors

from .convert_slow_tokenizer import SentencePieceModel, sentencepiece_tokenizer
from .tokenization_utils_base import (
    FULL_TOKENIZER_FILE,
    BatchEncoding,
    PaddingStrategy,
    PreTrainedTokenizerBase,
    TruncationStrategy,
)
from ..core.serialization import write_text_atomic


def _is_text_input(value):
    """A str, a list of str (a batch, or one pre-split sequence), or a list of lists/tuples of str
    (pre-split batches, or a batch of pairs)."""
    if isinstance(value, str):
        return True
    if not isinstance(value, (list, tuple)):
        return False
    if len(value) == 0 or isinstance(value[0], str):
        return True
    if isinstance(value[0], (list, tuple)):
        inner = value[0]
        if len(inner) == 0 or isinstance(inner[0], str):
            return True
        return isinstance(inner[0], (list, tuple)) and (len(inner[0]) == 0 or isinstance(inner[0][0], str))
    return False


class PreTrainedTokenizerFast(PreTrainedTokenizerBase):
    """A tokenizer backed by `tokenizers.Tokenizer`.

    Built from `tokenizer_object=` (a `tokenizers.Tokenizer`), `tokenizer_file=` (tokenizer.json)
    or `vocab_file=` (a sentencepiece model, converted with sentencepiece's own normalisation).
    Model classes (BertTokenizerFast, ...) build their backend from their own vocabulary files. Other keyword arguments are the special tokens and settings of
    `PreTrainedTokenizerBase`; `add_bos_token`/`add_eos_token` rebuild the post-processor so that
    each sequence is wrapped in bos/eos.
    """

    vocab_files_names = {"vocab_file": "tokenizer.model"}

    @classmethod
    def given_or_built_backend(cls, kwargs, tokenizer_file, build, **files):
        """The `tokenizer_object` a model tokenizer hands to this __init__: the one in `kwargs`
        (popped), None when `tokenizer_file` (a tokenizer.json) will be read, else `build()`'s,
        from the vocabulary `files` ({argument: path}), each of which must then be given."""
        tokenizer_object = kwargs.pop("tokenizer_object", None)
        if tokenizer_object is not None or tokenizer_file is not None:
            return tokenizer_object
        if any(path is None for path in files.values()):
            arguments = " and ".join(f"{name}=" for name in files)
            file_names = ", ".join(cls.vocab_files_names[name] for name in files)
            raise ValueError(f"{cls.__name__} needs tokenizer_file= (tokenizer.json) or {arguments} ({file_names})")
        return build()

    def __init__(self, *args, tokenizer_object=None, tokenizer_file=None, **kwargs):
        if args:
            raise TypeError(f"{type(self).__name__} takes keyword arguments only, got {len(args)} positional")
        vocab_file = kwargs.pop("vocab_file", None)
        if tokenizer_object is None and tokenizer_file is None and vocab_file is not None:
            spm = SentencePieceModel(vocab_file)
            tokenizer_object = sentencepiece_tokenizer(spm)
            for name, token in spm.special_tokens().items():
                kwargs.setdefault(name, token)
        if tokenizer_object is not None:
            if not isinstance(tokenizer_object, Tokenizer):
                raise TypeError(f"tokenizer_object must be a tokenizers.Tokenizer, got {type(tokenizer_object).__name__}")
            backend = copy.deepcopy(tokenizer_object)
        elif tokenizer_file is not None:
            if not os.path.isfile(tokenizer_file):
                raise OSError(f"tokenizer file {tokenizer_file} does not exist")
            backend = Tokenizer.from_file(tokenizer_file)
        else:
            raise ValueError(
                f"{type(self).__name__} needs tokenizer_file= (a tokenizer.json), tokenizer_object= "
                "(a tokenizers.Tokenizer) or vocab_file= (a sentencepiece model)"
            )
        backend.no_truncation()
        backend.no_padding()
        self._tokenizer = backend

        added_tokens_decoder = kwargs.pop("added_tokens_decoder", None) or {}
        rebuild_post_processor = "add_bos_token" in kwargs or "add_eos_token" in kwargs
        self._add_bos_token = bool(kwargs.get("add_bos_token", False))
        self._add_eos_token = bool(kwargs.get("add_eos_token", False))
        super().__init__(**kwargs)
        self._tokenizer.encode_special_tokens = self.split_special_tokens

        # Tokens recorded in tokenizer_config.json, and the named special tokens, become added
        # tokens of the backend (never split); those already in the vocabulary keep their ids,
        # the others are appended in id order so ids match the checkpoint's.
        known = {token.content for token in self._tokenizer.get_added_tokens_decoder().values()}
        to_add = [token for _, token in sorted(added_tokens_decoder.items()) if str(token) not in known]
        named = {str(value) for value in self._special_tokens_map.values() if value is not None}
        for value in [*self._special_tokens_map.values(), *self._extra_special_tokens]:
            if value is not None and str(value) not in known and all(str(value) != str(t) for t in to_add):
                to_add.append(value)
        if to_add:
            tokens = []
            for token in to_add:
                if isinstance(token, str):
                    token = AddedToken(token, normalized=False, special=True)
                elif str(token) in named and not token.special:
                    token = copy.copy(token)
                    token.special = True
                tokens.append(token)
            self._tokenizer.add_tokens(tokens)

        if rebuild_post_processor or self._tokenizer.post_processor is None:
            self.update_post_processor()
        else:
            self._add_bos_token, self._add_eos_token = self._bos_eos_from_post_processor()

    def _bos_eos_from_post_processor(self):
        """Whether the loaded post-processor starts single sequences with bos and ends them with
        eos, so that `add_bos_token`/`add_eos_token` describe what it does and changing one of
        them keeps the other."""
        state = json.loads(self._tokenizer.post_processor.__getstate__())
        if state.get("type") != "TemplateProcessing" or not state.get("single"):
            return False, False
        single = state["single"]
        first = single[0].get("SpecialToken", {}).get("id")
        last = single[-1].get("SpecialToken", {}).get("id")
        bos, eos = self.bos_token, self.eos_token
        return bos is not None and first == bos, eos is not None and last == eos

    # ---- the backend ----------------------------------------------------------------------

    @property
    def is_fast(self):
        return True

    @property
    def backend_tokenizer(self):
        """The `tokenizers.Tokenizer` doing the work."""
        return self._tokenizer

    @property
    def decoder(self):
        return self._tokenizer.decoder

    @property
    def vocab_size(self):
        """Size of the base vocabulary, without added tokens."""
        return self._tokenizer.get_vocab_size(with_added_tokens=False)

    def __len__(self):
        """Size of the whole vocabulary, added tokens included: the embedding size a model needs."""
        return self._tokenizer.get_vocab_size(with_added_tokens=True)

    def get_vocab(self):
        return self._tokenizer.get_vocab(with_added_tokens=True)

    @property
    def vocab(self):
        return self.get_vocab()

    @property
    def added_tokens_decoder(self):
        """{id: AddedToken} for every added token, special or not."""
        return self._tokenizer.get_added_tokens_decoder()

    def get_added_vocab(self):
        return self.added_tokens_encoder

    def convert_tokens_to_ids(self, tokens):
        """Token string(s) to id(s); unknown tokens give the unk token's id (None without one)."""
        if isinstance(tokens, str):
            return self._token_to_id(tokens)
        return [self._token_to_id(token) for token in tokens]

    def _token_to_id(self, token):
        index = self._tokenizer.token_to_id(token)
        if index is None:
            unk = self._special_tokens_map.get("unk_token")
            return self._tokenizer.token_to_id(str(unk)) if unk is not None else None
        return index

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        """Id(s) to token string(s); `skip_special_tokens` drops the special ones from a list."""
        if isinstance(ids, int):
            return self._tokenizer.id_to_token(ids)
        skip = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._tokenizer.id_to_token(int(index)) for index in ids if int(index) not in skip]

    def convert_tokens_to_string(self, tokens):
        decoder = self._tokenizer.decoder
        return decoder.decode(tokens) if decoder is not None else " ".join(tokens)

    def _add_tokens(self, new_tokens, special_tokens=False):
        if special_tokens:
            return self._tokenizer.add_special_tokens(new_tokens)
        return self._tokenizer.add_tokens(new_tokens)

    def num_special_tokens_to_add(self, pair=False):
        return self._tokenizer.num_special_tokens_to_add(pair)

    def tokenize(self, text, pair=None, add_special_tokens=False, **kwargs):
        """The token strings of `text` (and `pair`)."""
        return self._encode_plus(text, pair, add_special_tokens=add_special_tokens, **kwargs).tokens()

    # ---- bos / eos post-processing --------------------------------------------------------

    @property
    def add_bos_token(self):
        return self._add_bos_token

    @add_bos_token.setter
    def add_bos_token(self, value):
        self._add_bos_token = bool(value)
        self.update_post_processor()

    @property
    def add_eos_token(self):
        return self._add_eos_token

    @add_eos_token.setter
    def add_eos_token(self, value):
        self._add_eos_token = bool(value)
        self.update_post_processor()

    def update_post_processor(self):
        """Wrap sequences in bos/eos according to `add_bos_token`/`add_eos_token` (Llama's
        convention: a pair is `bos A eos bos B eos`, the second sequence with type id 1)."""
        bos, eos = self.bos_token, self.eos_token
        if self._add_bos_token and bos is None:
            raise ValueError("add_bos_token=True but the tokenizer has no bos_token")
        if self._add_eos_token and eos is None:
            raise ValueError("add_eos_token=True but the tokenizer has no eos_token")
        single = f"{bos + ':0 ' if self._add_bos_token else ''}$A:0{' ' + eos + ':0' if self._add_eos_token else ''}"
        pair = f"{single}{' ' + bos + ':1' if self._add_bos_token else ''} $B:1{' ' + eos + ':1' if self._add_eos_token else ''}"
        special = []
        if self._add_bos_token:
            special.append((bos, self.bos_token_id))
        if self._add_eos_token:
            special.append((eos, self.eos_token_id))
        self._tokenizer.post_processor = processors.TemplateProcessing(single=single, pair=pair, special_tokens=special)

    # ---- encoding -------------------------------------------------------------------------

    def _set_truncation_and_padding(self, padding_strategy, truncation_strategy, max_length, stride,
                                    pad_to_multiple_of, padding_side):
        """Configure the backend for one call; options not asked for are switched off."""
        if truncation_strategy == TruncationStrategy.DO_NOT_TRUNCATE:
            if self._tokenizer.truncation is not None:
                self._tokenizer.no_truncation()
        else:
            target = {"max_length": max_length, "stride": stride, "strategy": truncation_strategy.value,
                      "direction": self.truncation_side}
            current = self._tokenizer.truncation
            if current is None or {key: current.get(key) for key in target} != target:
                self._tokenizer.enable_truncation(**target)
        if padding_strategy == PaddingStrategy.DO_NOT_PAD:
            if self._tokenizer.padding is not None:
                self._tokenizer.no_padding()
        else:
            target = {
                "length": max_length if padding_strategy == PaddingStrategy.MAX_LENGTH else None,
                "direction": padding_side if padding_side is not None else self.padding_side,
                "pad_id": self.pad_token_id,
                "pad_token": self.pad_token,
                "pad_type_id": self.pad_token_type_id,
                "pad_to_multiple_of": pad_to_multiple_of,
            }
            if self._tokenizer.padding != target:
                self._tokenizer.enable_padding(**target)

    def _encode_plus(
        self,
        text,
        text_pair=None,
        add_special_tokens=True,
        padding_strategy=PaddingStrategy.DO_NOT_PAD,
        truncation_strategy=TruncationStrategy.DO_NOT_TRUNCATE,
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
        split_special_tokens=None,
    ):
        for name, value in (("text", text), ("text_pair", text_pair)):
            if value is not None and not _is_text_input(value):
                raise ValueError(
                    f"{name} must be a str, a list of str (a batch, or one sequence split into words with "
                    f"is_split_into_words=True) or a list of lists of str; got {type(value).__name__}"
                )
        if is_split_into_words:
            is_batched = isinstance(text, (list, tuple)) and len(text) > 0 and isinstance(text[0], (list, tuple))
        else:
            is_batched = isinstance(text, (list, tuple))
        if is_batched:
            if isinstance(text_pair, str):
                raise TypeError("with a batch of texts, text_pair must be a list of the same length")
            if text_pair is not None and len(text) != len(text_pair):
                raise ValueError(f"text has {len(text)} items but text_pair has {len(text_pair)}")
            inputs = list(zip(text, text_pair)) if text_pair is not None else list(text)
        else:
            inputs = [(text, text_pair)] if text_pair is not None else [text]

        if return_overflowing_tokens and truncation_strategy != TruncationStrategy.DO_NOT_TRUNCATE:
            # The backend aborts the process on this instead of raising.
            room = max_length - (self.num_special_tokens_to_add(pair=text_pair is not None) if add_special_tokens else 0)
            if stride >= room:
                raise ValueError(
                    f"stride ({stride}) must be smaller than max_length ({max_length}) minus the special tokens "
                    f"added, i.e. smaller than {room}"
                )
        self._set_truncation_and_padding(padding_strategy, truncation_strategy, max_length, stride,
                                         pad_to_multiple_of, padding_side)
        if split_special_tokens is None:
            split_special_tokens = self.split_special_tokens
        if self._tokenizer.encode_special_tokens != split_special_tokens:
            self._tokenizer.encode_special_tokens = split_special_tokens

        encodings = self._tokenizer.encode_batch(inputs, add_special_tokens=add_special_tokens,
                                                 is_pretokenized=is_split_into_words)
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names

        fields = {"input_ids": []}
        for name, wanted in (("token_type_ids", return_token_type_ids), ("attention_mask", return_attention_mask),
                             ("special_tokens_mask", return_special_tokens_mask),
                             ("offset_mapping", return_offsets_mapping), ("length", return_length)):
            if wanted:
                fields[name] = []
        rows, overflow_to_sample = [], []
        for sample, encoding in enumerate(encodings):
            # Overflowing windows become rows of their own, mapped back to their sample.
            windows = [encoding, *encoding.overflowing] if return_overflowing_tokens else [encoding]
            for window in windows:
                rows.append(window)
                overflow_to_sample.append(sample)
                fields["input_ids"].append(window.ids)
                if return_token_type_ids:
                    fields["token_type_ids"].append(window.type_ids)
                if return_attention_mask:
                    fields["attention_mask"].append(window.attention_mask)
                if return_special_tokens_mask:
                    fields["special_tokens_mask"].append(window.special_tokens_mask)
                if return_offsets_mapping:
                    fields["offset_mapping"].append(window.offsets)
                if return_length:
                    fields["length"].append(len(window.ids))
        if return_overflowing_tokens:
            fields["overflow_to_sample_mapping"] = overflow_to_sample

        if not is_batched and return_tensors is None and not return_overflowing_tokens:
            # A single text gives flat lists, not a batch of one.
            fields = {key: value[0] for key, value in fields.items()}
        return BatchEncoding(fields, rows, tensor_type=return_tensors)

    # ---- decoding -------------------------------------------------------------------------

    def _decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None):
        if isinstance(token_ids, int):
            token_ids = [token_ids]
        text = self._tokenizer.decode(token_ids, skip_special_tokens=skip_special_tokens)
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        # The clean-up is written for WordPiece output; on byte-level BPE it would delete spaces
        # that are really in the text, so HF skips it there and so do we.
        if clean_up_tokenization_spaces and type(self._tokenizer.model).__name__ != "BPE":
            text = self.clean_up_tokenization(text)
        return text

    # ---- saving ---------------------------------------------------------------------------

    def _save_backend(self, save_directory, prefix):
        path = os.path.join(save_directory, prefix + FULL_TOKENIZER_FILE)
        return [write_text_atomic(path, self._tokenizer.to_str(pretty=True))]

    def _saved_class_name(self):
        """HF v5 names its classes without "Fast" and maps the old names onto them; the generic
        class keeps its name, which both v4 and v5 understand."""
        name = type(self).__name__
        if name != "PreTrainedTokenizerFast" and name.endswith("Fast"):
            return name[: -len("Fast")]
        return name


TokenizersBackend = PreTrainedTokenizerFast
