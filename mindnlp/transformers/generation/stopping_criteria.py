# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Stopping criteria: after each generated token, which rows of the batch are done.

A criterion is called as `criterion(input_ids, scores)` and returns a (batch,) bool tensor;
`StoppingCriteriaList` ORs its members. Names and semantics are Hugging Face's.
"""
import copy
import json
import logging
import time
import warnings
from collections import OrderedDict

import numpy as np

from ... import core

logger = logging.getLogger(__name__)

__all__ = [
    "ConfidenceCriteria", "EosTokenCriteria", "MaxLengthCriteria", "MaxTimeCriteria", "StopStringCriteria",
    "StoppingCriteria", "StoppingCriteriaList", "validate_stopping_criteria",
]


class StoppingCriteria:
    """Base class: `criterion(input_ids, scores, **kwargs)` → (batch,) bool tensor, True where done."""

    def __call__(self, input_ids, scores, **kwargs):
        raise NotImplementedError("StoppingCriteria needs to be subclassed")


def _all_rows(input_ids, value):
    return core.full((input_ids.shape[0],), bool(value), dtype=core.bool, device=input_ids.device)


class MaxLengthCriteria(StoppingCriteria):
    """Done once the sequence (prompt included) reaches `max_length` tokens."""

    def __init__(self, max_length, max_position_embeddings=None):
        self.max_length = max_length
        self.max_position_embeddings = max_position_embeddings
        self._warned = False

    def __call__(self, input_ids, scores, **kwargs):
        cur_len = input_ids.shape[1]
        is_done = cur_len >= self.max_length
        if (self.max_position_embeddings is not None and not is_done and cur_len > self.max_position_embeddings
                and not self._warned):
            self._warned = True
            logger.warning(
                "This is a friendly reminder - the current text generation call has exceeded the model's predefined "
                f"maximum length ({self.max_position_embeddings}). Depending on the model, you may observe "
                "exceptions, performance degradation, or nothing at all."
            )
        return _all_rows(input_ids, is_done)


class MaxTimeCriteria(StoppingCriteria):
    """Done once `max_time` seconds have passed since `initial_timestamp` (default: creation)."""

    def __init__(self, max_time, initial_timestamp=None):
        self.max_time = max_time
        self.initial_timestamp = time.time() if initial_timestamp is None else initial_timestamp

    def __call__(self, input_ids, scores, **kwargs):
        return _all_rows(input_ids, time.time() - self.initial_timestamp > self.max_time)


class EosTokenCriteria(StoppingCriteria):
    """Done for rows whose last token (last `new_token_length` tokens) is one of the EOS ids."""

    def __init__(self, eos_token_id):
        if isinstance(eos_token_id, core.Tensor):
            eos_token_id = eos_token_id.reshape(-1).long()
        else:
            eos_token_id = core.tensor([eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id),
                                       dtype=core.int64)
        self.eos_token_id = eos_token_id

    def __call__(self, input_ids, scores, new_token_length=1, **kwargs):
        self.eos_token_id = self.eos_token_id.to(input_ids.device)
        return core.isin(input_ids[:, -new_token_length:], self.eos_token_id).any(dim=-1)


# Cleaned vocabularies of recently used tokenizers (computing one decodes every token).
_CLEAN_VOCAB_CACHE = OrderedDict()


class ConfidenceCriteria(StoppingCriteria):
    """For an assistant drafting tokens: stop the draft once the assistant's probability of the
    token it just picked falls below `assistant_confidence_threshold` (batch of one, as
    assisted decoding is). `scores` are the assistant's per-step scores."""

    def __init__(self, assistant_confidence_threshold):
        self.assistant_confidence_threshold = assistant_confidence_threshold

    def __call__(self, input_ids, scores, **kwargs):
        probs = scores[-1].softmax(-1)
        p = probs[0, input_ids[0, -1]].item()
        return bool(p < self.assistant_confidence_threshold)


def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable characters (what byte-level BPE tokens are made of)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars)))


class StopStringCriteria(StoppingCriteria):
    """Done for rows whose text ends with one of `stop_strings`, at the token level.

    A stop string counts when it ends inside the newest token (possibly followed by more
    characters of that token) and the tokens before it spell the rest, exactly as Hugging
    Face's StopStringCriteria decides. Tokens are compared through their "clean" strings (the
    text each one adds when it follows other text; bytes for byte-level and byte-fallback
    tokenizers), so a stop string split across tokens is found without decoding the sequence.
    As in HF, only the last `max(len(stop_string))` tokens are looked at.
    """

    def __init__(self, tokenizer, stop_strings):
        if isinstance(stop_strings, str):
            stop_strings = [stop_strings]
        if len(stop_strings) == 0 or any(not isinstance(s, str) or not s for s in stop_strings):
            raise ValueError(f"stop_strings must be a non-empty string or a list of them, got {stop_strings!r}")
        self.stop_strings = tuple(stop_strings)
        mode = self._get_stop_string_matching_mode(tokenizer)
        self._matching_mode = mode
        self._targets = self.stop_strings if mode is None else tuple(s.encode("utf-8") for s in self.stop_strings)
        self.maximum_token_len = max(len(s) for s in self._targets)
        self._clean_by_id = self._clean_vocab_by_id(tokenizer, mode)
        if not any(self._could_end(token) for token in self._clean_by_id if token):
            raise ValueError(
                "Stop string preprocessing was unable to identify tokens matching one or more of the supplied stop "
                "string(s). This is most often caused by the stop strings containing unusual characters that are not "
                "in the tokenizer vocabulary."
            )

    def _could_end(self, token):
        """Whether some stop string can end inside this token (used only to reject hopeless stop strings)."""
        for target in self._targets:
            for cut in range(len(token)):
                head = token[:len(token) - cut]
                if head.endswith(target[-len(head):]):
                    return True
        return False

    @staticmethod
    def _get_stop_string_matching_mode(tokenizer):
        """'byte_level' (GPT-2 style), 'byte_fallback' (SentencePiece <0xNN> tokens) or None (plain text)."""
        backend = getattr(tokenizer, "backend_tokenizer", None)
        decoder = getattr(backend, "decoder", None)
        if decoder is None:
            return None
        if type(decoder).__name__ == "ByteLevel":
            return "byte_level"
        state = getattr(decoder, "__getstate__", lambda: None)()
        if isinstance(state, bytes):
            state = state.decode("utf-8", errors="replace")
        try:
            config = json.loads(state) if isinstance(state, str) else None
        except json.JSONDecodeError:
            config = None
        if _has_type(config, "ByteFallback"):
            return "byte_fallback"
        if _has_type(config, "ByteLevel"):
            return "byte_level"
        return None

    @staticmethod
    def _clean_vocab_by_id(tokenizer, mode, static_prefix="abcdef"):
        """List indexed by token id: the text (or bytes) each token adds after other text."""
        vocab = tokenizer.get_vocab()
        key = (tuple(vocab.items()), mode)
        if key in _CLEAN_VOCAB_CACHE:
            _CLEAN_VOCAB_CACHE.move_to_end(key)
            return _CLEAN_VOCAB_CACHE[key]
        byte_decoder = {char: byte for byte, char in bytes_to_unicode().items()} if mode == "byte_level" else None
        prefix_ids = tokenizer(static_prefix, add_special_tokens=False)["input_ids"]
        prefix_tokens = tokenizer.convert_ids_to_tokens(prefix_ids)
        clean = [None] * (max(vocab.values()) + 1)
        for token, token_id in vocab.items():
            text = _token_to_bytes(token, mode, byte_decoder)
            if text is None:
                text = tokenizer.convert_tokens_to_string(prefix_tokens + [token])
                text = text[text.index(static_prefix) + len(static_prefix):]
                if mode is not None:
                    text = text.encode("utf-8")
            clean[token_id] = text
        _CLEAN_VOCAB_CACHE[key] = clean
        if len(_CLEAN_VOCAB_CACHE) > 8:
            _CLEAN_VOCAB_CACHE.popitem(last=False)
        return clean

    @staticmethod
    def _stop_string_get_matching_positions(token_list, token_indices, stop_strings):
        """HF's tables of how tokens can sit in each stop string, counted from its end:
        ({stop: {token id: [positions]}} where the token lies inside the string (or runs off its
        start) `position` characters before its end, {stop: {token id: [lengths]}} where the
        token begins with the string's last `length` characters). __call__ here searches the
        tokens' text instead, which decides the same; the tables are kept for HF's API."""
        token_valid_positions, token_end_overlaps = {}, {}
        for stop_string in stop_strings:
            reversed_stop = stop_string[::-1]
            token_valid_positions[stop_string], token_end_overlaps[stop_string] = {}, {}
            for token, token_idx in zip(token_list, token_indices):
                reversed_token = token[::-1]
                positions, end_lengths = [], []
                for i in range(1 - len(token), len(stop_string)):
                    # A negative i: the token's first -i characters lie past the string's end.
                    piece = reversed_token[-i:] if i < 0 else reversed_token
                    start = max(i, 0)
                    stop = reversed_stop[start:start + len(piece)]
                    if piece.startswith(stop):
                        if start == 0:
                            end_lengths.append(min(len(piece), len(stop)))
                        else:
                            positions.append(start)
                if positions:
                    token_valid_positions[stop_string][token_idx] = positions
                if end_lengths:
                    token_end_overlaps[stop_string][token_idx] = end_lengths
        return token_valid_positions, token_end_overlaps

    @staticmethod
    def _stop_string_create_embedding_vec(token_list, token_indices, stop_strings):
        """HF's packed form of those tables: (an int32 tensor with a row per token id plus a
        dummy last row, holding each stop string's valid positions, then its end overlaps
        (-1 padded), then the token's length; the widths of the two padded blocks)."""
        valid_positions, end_overlaps = StopStringCriteria._stop_string_get_matching_positions(
            token_list, token_indices, stop_strings)
        position_counts = [len(v) for table in valid_positions.values() for v in table.values()]
        max_valid_positions = max(position_counts) if position_counts else 1
        end_counts = [len(v) for table in end_overlaps.values() for v in table.values()]
        if not end_counts:
            raise ValueError(
                "Stop string preprocessing was unable to identify tokens matching one or more of the supplied stop "
                "string(s). This is most often caused by the stop strings containing unusual characters that are not "
                "in the tokenizer vocabulary."
            )
        max_valid_end_lens = max(end_counts)
        n = len(stop_strings)
        table = np.full((max(token_indices) + 2, n * (max_valid_positions + max_valid_end_lens) + 1), -1,
                        dtype=np.int32)
        for i, stop_string in enumerate(stop_strings):
            for token_idx, positions in valid_positions[stop_string].items():
                start = max_valid_positions * i
                table[token_idx, start:start + len(positions)] = positions
            for token_idx, lengths in end_overlaps[stop_string].items():
                start = max_valid_positions * n + max_valid_end_lens * i
                table[token_idx, start:start + len(lengths)] = lengths
        for token, token_idx in zip(token_list, token_indices):
            table[token_idx, -1] = len(token)
        return core.tensor(table, dtype=core.int32), max_valid_positions, max_valid_end_lens

    def _row_matches(self, row_ids):
        """row_ids: the row's last tokens, oldest first."""
        pieces = []
        for token_id in reversed(row_ids):
            text = self._clean_by_id[token_id] if 0 <= token_id < len(self._clean_by_id) else None
            if text is None:  # an unknown id breaks any match, as in HF
                break
            pieces.append(text)
        if not pieces or not pieces[0]:
            return False
        last_length = len(pieces[0])
        text = pieces[0][:0].join(reversed(pieces))
        end = len(text)
        for target in self._targets:
            # An occurrence ending inside the newest token: it ends after end - last_length.
            start = max(0, end - last_length - len(target) + 1)
            if text.find(target, start, end) != -1:
                return True
        return False

    def __call__(self, input_ids, scores, **kwargs):
        window = input_ids[:, -self.maximum_token_len:].tolist()
        done = [self._row_matches(row) for row in window]
        return core.tensor(done, dtype=core.bool, device=input_ids.device)


def _has_type(config, wanted):
    if isinstance(config, dict):
        return config.get("type") == wanted or any(_has_type(v, wanted) for v in config.values())
    if isinstance(config, list):
        return any(_has_type(v, wanted) for v in config)
    return False


def _token_to_bytes(token, mode, byte_decoder):
    """A token's bytes when its spelling encodes them directly, else None."""
    if mode == "byte_level":
        if all(char in byte_decoder for char in token):
            return bytes(byte_decoder[char] for char in token)
        return None
    if mode == "byte_fallback":
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">") and all(
                char in "0123456789abcdefABCDEF" for char in token[3:5]):
            return bytes([int(token[3:5], 16)])
    return None


class StoppingCriteriaList(list):
    """ORs its criteria: a row is done when any criterion says so."""

    def __call__(self, input_ids, scores, **kwargs):
        rows = (input_ids.shape[0],)
        results = [criterion(input_ids, scores, **kwargs) for criterion in self]
        first = results[0] if results else None
        if isinstance(first, core.Tensor) and first.dtype == core.bool and tuple(first.shape) == rows:
            is_done, rest = first, results[1:]    # a row mask already: no all-False start (once per step)
        else:
            is_done, rest = core.zeros(rows, dtype=core.bool, device=input_ids.device), results
        for done in rest:
            is_done = is_done | done
        return is_done

    @property
    def max_length(self):
        for criterion in self:
            if isinstance(criterion, MaxLengthCriteria):
                return criterion.max_length
        return None


def validate_stopping_criteria(stopping_criteria, max_length):
    """A copy of `stopping_criteria` that stops at `max_length`: a MaxLengthCriteria is added
    when there is none; a different one present is kept, with a warning."""
    stopping_max_length = stopping_criteria.max_length
    new_stopping_criteria = copy.deepcopy(stopping_criteria)
    if stopping_max_length is not None and stopping_max_length != max_length:
        warnings.warn("You set different `max_length` for stopping criteria and `max_length` parameter", UserWarning)
    elif stopping_max_length is None:
        new_stopping_criteria.append(MaxLengthCriteria(max_length=max_length))
    return new_stopping_criteria
