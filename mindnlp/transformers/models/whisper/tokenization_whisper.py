# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""WhisperTokenizer: GPT-2's byte-level BPE plus Whisper's special tokens, prefix and timestamps.

Above the text vocabulary sit `<|endoftext|>`, `<|startoftranscript|>`, one token per
language (`<|en|>`, ... in `LANGUAGES` order), `<|translate|>`, `<|transcribe|>`,
`<|startoflm|>`, `<|startofprev|>`, `<|nospeech|>`, `<|notimestamps|>`, and then 1501
timestamp tokens `<|0.00|>` ... `<|30.00|>` (one per 20 ms). Encoding text for training
adds the prefix `<|startoftranscript|> <|lang|> <|task|> <|notimestamps|>` (from
`language`, `task`, `predict_timestamps`) and a final `<|endoftext|>`.

Decoding drops the timestamp tokens from the text, or writes them as `<|1.08|>`
(`decode_with_timestamps`), or returns each timestamped segment with its times
(`output_offsets`): times keep counting across 30 s windows. `normalize=True` /
`basic_normalize=True` pass the text through Whisper's English / basic normalizer (the English
one maps spellings with the checkpoint's normalizer.json).

The ASR pipeline's output is decoded by `_decode_asr`: segments between timestamp tokens, or
words (`return_timestamps="word"`, from per-token times) grouped by `_combine_tokens_into_words`.
"""
import json
import os
import re

import numpy as np
from tokenizers import processors

from ....core.serialization import write_text_atomic
from ..gpt2.tokenization_gpt2 import GPT2TokenizerFast
from .english_normalizer import BasicTextNormalizer, EnglishTextNormalizer

LANGUAGES = {
    "en": "english", "zh": "chinese", "de": "german", "es": "spanish", "ru": "russian", "ko": "korean",
    "fr": "french", "ja": "japanese", "pt": "portuguese", "tr": "turkish", "pl": "polish", "ca": "catalan",
    "nl": "dutch", "ar": "arabic", "sv": "swedish", "it": "italian", "id": "indonesian", "hi": "hindi",
    "fi": "finnish", "vi": "vietnamese", "he": "hebrew", "uk": "ukrainian", "el": "greek", "ms": "malay",
    "cs": "czech", "ro": "romanian", "da": "danish", "hu": "hungarian", "ta": "tamil", "no": "norwegian",
    "th": "thai", "ur": "urdu", "hr": "croatian", "bg": "bulgarian", "lt": "lithuanian", "la": "latin",
    "mi": "maori", "ml": "malayalam", "cy": "welsh", "sk": "slovak", "te": "telugu", "fa": "persian",
    "lv": "latvian", "bn": "bengali", "sr": "serbian", "az": "azerbaijani", "sl": "slovenian", "kn": "kannada",
    "et": "estonian", "mk": "macedonian", "br": "breton", "eu": "basque", "is": "icelandic", "hy": "armenian",
    "ne": "nepali", "mn": "mongolian", "bs": "bosnian", "kk": "kazakh", "sq": "albanian", "sw": "swahili",
    "gl": "galician", "mr": "marathi", "pa": "punjabi", "si": "sinhala", "km": "khmer", "sn": "shona",
    "yo": "yoruba", "so": "somali", "af": "afrikaans", "oc": "occitan", "ka": "georgian", "be": "belarusian",
    "tg": "tajik", "sd": "sindhi", "gu": "gujarati", "am": "amharic", "yi": "yiddish", "lo": "lao", "uz": "uzbek",
    "fo": "faroese", "ht": "haitian creole", "ps": "pashto", "tk": "turkmen", "nn": "nynorsk", "mt": "maltese",
    "sa": "sanskrit", "lb": "luxembourgish", "my": "myanmar", "bo": "tibetan", "tl": "tagalog", "mg": "malagasy",
    "as": "assamese", "tt": "tatar", "haw": "hawaiian", "ln": "lingala", "ha": "hausa", "ba": "bashkir",
    "jw": "javanese", "su": "sundanese", "yue": "cantonese",
}

TO_LANGUAGE_CODE = {
    **{language: code for code, language in LANGUAGES.items()},
    "burmese": "my", "valencian": "ca", "flemish": "nl", "haitian": "ht", "letzeburgesch": "lb", "pushto": "ps",
    "panjabi": "pa", "moldavian": "ro", "moldovan": "ro", "sinhalese": "si", "castilian": "es", "mandarin": "zh",
}

TASK_IDS = ["translate", "transcribe"]

_TIMESTAMP_PATTERN = re.compile(r"<\|(\d+\.\d+)\|>")
# languages written without spaces between words: a word is each decodable piece
_LANGUAGES_WITHOUT_SPACES = {"chinese", "japanese", "thai", "lao", "myanmar", "cantonese"}
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def language_code(language):
    """A language's name ("french") or code ("fr") → its code; anything else is an error."""
    language = language.lower()
    if language in TO_LANGUAGE_CODE:
        return TO_LANGUAGE_CODE[language]
    if language in TO_LANGUAGE_CODE.values():
        return language
    choices = list(TO_LANGUAGE_CODE.values()) if len(language) == 2 else list(TO_LANGUAGE_CODE.keys())
    raise ValueError(f"Unsupported language: {language}. Language should be one of: {choices}.")


class WhisperTokenizer(GPT2TokenizerFast):
    """See the module docstring. `language`, `task` and `predict_timestamps` set the prefix
    (`set_prefix_tokens` changes it later)."""

    vocab_files_names = {"vocab_file": "vocab.json", "merges_file": "merges.txt", "normalizer_file": "normalizer.json"}
    auxiliary_files_names = ("normalizer_file",)
    model_input_names = ["input_ids", "attention_mask"]

    def __init__(self, vocab_file=None, merges_file=None, normalizer_file=None, tokenizer_file=None,
                 unk_token="<|endoftext|>", bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                 add_prefix_space=False, language=None, task=None, predict_timestamps=False, **kwargs):
        super().__init__(vocab_file=vocab_file, merges_file=merges_file, tokenizer_file=tokenizer_file,
                         unk_token=unk_token, bos_token=bos_token, eos_token=eos_token,
                         add_prefix_space=add_prefix_space, **kwargs)
        self.english_spelling_normalizer = None
        if normalizer_file is not None:
            with open(normalizer_file, encoding="utf-8") as handle:
                self.english_spelling_normalizer = json.load(handle)
        self.language = language
        self.task = task
        self.predict_timestamps = predict_timestamps
        self.set_prefix_tokens()

    # ------------------------------------------------------------------ prefix

    @property
    def prefix_tokens(self):
        """`<|startoftranscript|>`, then the language, the task and `<|notimestamps|>` when set."""
        start = self.convert_tokens_to_ids("<|startoftranscript|>")
        prefix = [start]
        if self.language is not None:
            self.language = self.language.lower()
            prefix.append(start + 1 + tuple(LANGUAGES).index(language_code(self.language)))
        if self.task is not None:
            if self.task not in TASK_IDS:
                raise ValueError(f"Unsupported task: {self.task}. Task should be in: {TASK_IDS}")
            prefix.append(self.convert_tokens_to_ids("<|transcribe|>" if self.task == "transcribe"
                                                     else "<|translate|>"))
        if not self.predict_timestamps:
            prefix.append(self.convert_tokens_to_ids("<|notimestamps|>"))
        return prefix

    def set_prefix_tokens(self, language=None, task=None, predict_timestamps=None):
        """Change the prefix added to encoded text (None keeps a setting as it is)."""
        self.language = language if language is not None else self.language
        self.task = task if task is not None else self.task
        self.predict_timestamps = predict_timestamps if predict_timestamps is not None else self.predict_timestamps
        prefix_ids = self.prefix_tokens
        prefix = self.convert_ids_to_tokens(prefix_ids)
        template = " ".join(f"{token}:0" for token in prefix)
        eos = self.eos_token
        self._tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{template} $A:0 {eos}:0", pair=f"{template} $A:0 $B:1 {eos}:1",
            special_tokens=[(eos, self.eos_token_id), *zip(prefix, prefix_ids)])

    def update_post_processor(self):
        """The prefix template stands in for the bos/eos template of other tokenizers."""
        if hasattr(self, "predict_timestamps"):
            self.set_prefix_tokens()

    def build_inputs_with_special_tokens(self, token_ids_0, token_ids_1=None):
        return self.prefix_tokens + token_ids_0 + (token_ids_1 or []) + [self.eos_token_id]

    def get_decoder_prompt_ids(self, task=None, language=None, no_timestamps=True):
        """[(position, id), ...] of the prefix after the start token (the legacy forced_decoder_ids)."""
        self.set_prefix_tokens(task=task, language=language, predict_timestamps=not no_timestamps)
        return [(rank + 1, token) for rank, token in enumerate(self.prefix_tokens[1:])]

    def get_prompt_ids(self, text, return_tensors="np"):
        """`<|startofprev|>` and the text's ids: a prompt for generate(prompt_ids=...)."""
        encoding = self("<|startofprev|>", " " + text.strip(), add_special_tokens=False)
        ids = encoding["input_ids"]
        special = next((token for token in ids[1:] if token >= self.all_special_ids[0]), None)
        if special is not None:
            raise ValueError("Encountered text in the prompt corresponding to disallowed special token: "
                             f"{self.convert_ids_to_tokens(special)}.")
        encoding.convert_to_tensors(tensor_type=return_tensors)
        return encoding["input_ids"]

    # ------------------------------------------------------------------ decoding

    @staticmethod
    def _convert_to_list(token_ids):
        """Ids given as a tensor or array, as (nested) Python lists."""
        if hasattr(token_ids, "numpy"):
            token_ids = (token_ids.cpu() if hasattr(token_ids, "cpu") else token_ids).numpy()
        if isinstance(token_ids, np.ndarray):
            token_ids = token_ids.tolist()
        return token_ids

    @property
    def timestamp_begin(self):
        """The first timestamp token's id: right after the special tokens."""
        return self.all_special_ids[-1] + 1

    def _strip_prompt(self, token_ids, prompt_token_id, decoder_start_token_id):
        """Ids without a leading `<|startofprev|>` prompt (everything before the start token)."""
        token_ids = self._convert_to_list(token_ids)
        if not token_ids or token_ids[0] != prompt_token_id:
            return token_ids
        if decoder_start_token_id in token_ids:
            return token_ids[token_ids.index(decoder_start_token_id):]
        return []

    def _preprocess_token_ids(self, token_ids, skip_special_tokens=False):
        if skip_special_tokens:
            token_ids = self._strip_prompt(token_ids, self.convert_tokens_to_ids("<|startofprev|>"),
                                           self.convert_tokens_to_ids("<|startoftranscript|>"))
        return token_ids

    def decode(self, token_ids, skip_special_tokens=False, clean_up_tokenization_spaces=None, output_offsets=False,
               time_precision=0.02, decode_with_timestamps=False, normalize=False, basic_normalize=False,
               remove_diacritics=False, **kwargs):
        """Text of the ids, without timestamp tokens; with `decode_with_timestamps` they are
        written as "<|1.08|>", with `output_offsets` the result is {"text", "offsets"} where
        each offset is one timestamped segment's {"text", "timestamp": (start, end)}.
        `normalize` / `basic_normalize` (with `remove_diacritics`) normalise the text, timestamp
        tokens still in it, as Hugging Face's tokenizer does."""
        ids = self._convert_to_list(token_ids)
        if isinstance(ids, list) and ids and isinstance(ids[0], list):
            return [self.decode(row, skip_special_tokens, clean_up_tokenization_spaces, output_offsets,
                                time_precision, decode_with_timestamps, normalize, basic_normalize,
                                remove_diacritics, **kwargs) for row in ids]
        filtered = self._preprocess_token_ids(ids, skip_special_tokens=skip_special_tokens)
        if decode_with_timestamps:
            text = self._decode_with_timestamps(filtered, skip_special_tokens=skip_special_tokens,
                                                time_precision=time_precision)
        else:
            text = super().decode(filtered, skip_special_tokens=skip_special_tokens,
                                  clean_up_tokenization_spaces=clean_up_tokenization_spaces, **kwargs)
            if normalize:
                text = self.normalize(text)
            elif basic_normalize:
                text = self.basic_normalize(text, remove_diacritics=remove_diacritics)
            text = _TIMESTAMP_PATTERN.sub("", text)
        if output_offsets:
            return {"text": text, "offsets": self._compute_offsets(ids, time_precision=time_precision)}
        return text

    def normalize(self, text):
        """`text` through Whisper's English normalizer (spellings from normalizer.json)."""
        return EnglishTextNormalizer(self.english_spelling_normalizer)(text)

    @staticmethod
    def basic_normalize(text, remove_diacritics=False):
        """`text` through Whisper's basic (any-language) normalizer."""
        return BasicTextNormalizer(remove_diacritics=remove_diacritics)(text)

    def _save_backend(self, save_directory, prefix):
        """tokenizer.json, and normalizer.json when the tokenizer has a spelling table."""
        written = super()._save_backend(save_directory, prefix)
        if self.english_spelling_normalizer is not None:
            path = os.path.join(save_directory, prefix + self.vocab_files_names["normalizer_file"])
            text = json.dumps(self.english_spelling_normalizer, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
            written.append(write_text_atomic(path, text))
        return written

    def _decode_with_timestamps(self, token_ids, skip_special_tokens=False, time_precision=0.02, segment_size=1500):
        """Text with each timestamp token written as its time, counted from the first window:
        when time goes back, a new window began (after a full window if the last segment
        ended with a single timestamp, else after the previous segment's end)."""
        begin = self.timestamp_begin
        pieces = [[]]
        latest = penultimate = offset = 0.0
        for i, token in enumerate(token_ids):
            if token < begin:
                pieces[-1].append(token)
                continue
            time = float((token - begin) * time_precision)
            if time < latest:
                single_ending = i >= 2 and not (token_ids[i - 1] >= begin and token_ids[i - 2] >= begin)
                if single_ending:
                    offset += time_precision * segment_size
                else:
                    latest = penultimate
                    offset += penultimate
                    pieces = pieces[:-2]
            penultimate, latest = latest, time
            pieces += [f"<|{time + offset:.2f}|>", []]
        return "".join(piece if isinstance(piece, str) else
                       GPT2TokenizerFast.decode(self, piece, skip_special_tokens=skip_special_tokens) if piece else ""
                       for piece in pieces)

    def _compute_offsets(self, token_ids, time_precision=0.02, segment_size=1500):
        """[{"text", "timestamp": (start, end)}] for each segment between timestamp tokens."""
        ids = np.array(self._convert_to_list(token_ids))
        if ids.ndim > 1 and ids.shape[0] > 1:
            raise ValueError("Can only process a single input at a time")
        begin = self.timestamp_begin
        is_timestamp = ids >= begin
        boundaries = np.where(is_timestamp[:-1] & is_timestamp[1:])[0] + 1
        if boundaries.shape[0] == 0 and is_timestamp.sum() <= 1:
            return []
        stamps = np.where(is_timestamp)[0]
        if stamps[-1] + 1 not in boundaries:
            boundaries = np.append(boundaries, stamps[-1] + 1)
        offsets = []
        start, latest, windows = stamps[0], 0, 0
        for end in boundaries:
            piece = ids[start:end]
            if len(piece) > 1:
                first, last = int(piece[0]) - begin, int(piece[-1]) - begin
                if first < latest:  # a new window began
                    single_ending = start >= 2 and not (ids[start - 2] >= begin and ids[start - 1] >= begin)
                    windows += segment_size if single_ending else latest
                latest = last
                text = _TIMESTAMP_PATTERN.sub("", self._decode(piece.tolist()))
                offsets.append({"text": text, "timestamp": ((first + windows) * time_precision,
                                                            (last + windows) * time_precision)})
            start = end
        return offsets

    def _decode_asr(self, model_outputs, *, return_timestamps, return_language, time_precision, segment_size=1500):
        """(text, {"chunks": [...]} or {}) of the ASR pipeline's outputs: one per audio chunk,
        {"tokens": (1, n) ids, "stride": (chunk, left, right) in seconds when chunked, and with
        `return_timestamps="word"` "token_timestamps": (1, n) the time each token ends}.

        Timestamp pairs close segments (chunks with their times, offset by where each audio
        chunk starts); language tokens name the chunks' language. Tokens of overlapping audio
        chunks are joined where they agree (`_find_longest_common_sequence`); timestamps inside
        a chunk's strides are ignored, those overlaps belonging to its neighbours. For words,
        each text token spans from the previous token's time to its own, and the chunks are
        the segments' words, each from its first token's start to its last token's end.
        """
        words = return_timestamps == "word"
        begin = self.convert_tokens_to_ids("<|notimestamps|>") + 1
        specials = set(self.all_special_ids)
        prompt_token = self.convert_tokens_to_ids("<|startofprev|>")
        start_token = self.convert_tokens_to_ids("<|startoftranscript|>")
        state = {"language": None}

        def new_chunk():
            return {"language": state["language"], "timestamp": [None, None], "text": ""}

        chunks, chunk = [], new_chunk()
        previous_tokens, previous_times = [], []
        time_offset = 0.0

        def close(chunk, previous_tokens, previous_times):
            """The chunk's text (and words) from the token lists of the audio chunks it spans."""
            tokens, times = _find_longest_common_sequence(previous_tokens, previous_times)
            chunk["text"] = self.decode(tokens)
            if words:
                chunk["words"] = _collate_word_timestamps(self, tokens, times, state["language"], return_language)
            chunks.append(chunk)

        skip = False
        for output in model_outputs:
            ids = self._strip_prompt(self._convert_to_list(output["tokens"])[0], prompt_token, start_token)
            token_times = self._convert_to_list(output["token_timestamps"])[0] if words else None
            last_timestamp, first_timestamp = None, begin
            latest = penultimate = windows = 0.0
            if "stride" in output:
                chunk_length, stride_left, stride_right = output["stride"]
                time_offset -= stride_left
                right_stride_start = chunk_length - stride_right
                if stride_left:
                    first_timestamp = stride_left / time_precision + begin
                if stride_right:
                    # the last timestamp before the right stride ends what this chunk may say
                    for token in reversed(ids):
                        if token >= begin:
                            if last_timestamp is not None and (token - begin) * time_precision < right_stride_start:
                                break
                            last_timestamp = token
            current, current_times = [], []
            for i, token in enumerate(ids):
                if token in specials:
                    language = LANGUAGES.get(self.decode([token])[2:-2])
                    if language is None:
                        continue
                    if state["language"] and language != state["language"] and not return_timestamps:
                        previous_tokens.append(current)
                        close(chunk, previous_tokens, [])
                        previous_tokens, current, chunk = [], [], new_chunk()
                    chunk["language"] = state["language"] = language
                elif token >= begin:
                    stamp = float((token - begin) * time_precision)
                    if stamp < latest:  # a new 30 s window of long-form output
                        single_ending = i >= 2 and not (ids[i - 1] >= begin and ids[i - 2] >= begin)
                        if single_ending:
                            windows += time_precision * segment_size
                        else:
                            latest = penultimate
                            windows += penultimate
                    penultimate, latest = latest, stamp
                    time = round((token - begin) * time_precision + time_offset + windows, 2)
                    if last_timestamp and token >= last_timestamp:
                        skip = True
                    elif skip or (previous_tokens and token < first_timestamp):
                        skip = False
                    elif chunk["timestamp"][0] is None:
                        chunk["timestamp"][0] = time
                    elif time != chunk["timestamp"][0]:
                        chunk["timestamp"][1] = time
                        previous_tokens.append(current)
                        if words:
                            previous_times.append(current_times)
                        close(chunk, previous_tokens, previous_times)
                        previous_tokens, current, chunk = [], [], new_chunk()
                        previous_times, current_times = [], []
                else:
                    current.append(token)
                    if words:
                        start = token_times[i - 1] if i else 0.0
                        current_times.append((round(start + time_offset, 2), round(token_times[i] + time_offset, 2)))
            if "stride" in output:
                time_offset += chunk_length - stride_right
            if current:
                previous_tokens.append(current)
                if words:
                    previous_times.append(current_times)
            elif not any(previous_tokens):
                chunk, previous_tokens, previous_times = new_chunk(), [], []
        if previous_tokens:
            close(chunk, previous_tokens, previous_times)
        text = "".join(item["text"] for item in chunks)
        if not (return_timestamps or return_language):
            return text, {}
        for item in chunks:
            if return_timestamps:
                item["timestamp"] = tuple(item["timestamp"])
            else:
                item.pop("timestamp")
            if not return_language:
                item.pop("language")
        if words:
            return text, {"chunks": [word for item in chunks for word in item["words"]]}
        return text, {"chunks": chunks}


def _find_longest_common_sequence(sequences, token_timestamp_sequences=None):
    """The token lists of overlapping chunks joined into one: each pair is aligned where the
    most tokens agree (ties go to the longer overlap), and cut in the middle of that overlap.
    With per-token (start, end) times, a token agrees only if its time in the right-hand list
    is not earlier, and the times are cut where the tokens are: then (tokens, times)."""
    with_times = bool(token_timestamp_sequences)
    left = sequences[0]
    left_times = token_timestamp_sequences[0] if with_times else None
    total, total_times = [], []
    for index, right in enumerate(sequences[1:], start=1):
        right_times = token_timestamp_sequences[index] if with_times else None
        best, best_slices = 0.0, (len(left), len(left), 0, 0)
        for i in range(1, len(left) + len(right)):
            left_start, left_stop = max(0, len(left) - i), min(len(left), len(left) + len(right) - i)
            right_start, right_stop = max(0, i - len(left)), min(len(right), i)
            if with_times:
                matches = sum(1 for k in range(left_stop - left_start)
                              if left[left_start + k] == right[right_start + k]
                              and left_times[left_start + k] <= right_times[right_start + k])
            else:
                matches = int(np.sum(np.array(left[left_start:left_stop]) == np.array(right[right_start:right_stop])))
            score = matches / i + i / 10000.0
            if matches > 1 and score > best:
                best, best_slices = score, (left_start, left_stop, right_start, right_stop)
        left_start, left_stop, right_start, right_stop = best_slices
        left_middle, right_middle = (left_start + left_stop) // 2, (right_start + right_stop) // 2
        total.extend(left[:left_middle])
        left = right[right_middle:]
        if with_times:
            total_times.extend(left_times[:left_middle])
            left_times = right_times[right_middle:]
    total.extend(left)
    if token_timestamp_sequences is None:
        return total
    if with_times:
        total_times.extend(left_times)
    return total, total_times


def _collate_word_timestamps(tokenizer, tokens, token_timestamps, language, return_language):
    """[{"text": word, "timestamp": (start, end)}] from per-token (start, end) times."""
    words, _, token_indices = _combine_tokens_into_words(tokenizer, tokens, language)
    extra = {"language": language} if return_language else {}
    return [{"text": word, "timestamp": (token_timestamps[indices[0]][0], token_timestamps[indices[-1]][1]), **extra}
            for word, indices in zip(words, token_indices)]


def _combine_tokens_into_words(tokenizer, tokens, language=None, prepend_punctuations="\"'“¡¿([{-",
                               append_punctuations="\"'.。,，!！?？:：”)]}、"):
    """(words, each word's tokens, each word's token positions). Words start at a space or a
    punctuation mark; in languages written without spaces every decodable piece is a word.
    Opening punctuation then joins the word after it and closing punctuation the word before."""
    language = language or tokenizer.language or "english"
    if language in _LANGUAGES_WITHOUT_SPACES:
        words, word_tokens, indices = _split_tokens_on_unicode(tokenizer, tokens)
    else:
        words, word_tokens, indices = _split_tokens_on_spaces(tokenizer, tokens)
    _merge_punctuations(words, word_tokens, indices, prepend_punctuations, append_punctuations)
    return words, word_tokens, indices


def _split_tokens_on_unicode(tokenizer, tokens):
    """Cut the tokens where their text is whole characters: a byte-level token may hold part of
    a character's UTF-8 bytes, which alone decode to U+FFFD. A piece still ending in U+FFFD is
    cut anyway when the full text has U+FFFD there too (bytes that are never completed)."""
    full_text = tokenizer.decode(tokens, decode_with_timestamps=True)
    words, word_tokens, indices = [], [], []
    pending, pending_indices, offset = [], [], 0
    for index, token in enumerate(tokens):
        pending.append(token)
        pending_indices.append(index)
        text = tokenizer.decode(pending, decode_with_timestamps=True)
        broken = text.find("\ufffd")
        if broken < 0 or offset + broken >= len(full_text) or full_text[offset + broken] == "\ufffd":
            words.append(text)
            word_tokens.append(pending)
            indices.append(pending_indices)
            pending, pending_indices = [], []
            offset += len(text)
    return words, word_tokens, indices


def _split_tokens_on_spaces(tokenizer, tokens):
    """Whole characters joined into words: a new word at a special token, a leading space, or
    a punctuation mark."""
    words, word_tokens, indices = [], [], []
    for piece, piece_tokens, piece_indices in zip(*_split_tokens_on_unicode(tokenizer, tokens)):
        starts_word = (piece_tokens[0] >= tokenizer.eos_token_id or piece.startswith(" ")
                       or piece.strip() in _PUNCTUATION)
        if starts_word or not words:
            words.append(piece)
            word_tokens.append(piece_tokens)
            indices.append(piece_indices)
        else:
            words[-1] += piece
            word_tokens[-1].extend(piece_tokens)
            indices[-1].extend(piece_indices)
    return words, word_tokens, indices


def _merge_punctuations(words, tokens, indices, prepended, appended):
    """In place: a word that is opening punctuation (after a space) joins the word after it,
    right to left; closing punctuation joins the word before it, left to right; the emptied
    entries are dropped."""
    target = len(words) - 1
    for i in range(len(words) - 2, -1, -1):
        if words[i].startswith(" ") and words[i].strip() in prepended:
            words[target] = words[i] + words[target]
            tokens[target] = tokens[i] + tokens[target]
            indices[target] = indices[i] + indices[target]
            words[i], tokens[i], indices[i] = "", [], []
        else:
            target = i
    target = 0
    for j in range(1, len(words)):
        if not words[target].endswith(" ") and words[j] in appended:
            words[target] += words[j]
            tokens[target] += tokens[j]
            indices[target] += indices[j]
            words[j], tokens[j], indices[j] = "", [], []
        else:
            target = j
    words[:] = [word for word in words if word]
    tokens[:] = [token for token in tokens if token]
    indices[:] = [index for index in indices if index]


WhisperTokenizerFast = WhisperTokenizer

__all__ = ["WhisperTokenizer", "WhisperTokenizerFast"]
