# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PythonBackend` (also named `PreTrainedTokenizer`): the base of tokenizers written in Python.

A subclass supplies the vocabulary and the splitting of plain text (`_tokenize`,
`_convert_token_to_id`, `_convert_id_to_token`, `get_vocab`, `vocab_size`, and where its format
needs it `convert_tokens_to_string`, `build_inputs_with_special_tokens`, `save_vocabulary`, ...).
This class adds what every such tokenizer shares: added tokens that are never split (with their
lstrip/rstrip/single_word options), special tokens around sequences, truncation, and the
id/token/text conversions. Padding, batching, tensors, chat templates and the on-disk format come
from `PreTrainedTokenizerBase`, as for the `tokenizers`-backed classes. Remote-code tokenizers
subclass this class, so its hooks and their semantics are HF transformers v5's.
"""
import os
import re

from tokenizers import AddedToken

from ..core.serialization import write_text_atomic
from .tokenization_utils_base import (
    ADDED_TOKENS_FILE,
    BatchEncoding,
    PaddingStrategy,
    PreTrainedTokenizerBase,
    TruncationStrategy,
    _json_text,
)

__all__ = ["AddedToken", "PreTrainedTokenizer", "PythonBackend"]

# `special_tokens_pattern` values: the special-token attributes put (before the first sequence,
# after it when alone, between the two of a pair, after the second).
_SPECIAL_TOKEN_LAYOUTS = {
    "none": ((), (), (), ()),
    "cls_sep": (("cls_token",), ("sep_token",), ("sep_token",), ("sep_token",)),
    "eos": ((), ("eos_token",), ("eos_token",), ("eos_token",)),
    "bos": (("bos_token",), (), ("bos_token",), ()),
    "bos_eos": (("bos_token",), ("eos_token",), ("eos_token",), ("eos_token",)),
    "cls_double_sep": (("cls_token",), ("sep_token",), ("sep_token", "sep_token"), ("sep_token",)),
}


class PythonBackend(PreTrainedTokenizerBase):
    """A tokenizer whose splitting is Python code in a subclass.

    Keyword arguments beyond those of `PreTrainedTokenizerBase`:
    - `added_tokens_decoder`: {id: AddedToken} restored from a saved tokenizer;
    - `special_tokens_pattern`: how `build_inputs_with_special_tokens` wraps sequences when a
      subclass does not override it: "none" (default), "cls_sep", "eos", "bos", "bos_eos",
      "cls_double_sep", or "prefix_suffix" (the subclass's `prefix_tokens`/`suffix_tokens` ids);
    - `token_type_ids_pattern`: "bert_style" (second sequence of a pair gets type 1, the
      default) or "all_zeros"; `token_type_ids_include_special_tokens` counts the special tokens
      into each sequence's part (default True).
    Special tokens the vocabulary lacks are appended to it at construction.
    """

    reads_tokenizer_json = False
    accepts_tokenize_kwargs = True

    def __init__(self, **kwargs):
        self._no_split_tokens = set()
        self._split_pattern = None
        self.total_vocab_size = 0
        if "_added_tokens_decoder" not in self.__dict__:
            self._added_tokens_decoder = {}
        for index, token in (kwargs.pop("added_tokens_decoder", None) or {}).items():
            self._added_tokens_decoder[int(index)] = AddedToken(token) if isinstance(token, str) else token
        self._added_tokens_encoder = {token.content: index for index, token in self._added_tokens_decoder.items()}
        self.token_type_ids_pattern = kwargs.pop("token_type_ids_pattern", "bert_style")
        if self.token_type_ids_pattern not in ("bert_style", "all_zeros"):
            raise ValueError(f"token_type_ids_pattern must be 'bert_style' or 'all_zeros', got {self.token_type_ids_pattern!r}")
        self.token_type_ids_include_special_tokens = kwargs.pop("token_type_ids_include_special_tokens", True)
        self.special_tokens_pattern = kwargs.pop("special_tokens_pattern", None)
        if self.special_tokens_pattern not in (None, "prefix_suffix", *_SPECIAL_TOKEN_LAYOUTS):
            raise ValueError(
                f"special_tokens_pattern must be one of {[None, 'prefix_suffix', *_SPECIAL_TOKEN_LAYOUTS]}, "
                f"got {self.special_tokens_pattern!r}"
            )
        super().__init__(**kwargs)
        self._add_tokens([token for token in self.all_special_tokens if token not in self._added_tokens_encoder],
                         special_tokens=True)

    # ---- the vocabulary -------------------------------------------------------------------

    @property
    def is_fast(self):
        return False

    @property
    def vocab_size(self):
        """Size of the base vocabulary, without added tokens."""
        raise NotImplementedError(f"{type(self).__name__} must define the vocab_size property")

    def get_vocab(self):
        """{token: id} over the whole vocabulary, added tokens included."""
        raise NotImplementedError(f"{type(self).__name__} must define get_vocab()")

    def __len__(self):
        """Size of the whole vocabulary, added tokens included: the embedding size a model needs."""
        if self.total_vocab_size == 0:
            self._update_total_vocab_size()
        return self.total_vocab_size

    def _update_total_vocab_size(self):
        self.total_vocab_size = len(self.get_vocab())

    @property
    def added_tokens_decoder(self):
        """{id: AddedToken} for every added token, in id order."""
        return dict(sorted(self._added_tokens_decoder.items()))

    @added_tokens_decoder.setter
    def added_tokens_decoder(self, value):
        for index, token in value.items():
            if not isinstance(index, int) or not isinstance(token, (str, AddedToken)):
                raise TypeError(f"added_tokens_decoder maps int ids to str or AddedToken, got {index!r}: {token!r}")
            self._added_tokens_decoder[index] = AddedToken(token) if isinstance(token, str) else token
            self._added_tokens_encoder[str(token)] = index
        self._update_trie()
        self._update_total_vocab_size()

    def get_added_vocab(self):
        return self._added_tokens_encoder

    def _add_tokens(self, new_tokens, special_tokens=False):
        """Record `new_tokens` as added tokens: those already in the vocabulary keep their id, the
        others get the next free ids. Returns how many ids are new."""
        vocab = dict(self.get_vocab())
        next_index = len(vocab)
        added = 0
        for token in new_tokens:
            if not isinstance(token, (str, AddedToken)):
                raise TypeError(f"tokens to add must be str or AddedToken, got {type(token).__name__}")
            if str(token) == "":
                continue
            if isinstance(token, str):
                if token in self._added_tokens_encoder:
                    continue
                special = special_tokens or token in self.all_special_tokens
                token = AddedToken(token, normalized=not special, special=special)
            elif special_tokens:
                # Assigning `token.special` would also switch off `normalized` (the tokenizers
                # library's rule); HF keeps the token's own `normalized`, so set `special` alone.
                token.__setstate__({"special": True, "normalized": token.normalized})
            if not token.special and token.normalized and getattr(self, "do_lower_case", False):
                token.content = token.content.lower()
            index = vocab.get(token.content, next_index + added)
            if index == next_index + added:
                vocab[token.content] = index
                added += 1
            if token.special and str(token) not in self.all_special_tokens:
                self._extra_special_tokens.append(token)
            self._added_tokens_decoder[index] = token
            self._added_tokens_encoder[token.content] = index
        self._update_trie()
        self._update_total_vocab_size()
        return added

    # ---- splitting ------------------------------------------------------------------------

    def _update_trie(self):
        """Rebuild the matcher of the strings that are never split (the added tokens): the
        leftmost match wins, and the longest one among those starting there. (HF's name: its
        matcher is a trie; an alternation sorted longest-first finds the same matches.)"""
        tokens = {token.content for token in self._added_tokens_decoder.values()} | self._extra_no_split_tokens()
        tokens.discard("")
        if tokens != self._no_split_tokens:
            self._no_split_tokens = tokens
            alternatives = sorted(tokens, key=lambda token: (-len(token), token))
            self._split_pattern = re.compile("(" + "|".join(map(re.escape, alternatives)) + ")") if tokens else None

    def _extra_no_split_tokens(self):
        """Strings kept whole besides the added tokens; a subclass names its own."""
        return set()

    def _split_on_added_tokens(self, text):
        if self._split_pattern is None:
            return [text] if text else []
        return [piece for piece in self._split_pattern.split(text) if piece]

    def prepare_for_tokenization(self, text, is_split_into_words=False, **kwargs):
        """Transform the text before it is split; returns (text, the kwargs not consumed)."""
        return text, kwargs

    def tokenize(self, text, **kwargs):
        """The token strings of `text`: added tokens are cut out first (applying their strip and
        single-word options to the neighbouring text), the rest goes to `_tokenize`. Keyword
        arguments are `split_special_tokens` and those `prepare_for_tokenization` consumes."""
        split_special_tokens = kwargs.pop("split_special_tokens", self.split_special_tokens)
        text, kwargs = self.prepare_for_tokenization(text, **kwargs)
        if kwargs:
            raise TypeError(f"{type(self).__name__}.prepare_for_tokenization does not take {sorted(kwargs)}")
        if split_special_tokens:
            return self._tokenize(text)
        pieces = self._split_on_added_tokens(text)
        for i, piece in enumerate(pieces):
            if piece not in self._added_tokens_encoder:
                continue
            token = self._added_tokens_decoder[self._added_tokens_encoder[piece]]
            left = pieces[i - 1] if i > 0 else None
            right = pieces[i + 1] if i < len(pieces) - 1 else None
            if token.rstrip and right:
                pieces[i + 1] = right.lstrip()
            if token.lstrip and left:
                pieces[i - 1] = left.rstrip()
            if token.single_word:
                # Inside a word the token is not a token: it joins the text beside it.
                if left and left[-1] != " ":
                    pieces[i - 1] += piece
                    pieces[i] = ""
                elif right and right[0] != " ":
                    pieces[i + 1] = piece + pieces[i + 1]
                    pieces[i] = ""
        keep_whole = self._no_split_tokens | set(self.all_special_tokens)
        tokens = []
        for piece in pieces:
            if not piece:
                continue
            if piece in keep_whole:
                tokens.append(piece)
            else:
                tokens.extend(self._tokenize(piece))
        return tokens

    def _tokenize(self, text, **kwargs):
        """Split plain text (no added tokens in it) into vocabulary tokens."""
        raise NotImplementedError(f"{type(self).__name__} must define _tokenize()")

    # ---- ids and tokens -------------------------------------------------------------------

    def convert_tokens_to_ids(self, tokens):
        """Token string(s) to id(s), added tokens first, then the subclass's vocabulary."""
        if tokens is None:
            return None
        if isinstance(tokens, str):
            return self._convert_token_to_id_with_added_voc(tokens)
        return [self._convert_token_to_id_with_added_voc(token) for token in tokens]

    def _convert_token_to_id_with_added_voc(self, token):
        if token in self._added_tokens_encoder:
            return self._added_tokens_encoder[token]
        return self._convert_token_to_id(token)

    def _convert_token_to_id(self, token):
        raise NotImplementedError(f"{type(self).__name__} must define _convert_token_to_id()")

    def convert_ids_to_tokens(self, ids, skip_special_tokens=False):
        """Id(s) to token string(s); `skip_special_tokens` drops the special ones from a list."""
        if isinstance(ids, int):
            return self._id_to_token(ids)
        skip = set(self.all_special_ids) if skip_special_tokens else set()
        return [self._id_to_token(int(index)) for index in ids if int(index) not in skip]

    def _id_to_token(self, index):
        if index in self._added_tokens_decoder:
            return self._added_tokens_decoder[index].content
        return self._convert_id_to_token(index)

    def _convert_id_to_token(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define _convert_id_to_token()")

    def convert_tokens_to_string(self, tokens):
        """Tokens back to text; the default joins them with spaces."""
        return " ".join(tokens)

    # ---- special tokens around sequences --------------------------------------------------

    def _layout(self):
        """(before, after a single sequence, between a pair, after a pair) as lists of ids."""
        pattern = self.special_tokens_pattern
        if pattern == "prefix_suffix":
            prefix, suffix = list(getattr(self, "prefix_tokens", [])), list(getattr(self, "suffix_tokens", []))
            return prefix, suffix, [], suffix
        parts = []
        for names in _SPECIAL_TOKEN_LAYOUTS[pattern or "none"]:
            ids = [getattr(self, name + "_id") for name in names]
            if None in ids:
                missing = [name for name, index in zip(names, ids) if index is None]
                raise ValueError(
                    f"special_tokens_pattern={pattern!r} needs {', '.join(missing)}, which this tokenizer lacks: "
                    "set it or change special_tokens_pattern"
                )
            parts.append(ids)
        return parts

    def build_inputs_with_special_tokens(self, token_ids_0, token_ids_1=None):
        """The ids of a sequence or pair with the special tokens of `special_tokens_pattern` added."""
        before, single_end, between, pair_end = self._layout()
        if token_ids_1 is None:
            return before + list(token_ids_0) + single_end
        return before + list(token_ids_0) + between + list(token_ids_1) + pair_end

    def get_special_tokens_mask(self, token_ids_0, token_ids_1=None, already_has_special_tokens=False):
        """1 where `build_inputs_with_special_tokens` puts a special token, 0 over the sequences;
        over ids that already contain them, 1 for every special id."""
        if already_has_special_tokens:
            return super().get_special_tokens_mask(token_ids_0, token_ids_1, already_has_special_tokens=True)
        before, single_end, between, pair_end = self._layout()
        mask = [1] * len(before) + [0] * len(token_ids_0)
        if token_ids_1 is None:
            return mask + [1] * len(single_end)
        return mask + [1] * len(between) + [0] * len(token_ids_1) + [1] * len(pair_end)

    def create_token_type_ids_from_sequences(self, token_ids_0, token_ids_1=None):
        """Type 0 over the first sequence and 1 over the second ("bert_style"), or all 0
        ("all_zeros", and always for "prefix_suffix"). Each part counts its special tokens
        unless `token_type_ids_include_special_tokens` is False."""
        if self.special_tokens_pattern == "prefix_suffix":
            return [0] * len(self.build_inputs_with_special_tokens(token_ids_0, token_ids_1))
        if self.token_type_ids_include_special_tokens:
            first = len(self.build_inputs_with_special_tokens(token_ids_0))
            second = 0 if token_ids_1 is None else len(self.build_inputs_with_special_tokens(token_ids_0, token_ids_1)) - first
        else:
            first, second = len(token_ids_0), len(token_ids_1 or [])
        if self.token_type_ids_pattern == "all_zeros":
            return [0] * (first + second)
        return [0] * first + [1] * second

    def num_special_tokens_to_add(self, pair=False):
        return len(self.build_inputs_with_special_tokens([], [] if pair else None))

    # ---- encoding -------------------------------------------------------------------------

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
        **tokenize_kwargs,
    ):
        # Character offsets are not tracked by Python tokenizers: `return_offsets_mapping` adds
        # nothing (HF's behaviour); use a tokenizers-backed tokenizer for them.
        options = dict(
            add_special_tokens=add_special_tokens, truncation_strategy=truncation_strategy, max_length=max_length,
            stride=stride, return_token_type_ids=return_token_type_ids,
            return_overflowing_tokens=return_overflowing_tokens,
            return_special_tokens_mask=return_special_tokens_mask, return_length=return_length,
        )
        tokenize_options = dict(tokenize_kwargs)
        if split_special_tokens is not None:
            tokenize_options["split_special_tokens"] = split_special_tokens
        if not self._is_batch(text, is_split_into_words):
            ids = self._input_ids(text, is_split_into_words, tokenize_options)
            pair_ids = None if text_pair is None else self._input_ids(text_pair, is_split_into_words, tokenize_options)
            encoded = self._prepare_for_model(ids, pair_ids, **options)
            encoded = self._pad_encoded(encoded, padding_strategy, max_length, pad_to_multiple_of, padding_side,
                                        return_attention_mask)
            if return_tensors is not None:
                encoded = {key: [value] for key, value in encoded.items()}
            return BatchEncoding(encoded, tensor_type=return_tensors)

        if text_pair is not None and (not isinstance(text_pair, (list, tuple)) or len(text_pair) != len(text)):
            raise ValueError("with a batch of texts, text_pair must be a list of the same length")
        batch = {}
        for item, pair in zip(text, text_pair if text_pair is not None else [None] * len(text)):
            if pair is None and isinstance(item, (list, tuple)) and item and not isinstance(item[0], int):
                item, pair = self._unpack_pair(item, is_split_into_words)
            ids = self._input_ids(item, is_split_into_words, tokenize_options)
            pair_ids = None if pair is None else self._input_ids(pair, is_split_into_words, tokenize_options)
            for key, value in self._prepare_for_model(ids, pair_ids, **options).items():
                batch.setdefault(key, []).append(value)
        if return_tensors is not None:
            # Overflow lists have one length per row and cannot become tensors.
            batch.pop("overflowing_tokens", None)
            batch.pop("num_truncated_tokens", None)
        batch = self.pad(batch, padding=padding_strategy.value, max_length=max_length,
                         pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side,
                         return_attention_mask=return_attention_mask)
        return BatchEncoding(dict(batch), tensor_type=return_tensors)

    @staticmethod
    def _is_batch(text, is_split_into_words):
        """A list of texts (or of pre-split word lists) is a batch; a list of ints or of words is one input."""
        if not isinstance(text, (list, tuple)):
            return False
        if not text:
            return not is_split_into_words
        if is_split_into_words:
            return isinstance(text[0], (list, tuple))
        return isinstance(text[0], (str, list, tuple))

    @staticmethod
    def _unpack_pair(item, is_split_into_words):
        """A batch item that is itself a sequence: a (text, pair) couple, or a one-element list."""
        def is_text(value):
            return isinstance(value, (str, list, tuple))

        if len(item) == 2 and (not is_split_into_words or isinstance(item, tuple)) and is_text(item[0]) and is_text(item[1]):
            return item[0], item[1]
        if len(item) == 1:
            return item[0], None
        if not is_split_into_words:
            raise ValueError(f"a batch item that is a list must be a (text, text_pair) couple, got {len(item)} elements")
        return item, None

    def _input_ids(self, text, is_split_into_words, tokenize_options):
        """Ids of one input: a str is tokenized, a list of str is a list of words (with
        is_split_into_words) or of tokens, a list of ints is taken as ids."""
        if isinstance(text, str):
            return self.convert_tokens_to_ids(self.tokenize(text, **tokenize_options))
        if isinstance(text, (list, tuple)) and text:
            if all(isinstance(value, int) for value in text):
                return list(text)
            if all(isinstance(value, str) for value in text):
                if is_split_into_words:
                    return self.convert_tokens_to_ids(
                        [token for word in text for token in self.tokenize(word, **tokenize_options)])
                return self.convert_tokens_to_ids(list(text))
        raise ValueError(
            f"each input must be a str, a list of str (words or tokens) or a list of int ids, got {type(text).__name__} "
            f"{text!r:.60}"
        )

    def prepare_for_model(
        self,
        ids,
        pair_ids=None,
        add_special_tokens=True,
        padding=False,
        truncation=None,
        max_length=None,
        stride=0,
        pad_to_multiple_of=None,
        padding_side=None,
        return_tensors=None,
        return_token_type_ids=None,
        return_attention_mask=None,
        return_overflowing_tokens=False,
        return_special_tokens_mask=False,
        return_length=False,
    ):
        """Truncate, add special tokens to and pad ids that are already tokenized."""
        padding_strategy, truncation_strategy, max_length = self._get_padding_truncation_strategies(
            padding=padding, truncation=truncation, max_length=max_length, pad_to_multiple_of=pad_to_multiple_of
        )
        encoded = self._prepare_for_model(
            list(ids), None if pair_ids is None else list(pair_ids), add_special_tokens=add_special_tokens,
            truncation_strategy=truncation_strategy, max_length=max_length, stride=stride,
            return_token_type_ids=return_token_type_ids, return_overflowing_tokens=return_overflowing_tokens,
            return_special_tokens_mask=return_special_tokens_mask, return_length=return_length,
        )
        encoded = self._pad_encoded(encoded, padding_strategy, max_length, pad_to_multiple_of, padding_side,
                                    return_attention_mask)
        return BatchEncoding(encoded, tensor_type=return_tensors)

    def _prepare_for_model(self, ids, pair_ids, *, add_special_tokens, truncation_strategy, max_length, stride,
                           return_token_type_ids, return_overflowing_tokens, return_special_tokens_mask, return_length):
        """One example's fields before padding."""
        if (return_overflowing_tokens and truncation_strategy == TruncationStrategy.LONGEST_FIRST
                and pair_ids is not None):
            raise ValueError(
                "overflowing tokens of a pair cannot be returned with truncation='longest_first'; "
                "use 'only_first' or 'only_second'"
            )
        if return_token_type_ids is None:
            return_token_type_ids = "token_type_ids" in self.model_input_names
        special = self.num_special_tokens_to_add(pair=pair_ids is not None) if add_special_tokens else 0
        total = len(ids) + len(pair_ids or []) + special
        overflowing = []
        if truncation_strategy != TruncationStrategy.DO_NOT_TRUNCATE and max_length and total > max_length:
            ids, pair_ids, overflowing = self.truncate_sequences(
                ids, pair_ids, num_tokens_to_remove=total - max_length, truncation_strategy=truncation_strategy,
                stride=stride,
            )
        if add_special_tokens:
            sequence = self.build_inputs_with_special_tokens(ids, pair_ids)
            type_ids = self.create_token_type_ids_from_sequences(ids, pair_ids)
        else:
            sequence = ids + (pair_ids or [])
            type_ids = [0] * len(sequence)
        encoded = {"input_ids": sequence}
        if return_token_type_ids:
            encoded["token_type_ids"] = type_ids
        if return_special_tokens_mask:
            encoded["special_tokens_mask"] = (self.get_special_tokens_mask(ids, pair_ids) if add_special_tokens
                                              else [0] * len(sequence))
        if return_overflowing_tokens and overflowing:
            encoded["overflowing_tokens"] = overflowing
            encoded["num_truncated_tokens"] = total - max_length
        if return_length:
            encoded["length"] = len(sequence)
        return encoded

    def _pad_encoded(self, encoded, padding_strategy, max_length, pad_to_multiple_of, padding_side,
                     return_attention_mask):
        if return_attention_mask is None:
            return_attention_mask = "attention_mask" in self.model_input_names
        if padding_strategy == PaddingStrategy.DO_NOT_PAD and not return_attention_mask:
            return encoded
        length = encoded.pop("length", None)
        encoded = dict(self.pad(encoded, padding=padding_strategy.value, max_length=max_length,
                                pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side,
                                return_attention_mask=return_attention_mask))
        if length is not None:
            # As HF: the length after padding.
            encoded["length"] = len(encoded["input_ids"])
        return encoded

    def truncate_sequences(self, ids, pair_ids=None, num_tokens_to_remove=0, truncation_strategy="longest_first",
                           stride=0):
        """Remove `num_tokens_to_remove` ids on `truncation_side`; returns (ids, pair_ids,
        overflowing), the overflow being the removed ids plus `stride` ids of context (not kept
        for `longest_first` on a pair, whose cut is spread over both sequences)."""
        if num_tokens_to_remove <= 0:
            return ids, pair_ids, []
        truncation_strategy = TruncationStrategy(truncation_strategy)
        left = self.truncation_side == "left"

        def cut(sequence, count):
            window = min(len(sequence), stride + count)
            if left:
                return sequence[count:], sequence[:window]
            return sequence[:-count] if count else sequence, sequence[-window:]

        if truncation_strategy == TruncationStrategy.ONLY_FIRST or (
            truncation_strategy == TruncationStrategy.LONGEST_FIRST and pair_ids is None
        ):
            ids, overflowing = cut(ids, num_tokens_to_remove)
            return ids, pair_ids, overflowing
        if truncation_strategy == TruncationStrategy.LONGEST_FIRST:
            # Shorten the longer sequence to the other's length first, then both alternately.
            first_cut = min(abs(len(pair_ids) - len(ids)), num_tokens_to_remove)
            rest = num_tokens_to_remove - first_cut
            if len(ids) > len(pair_ids):
                from_ids, from_pair = first_cut + rest // 2, rest - rest // 2
            else:
                from_ids, from_pair = rest // 2, first_cut + rest - rest // 2
            ids, _ = cut(ids, from_ids) if from_ids else (ids, [])
            pair_ids, _ = cut(pair_ids, from_pair) if from_pair else (pair_ids, [])
            return ids, pair_ids, []
        if truncation_strategy == TruncationStrategy.ONLY_SECOND and pair_ids:
            pair_ids, overflowing = cut(pair_ids, num_tokens_to_remove)
            return ids, pair_ids, overflowing
        return ids, pair_ids, []

    # ---- decoding -------------------------------------------------------------------------

    def _decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None,
                spaces_between_special_tokens=True):
        """Ids to tokens to text with `convert_tokens_to_string`, over added and special tokens
        alike. `spaces_between_special_tokens` is accepted for v4 callers; v5 joins every token
        through `convert_tokens_to_string`, so it changes nothing."""
        tokens = self.convert_ids_to_tokens(token_ids, skip_special_tokens=skip_special_tokens)
        text = self.convert_tokens_to_string([tokens] if isinstance(tokens, str) else tokens)
        if clean_up_tokenization_spaces is None:
            clean_up_tokenization_spaces = self.clean_up_tokenization_spaces
        return self.clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    # ---- saving ---------------------------------------------------------------------------

    def _config_for_save(self):
        config = super()._config_for_save()
        config["added_tokens_decoder"] = {str(index): token.__getstate__()
                                          for index, token in self.added_tokens_decoder.items()}
        return config

    def _save_backend(self, save_directory, prefix):
        """added_tokens.json (the added tokens beyond the base vocabulary, for v4 loaders) and the
        subclass's vocabulary files."""
        written = []
        added = {content: index for content, index in self.added_tokens_encoder.items() if index >= self.vocab_size}
        if added:
            path = os.path.join(save_directory, prefix + ADDED_TOKENS_FILE)
            written.append(write_text_atomic(path, _json_text(added)))
        written.extend(self.save_vocabulary(save_directory, filename_prefix=prefix[:-1] if prefix else None))
        return written

    def save_vocabulary(self, save_directory, filename_prefix=None):
        """Write the vocabulary files; the default writes `self.encoder` or `self.vocab` (a
        {token: id} dict) as JSON to the `vocab_file` name, or nothing when neither exists."""
        vocab = getattr(self, "encoder", None) or self.__dict__.get("vocab")
        if not isinstance(vocab, dict):
            return ()
        prefix = filename_prefix + "-" if filename_prefix else ""
        path = os.path.join(save_directory, prefix + self.vocab_files_names.get("vocab_file", "vocab.json"))
        return (write_text_atomic(path, _json_text(vocab)),)


PreTrainedTokenizer = PythonBackend
