# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Whisper's generate(): the decoder prompt, the token rules, and long-form transcription.

Each generation starts from the init tokens `<|startoftranscript|> <|lang|> <|task|>
<|notimestamps|>`, made from `language=` / `task=` / `return_timestamps=` and the generation
config (`lang_to_id`, `task_to_id`, `no_timestamps_token_id`); without a language a
multilingual model first predicts one (`detect_language`). `suppress_tokens` are never
generated, `begin_suppress_tokens` never first, and with timestamps
`WhisperTimeStampLogitsProcessor` enforces their grammar.

Audio is transcribed 30 s window by window (`seek`, in mel frames): each window's tokens
split into segments at pairs of timestamp tokens, and the next window starts where the last
complete segment ended. Short audio is the one-window case. Per window, a generation that is
too repetitive (`compression_ratio_threshold`) or unlikely (`logprob_threshold`) is tried
again at the next `temperature`; with `no_speech_threshold` a window the model thinks silent
is skipped; `condition_on_prev_tokens` feeds the previous windows' text back as a prompt after
`<|startofprev|>`, as `prompt_ids` does for the first window (or every window).

The result is the generated tokens (init tokens and EOS dropped), windows concatenated,
right-padded with the pad id; or, with `return_segments`, a dict with the segments too
(start and end in seconds, tokens, and the generate() output they came from).

`return_token_timestamps` adds, per token, the time (s) its audio ends: the cross-attention of
the `alignment_heads` (decoder layer, head) named in the generation config, normalised over the
tokens, median-filtered over time, averaged over the heads and aligned to the audio frames by
dynamic time warping (`_extract_token_timestamps`); the attention mask's frame counts
(`num_frames`) crop the padding away first. The alignment runs on the host in NumPy: the
weights are small and the warping path is a sequential walk.
"""
import math
import zlib

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .... import core
from ....core.nn import functional as F
from ...cache_utils import DynamicCache, EncoderDecoderCache
from ...generation import GenerationMixin
from ...generation.logits_process import (
    SuppressTokensAtBeginLogitsProcessor,
    SuppressTokensLogitsProcessor,
    WhisperNoSpeechDetection,
    WhisperTimeStampLogitsProcessor,
)
from ...modeling_outputs import BaseModelOutput
from .tokenization_whisper import TASK_IDS, TO_LANGUAGE_CODE


def _processor_attribute(logits_processor, processor_class, name):
    for processor in logits_processor or []:
        if isinstance(processor, processor_class):
            return getattr(processor, name, None)
    return None


def _pad_segments(current_segments, pad_token_id, padding_side="right", bos_tokens=None, cut_off_length=None,
                  skip_ending_double_timestamps=False, timestamp_begin=None):
    """(batch, longest) ids: each row's segment tokens concatenated (its last `cut_off_length`,
    after `bos_tokens` when given), padded with `pad_token_id` on `padding_side`. Rows with
    None hold only `bos_tokens`. `skip_ending_double_timestamps` drops the second of two
    closing timestamps, as a prompt for the next window must."""
    rows = []
    for segments in current_segments:
        tokens = []
        for segment in segments or []:
            segment_tokens = segment["tokens"].tolist()
            if skip_ending_double_timestamps and len(segment_tokens) > 2 and segment_tokens[-2] >= timestamp_begin:
                segment_tokens = segment_tokens[:-1]
            tokens += segment_tokens
        if cut_off_length is not None:
            tokens = tokens[-cut_off_length:]
        rows.append((bos_tokens or []) + tokens)
    width = max((len(row) for row in rows), default=0)
    padded = [row + [pad_token_id] * (width - len(row)) if padding_side == "right"
              else [pad_token_id] * (width - len(row)) + row for row in rows]
    return core.tensor(padded, dtype=core.int64) if width else core.zeros((len(rows), 0), dtype=core.int64)


def _compression_ratio(tokens, vocab_size):
    """How much zlib shrinks the tokens' bytes: high for repetitive (hallucinated) text."""
    width = int(math.log2(vocab_size) / 8) + 1
    data = b"".join(token.to_bytes(width, "little") for token in tokens)
    return len(data) / len(zlib.compress(data))


def _average_logprob(scores, tokens, temperature):
    """Mean log-probability of `tokens` under the step `scores` (rescaled by `temperature`)."""
    scores = core.stack(list(scores))
    if scores.shape[0] > len(tokens):
        scores = scores[:len(tokens)]
    else:
        tokens = tokens[-scores.shape[0]:]
    logprobs = F.log_softmax(scores.float() * (temperature if temperature > 0.0 else 1), dim=-1)
    return sum(float(logprobs[i, token]) for i, token in enumerate(tokens)) / len(tokens)


def _median_filter(inputs, filter_width):
    """Median over a sliding window of odd `filter_width` along the last axis of a NumPy
    array, the edges padded by reflection; inputs no longer than half the width unchanged."""
    if filter_width <= 0 or filter_width % 2 != 1:
        raise ValueError("`filter_width` should be an odd number")
    half = filter_width // 2
    if inputs.shape[-1] <= half:
        return inputs
    padded = np.pad(inputs, [(0, 0)] * (inputs.ndim - 1) + [(half, half)], mode="reflect")
    return np.sort(sliding_window_view(padded, filter_width, axis=-1), axis=-1)[..., half]


def _dynamic_time_warping(matrix):
    """(token indices, frame indices) of the cheapest monotonic path through the (tokens,
    frames) cost `matrix`. Each cell extends the cheapest of its diagonal, upper and left
    neighbours (ties to the left); cells on one anti-diagonal depend only on the two before,
    so a diagonal is filled at once. Costs are float32, as OpenAI's implementation keeps them."""
    rows, columns = matrix.shape
    cost = np.full((rows + 1, columns + 1), np.inf, dtype=np.float32)
    trace = -np.ones((rows + 1, columns + 1), dtype=np.float32)
    cost[0, 0] = 0
    for diagonal in range(2, rows + columns + 1):
        i = np.arange(max(1, diagonal - columns), min(rows, diagonal - 1) + 1)
        j = diagonal - i
        c0, c1, c2 = cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1]
        step = np.where((c0 < c1) & (c0 < c2), 0, np.where((c1 < c0) & (c1 < c2), 1, 2))
        cost[i, j] = matrix[i - 1, j - 1] + np.choose(step, [c0, c1, c2])
        trace[i, j] = step
    trace[0, :] = 2
    trace[:, 0] = 1
    i, j = rows, columns
    text_indices, time_indices = [], []
    while i > 0 or j > 0:
        text_indices.append(i - 1)
        time_indices.append(j - 1)
        move = trace[i, j]
        if move == 0:
            i, j = i - 1, j - 1
        elif move == 1:
            i -= 1
        elif move == 2:
            j -= 1
        else:
            raise RuntimeError(f"Internal error in dynamic time warping. Unexpected trace[{i}, {j}].")
    return np.array(text_indices[::-1]), np.array(time_indices[::-1])


def _stack_caches(rows):
    """An EncoderDecoderCache of the given (cache, row) pairs: row `row` of each cache's layers,
    as HF rebuilds it (for beam search that is a row of the beam-expanded cache, as in HF)."""
    first = rows[0][0]
    if first is None:
        return None
    stacked = EncoderDecoderCache(DynamicCache(), DynamicCache())
    for part in ("self_attention_cache", "cross_attention_cache"):
        for layer_idx in range(len(getattr(first, part).layers)):
            keys = core.stack([getattr(cache, part).layers[layer_idx].keys[i] for cache, i in rows])
            values = core.stack([getattr(cache, part).layers[layer_idx].values[i] for cache, i in rows])
            getattr(stacked, part).update(keys, values, layer_idx)
            if part == "cross_attention_cache":
                stacked.is_updated[layer_idx] = True
    return stacked


class WhisperGenerationMixin(GenerationMixin):
    """generate() for WhisperForConditionalGeneration: see the module docstring."""

    _prepends_decoder_start = False

    def prepare_inputs_for_generation(self, input_ids, next_sequence_length=None, past_key_values=None,
                                      attention_mask=None, inputs_embeds=None, is_first_iteration=False, **kwargs):
        """Rows of a batch whose previous text is shorter are left-padded (the decoder mask
        says where): their positions count from their first real token, as alone they would."""
        mask = kwargs.get("decoder_attention_mask")
        if "decoder_position_ids" not in kwargs and mask is not None:
            positions = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)
            length = next_sequence_length if next_sequence_length is not None else input_ids.shape[1]
            kwargs["decoder_position_ids"] = positions[..., -length:]
        return super().prepare_inputs_for_generation(
            input_ids, next_sequence_length=next_sequence_length, past_key_values=past_key_values,
            attention_mask=attention_mask, inputs_embeds=inputs_embeds, is_first_iteration=is_first_iteration,
            **kwargs)

    def generate(self, input_features=None, generation_config=None, logits_processor=None, stopping_criteria=None,
                 prefix_allowed_tokens_fn=None, synced_gpus=False, return_timestamps=None, task=None, language=None,
                 is_multilingual=None, prompt_ids=None, prompt_condition_type=None, condition_on_prev_tokens=None,
                 temperature=None, compression_ratio_threshold=None, logprob_threshold=None,
                 no_speech_threshold=None, num_segment_frames=None, attention_mask=None, time_precision=0.02,
                 time_precision_features=0.01, return_token_timestamps=None, return_segments=False,
                 return_dict_in_generate=None, force_unique_generate_call=None, monitor_progress=None, **kwargs):
        if "decoder_input_ids" in kwargs and "assistant_model" in kwargs:
            raise ValueError("Passing `decoder_input_ids` is deprecated. Consider passing `prompt_ids` instead.")
        generation_config, kwargs = self._prepare_generation_config(generation_config, **kwargs)
        encoder = self.get_encoder()
        input_stride = encoder.conv1.stride[0] * encoder.conv2.stride[0]
        num_segment_frames = num_segment_frames or input_stride * self.config.max_source_positions
        batch_size, total_input_frames = self._input_size(input_features, input_stride, kwargs)
        is_shortform = total_input_frames <= num_segment_frames

        if return_dict_in_generate is None:
            return_dict_in_generate = generation_config.return_dict_in_generate
        generation_config.return_dict_in_generate = return_dict_in_generate
        num_frames = None
        if return_token_timestamps:
            generation_config.return_dict_in_generate = True
            generation_config.output_attentions = True
            generation_config.output_scores = True
            num_frames = self._num_frames(generation_config, attention_mask)
        if logprob_threshold is not None:
            generation_config.return_dict_in_generate = True
            generation_config.output_scores = True
        timestamp_begin = self._set_return_timestamps(return_timestamps, is_shortform, generation_config)
        self._set_language_and_task(language, task, is_multilingual, generation_config)
        for name, value in (("logprob_threshold", logprob_threshold),
                            ("compression_ratio_threshold", compression_ratio_threshold),
                            ("no_speech_threshold", no_speech_threshold),
                            ("condition_on_prev_tokens", condition_on_prev_tokens)):
            setattr(generation_config, name, value if value is not None else getattr(generation_config, name, None))
        self._set_prompt_condition_type(generation_config, prompt_condition_type)

        init_tokens = self._retrieve_init_tokens(input_features, batch_size, generation_config, num_segment_frames,
                                                 kwargs)
        device = input_features.device if input_features is not None else self.device
        begin_index = init_tokens.shape[1]
        num_beams = kwargs.get("num_beams", generation_config.num_beams or 1)
        if "assistant_model" in kwargs:
            generation_config.begin_suppress_tokens = None
        logits_processor = self._retrieve_logit_processors(generation_config, logits_processor, begin_index,
                                                           num_beams, device)
        generation_config.condition_on_prev_tokens = bool(generation_config.condition_on_prev_tokens)
        temperatures = list(temperature) if isinstance(temperature, (list, tuple)) else [temperature]

        if batch_size > 1 and not is_shortform:
            if attention_mask is None:
                raise ValueError("When doing batched long-form audio transcription, make sure to pass an "
                                 "`attention_mask`. You can retrieve the `attention_mask` by doing "
                                 "`processor(audio, ..., return_attention_mask=True)` ")
            max_frames = [int(n) for n in attention_mask.sum(-1).tolist()]
        else:
            max_frames = [total_input_frames] * batch_size
        repeats = generation_config.num_return_sequences or 1
        if repeats > 1:
            if input_features is not None:
                input_features = input_features.repeat_interleave(repeats, dim=0)
            init_tokens = init_tokens.repeat_interleave(repeats, dim=0)
            max_frames = [n for n in max_frames for _ in range(repeats)]
            if num_frames is not None:  # (HF fails here)
                num_frames = [n for n in num_frames for _ in range(repeats)]
            generation_config.num_return_sequences = 1
        rows = len(max_frames)
        seek = [0] * rows
        condition = [generation_config.condition_on_prev_tokens] * rows
        current_segments = self._initial_segments(prompt_ids, rows, generation_config)
        if force_unique_generate_call is None:
            force_unique_generate_call = getattr(generation_config, "force_unique_generate_call", False)

        outputs_by_row = [None] * rows
        output_type = None
        while any(s < m for s, m in zip(seek, max_frames)):
            if monitor_progress is not None:
                monitor_progress(core.tensor([[s, m] for s, m in zip(seek, max_frames)]))
            active = [i for i in range(rows) if seek[i] < max_frames[i]]
            time_offset = {i: seek[i] * time_precision / input_stride for i in active}
            frames = {i: min(max_frames[i] - seek[i], num_segment_frames) for i in active}
            segment_input = None
            if input_features is not None:
                windows = [input_features[i:i + 1, :, seek[i]:seek[i] + frames[i]] for i in active]
                segment_input = core.cat([F.pad(w, (0, num_segment_frames - w.shape[-1])) for w in windows])
            suppress_tokens = _processor_attribute(logits_processor, SuppressTokensLogitsProcessor, "suppress_tokens")
            decoder_input_ids, call_kwargs = self._prepare_decoder_input_ids(
                init_tokens, current_segments, active, condition, prompt_ids, generation_config, suppress_tokens,
                timestamp_begin, kwargs)
            self._set_max_new_tokens_and_length(decoder_input_ids, generation_config)
            for processor in logits_processor or []:
                if hasattr(processor, "set_begin_index"):
                    processor.set_begin_index(decoder_input_ids.shape[-1])
            window_frames = None
            if return_token_timestamps:
                window_frames = [None] * len(active) if num_frames is None else [num_frames[i] - seek[i] for i in active]
            sequences, outputs, skip, output_type = self._generate_with_fallback(
                segment_input, decoder_input_ids, active, temperatures, generation_config, logits_processor,
                stopping_criteria, prefix_allowed_tokens_fn, condition, attention_mask if is_shortform else None,
                call_kwargs, window_frames)
            for position, row in enumerate(active):
                outputs_by_row[row] = outputs[position]
                if skip[position]:
                    seek[row] += frames[row]
                    continue
                segments, advance = self._retrieve_segment(
                    sequences[position], outputs[position], time_offset[row], timestamp_begin, frames[row],
                    time_precision, time_precision_features, input_stride, decoder_input_ids.shape[-1],
                    bool(return_token_timestamps))
                seek[row] += advance
                current_segments[row] += segments
            if force_unique_generate_call:
                break

        final_segments = ([segments[1:] for segments in current_segments]
                          if prompt_ids is not None and generation_config.prompt_condition_type == "first-segment"
                          else current_segments)
        if return_dict_in_generate and generation_config.return_dict_in_generate and (
                force_unique_generate_call or not generation_config.return_timestamps):
            outputs = self._stack_outputs(outputs_by_row, output_type)
            if repeats > 1:  # the encoder ran once per returned sequence: keep one per input
                for key in ("encoder_attentions", "encoder_hidden_states"):
                    if outputs.get(key) is not None:
                        outputs[key] = tuple(value[::repeats] for value in outputs[key])
            return outputs
        if force_unique_generate_call:
            sequences = core.stack([segments[0]["result"]["sequences"] if isinstance(segments[0]["result"], dict)
                                    else segments[0]["result"] for segments in final_segments])
        else:
            sequences = _pad_segments(final_segments, generation_config.pad_token_id)
        if return_dict_in_generate and generation_config.return_dict_in_generate:
            return_segments = True
        elif not return_segments and not return_token_timestamps:
            return sequences
        result = {"sequences": sequences}
        if return_token_timestamps:
            result["token_timestamps"] = self._token_timestamps(final_segments, force_unique_generate_call)
        if return_segments:
            result["segments"] = final_segments
        return result

    @staticmethod
    def _token_timestamps(final_segments, force_unique_generate_call):
        """(batch, longest) per-token times of the returned sequences: each segment's slice of
        its window's times (counted from the window's start, as HF returns them), right-padded
        with the row's last time."""
        if force_unique_generate_call:
            return core.stack([segments[0]["result"]["token_timestamps"] for segments in final_segments])
        rows = []
        for segments in final_segments:
            times = []
            for segment in segments:
                start, end = segment["idxs"]
                times += segment["result"]["token_timestamps"][start:end].tolist()
            rows.append(times)
        width = max(len(times) for times in rows)
        padded = [times + [times[-1] if times else 0.0] * (width - len(times)) for times in rows]
        return core.tensor(np.array(padded, dtype=np.float32).reshape(len(rows), width))

    # ------------------------------------------------------------------ settings

    @staticmethod
    def _input_size(input_features, input_stride, kwargs):
        """(batch size, mel frames) of the input features, or of what the encoder outputs cover."""
        if input_features is not None:
            return input_features.shape[0], input_features.shape[-1]
        if "encoder_outputs" in kwargs:
            encoder_outputs = kwargs["encoder_outputs"]
            shape = (encoder_outputs[0] if isinstance(encoder_outputs, (BaseModelOutput, tuple, list))
                     else encoder_outputs).shape
            return shape[0], shape[1] * input_stride
        raise ValueError("Make sure to provide either `input_features` or `encoder_outputs` to `generate`.")

    def _set_return_timestamps(self, return_timestamps, is_shortform, generation_config):
        """Settle `return_timestamps` (forced on for audio longer than a window) and return the
        first timestamp token's id."""
        if return_timestamps is None:
            return_timestamps = getattr(generation_config, "return_timestamps", None)
        if not is_shortform:
            if return_timestamps is False:
                raise ValueError(
                    "You have passed more than 3000 mel input features (> 30 seconds) which automatically enables "
                    "long-form generation which requires the model to predict timestamp tokens. Please either pass "
                    "`return_timestamps=True` or make sure to pass no more than 3000 mel input features.")
            return_timestamps = True
        has_no_timestamps_token = getattr(generation_config, "no_timestamps_token_id", None) is not None
        if return_timestamps and not has_no_timestamps_token:
            raise ValueError(
                "You are trying to return timestamps, but the generation config is not properly set. Make sure to "
                "initialize the generation config with the correct attributes that are needed such as "
                "`no_timestamps_token_id`.")
        generation_config.return_timestamps = return_timestamps
        if has_no_timestamps_token:
            return generation_config.no_timestamps_token_id + 1
        return self.config.vocab_size + 1

    @staticmethod
    def _num_frames(generation_config, attention_mask):
        """Each row's mel frames (from the attention mask), which token timestamps align to;
        None without a mask (the whole window). Token timestamps need `alignment_heads`."""
        if not hasattr(generation_config, "alignment_heads"):
            raise ValueError("Model generation config has no `alignment_heads`, token-level timestamps not available. "
                             "Set `generation_config.alignment_heads` to the [decoder layer, head] pairs whose "
                             "cross-attention follows the audio.")
        if attention_mask is None:
            return None
        return [int(n) for n in attention_mask.sum(-1).tolist()]

    @staticmethod
    def _set_language_and_task(language, task, is_multilingual, generation_config):
        if is_multilingual is not None:
            if not hasattr(generation_config, "is_multilingual"):
                raise ValueError("The generation config is outdated and is thus not compatible with the "
                                 "`is_multilingual` argument to `generate`: it lacks `is_multilingual`.")
            generation_config.is_multilingual = is_multilingual
        if getattr(generation_config, "is_multilingual", True) is False and (task is not None or language is not None):
            raise ValueError(
                "Cannot specify `task` or `language` for an English-only model. If the model is intended to be "
                "multilingual, pass `is_multilingual=True` to generate, or update the generation config.")
        if language is not None:
            if not hasattr(generation_config, "lang_to_id"):
                raise ValueError("The generation config is outdated and is thus not compatible with the `language` "
                                 "argument to `generate`: it lacks `lang_to_id`.")
            generation_config.language = language
        if task is not None:
            if not hasattr(generation_config, "task_to_id"):
                raise ValueError("The generation config is outdated and is thus not compatible with the `task` "
                                 "argument to `generate`: it lacks `task_to_id`.")
            generation_config.task = task

    @staticmethod
    def _set_prompt_condition_type(generation_config, prompt_condition_type):
        allowed = ("first-segment", "all-segments")
        prompt_condition_type = prompt_condition_type or allowed[0]
        if prompt_condition_type not in allowed:
            raise ValueError(f"`prompt_condition_type={prompt_condition_type} does not exist. Make sure to set "
                             f"`prompt_condition_type` to one of {', '.join(allowed)}")
        if generation_config.condition_on_prev_tokens is not True and prompt_condition_type == "all-segments":
            raise ValueError("Make sure to set `condition_on_prev_tokens=True` when setting "
                             "`prompt_condition_type='all-segments'`.")
        generation_config.prompt_condition_type = prompt_condition_type

    def _language_id(self, language, generation_config):
        """`language` as a name ("french"), a code ("fr") or a token ("<|fr|>") → its token id."""
        language = language.lower()
        if language in generation_config.lang_to_id:
            token = language
        elif language in TO_LANGUAGE_CODE:
            token = f"<|{TO_LANGUAGE_CODE[language]}|>"
        elif language in TO_LANGUAGE_CODE.values():
            token = f"<|{language}|>"
        else:
            choices = list(TO_LANGUAGE_CODE.values()) if len(language) == 2 else list(TO_LANGUAGE_CODE.keys())
            raise ValueError(f"Unsupported language: {language}. Language should be one of: {choices}.")
        if token not in generation_config.lang_to_id:
            raise ValueError(f"{token} is not supported by this specific model as it is not in the "
                             "`generation_config.lang_to_id`. (You should just add it to the generation config)")
        return generation_config.lang_to_id[token]

    def _retrieve_init_tokens(self, input_features, batch_size, generation_config, num_segment_frames, kwargs):
        """(batch, n) decoder prompt: start token, language (given, from a legacy
        `forced_decoder_ids`, or detected), task, and `<|notimestamps|>` unless timestamps are
        wanted."""
        task = getattr(generation_config, "task", None)
        language = getattr(generation_config, "language", None)
        init = [generation_config.decoder_start_token_id]
        if task is None and language is None:
            forced = getattr(generation_config, "forced_decoder_ids", None) or \
                getattr(self.config, "forced_decoder_ids", None)
            if forced and forced[0][0] == 1:
                position = 1
                while forced and forced[0][0] == position:
                    init.append(forced[0][1])
                    forced = forced[1:]
                    position += 1
                if forced:
                    raise ValueError(
                        f"You are using token ids in `forced_decoder_ids` that do not seem to correctly follow the "
                        f"prompt pattern of Whisper. Make sure that {forced} has an entry for all indices >= 1 and "
                        f"< {forced[0][0]}.")
        language_unknown = len(init) <= 1 or init[1] is None
        if isinstance(language, (list, tuple)):
            if any(item is None for item in language):
                raise TypeError("Expected `language` to be `None`, a single string (e.g. `'en'`), or a list of "
                                "strings with length equal to the batch size; got a list containing `None`.")
            if len(language) != batch_size:
                raise ValueError("When passing a list of languages, the length of the list must match the batch "
                                 f"size. Expected length of {batch_size}, but got {len(language)} languages.")
            languages = list(language)
        else:
            languages = [language] if language is not None else [None] * batch_size
        rows = [list(init) for _ in languages]
        language_ids = None
        if language is not None:
            language_ids = [self._language_id(item, generation_config) for item in languages]
        elif hasattr(generation_config, "lang_to_id") and language_unknown:
            language_ids = self.detect_language(input_features, kwargs.get("encoder_outputs"), generation_config,
                                                num_segment_frames).tolist()
        task_ids = getattr(generation_config, "task_to_id", {})
        for i, row in enumerate(rows):
            if language_ids is not None:
                if len(row) > 1:
                    row[1] = language_ids[i]
                else:
                    row.append(language_ids[i])
            if task is not None:
                if task not in TASK_IDS:
                    raise ValueError(f"The `{task}` task is not supported. The task should be one of `{TASK_IDS}`")
                task_id = task_ids[task]
                if any(token in task_ids.values() for token in row):
                    row[:] = [task_id if token in task_ids.values() else token for token in row]
                else:
                    row.append(task_id)
            elif language is not None and task_ids and not any(token in task_ids.values() for token in row):
                row.append(task_ids["transcribe"])
            no_timestamps = getattr(generation_config, "no_timestamps_token_id", None)
            if not generation_config.return_timestamps and no_timestamps is not None and row[-1] != no_timestamps:
                row.append(no_timestamps)
            elif generation_config.return_timestamps and row and row[-1] == no_timestamps:
                row.pop()
            row[:] = [token for token in row if token is not None]
        return core.tensor(rows, dtype=core.int64, device=self.device).expand(batch_size, -1)

    def detect_language(self, input_features=None, encoder_outputs=None, generation_config=None,
                        num_segment_frames=3000):
        """(batch,) the most likely language token after `<|startoftranscript|>`."""
        if input_features is None and encoder_outputs is None:
            raise ValueError("You have to specify either `input_features` or `encoder_outputs`")
        if input_features is not None and encoder_outputs is not None:
            raise ValueError("Make sure to specify only one of `input_features` or `encoder_outputs` - not both!")
        if input_features is not None:
            inputs = {"input_features": input_features[:, :, :num_segment_frames]}
            batch_size = input_features.shape[0]
        else:
            inputs = {"encoder_outputs": encoder_outputs}
            batch_size = encoder_outputs[0].shape[0]
        generation_config = generation_config or self.generation_config
        start = core.full((batch_size, 1), generation_config.decoder_start_token_id, dtype=core.int64,
                          device=self.device)
        with core.no_grad():
            logits = self(**inputs, decoder_input_ids=start, use_cache=False).logits[:, -1]
        is_language = core.zeros(logits.shape[-1], dtype=core.bool, device=logits.device)
        is_language[list(generation_config.lang_to_id.values())] = True
        return logits.masked_fill(~is_language, -math.inf).argmax(-1)

    def _retrieve_logit_processors(self, generation_config, logits_processor, begin_index, num_beams, device):
        """Whisper's processors go first, before the caller's; the config's suppress lists are
        consumed here so that generate() does not add them a second time."""
        processors = list(logits_processor) if logits_processor is not None else None

        def prepend(processor):
            return [processor] if processors is None else [processor] + processors

        if generation_config.return_timestamps is True:
            processors = prepend(WhisperTimeStampLogitsProcessor(generation_config, begin_index=begin_index))
        if generation_config.suppress_tokens is not None:
            processors = prepend(SuppressTokensLogitsProcessor(generation_config.suppress_tokens, device=device))
            generation_config.suppress_tokens = None
        if generation_config.begin_suppress_tokens is not None:
            processors = prepend(SuppressTokensAtBeginLogitsProcessor(generation_config.begin_suppress_tokens,
                                                                      begin_index=begin_index, device=device))
            generation_config.begin_suppress_tokens = None
        if generation_config.no_speech_threshold is not None:
            detector = WhisperNoSpeechDetection(no_speech_token=generation_config.no_timestamps_token_id - 1,
                                                begin_index=begin_index, scores_is_logprobs=num_beams > 1)
            detector.set_model(self)
            processors = prepend(detector)
        return processors

    # ------------------------------------------------------------------ one window

    @staticmethod
    def _initial_segments(prompt_ids, rows, generation_config):
        """Per row, the segments so far: the prompt (without `<|startofprev|>`) when it
        conditions the first window only."""
        if prompt_ids is not None and generation_config.prompt_condition_type == "first-segment":
            start_of_prev = getattr(generation_config, "prev_sot_token_id", None)
            prompt = prompt_ids[1:] if int(prompt_ids[0]) == start_of_prev else prompt_ids
            return [[{"tokens": prompt}] for _ in range(rows)]
        return [[] for _ in range(rows)]

    def _prepare_decoder_input_ids(self, init_tokens, current_segments, active, condition, prompt_ids,
                                   generation_config, suppress_tokens, timestamp_begin, kwargs):
        """(decoder prompt of the active rows, generate() kwargs): the init tokens, after the
        previous text (`condition_on_prev_tokens`, left-padded, its last
        max_target_positions // 2 - 1 tokens) or after `prompt_ids`."""
        kwargs = dict(kwargs)
        if "decoder_input_ids" in kwargs:
            return kwargs.pop("decoder_input_ids"), kwargs
        decoder_input_ids = init_tokens[active]
        start_of_prev = getattr(generation_config, "prev_sot_token_id", None)
        if start_of_prev is None and suppress_tokens is not None and len(suppress_tokens) >= 2:
            start_of_prev = int(suppress_tokens[-2])
        if any(condition) and len(current_segments[0]) > 0:
            if prompt_ids is not None and generation_config.prompt_condition_type == "all-segments":
                previous = prompt_ids.tolist()
            else:
                previous = [start_of_prev] if start_of_prev is not None else None
            segments = [current_segments[i] if condition[i] else None for i in active]
            prev_tokens = _pad_segments(segments, generation_config.pad_token_id, padding_side="left",
                                        bos_tokens=previous, cut_off_length=self.config.max_target_positions // 2 - 1,
                                        skip_ending_double_timestamps=True, timestamp_begin=timestamp_begin)
            decoder_input_ids = core.cat([prev_tokens.to(decoder_input_ids.device), decoder_input_ids], dim=-1)
            kwargs["decoder_attention_mask"] = decoder_input_ids != generation_config.pad_token_id
        elif prompt_ids is not None:
            prompt = prompt_ids[None].expand(decoder_input_ids.shape[0], -1).to(decoder_input_ids.device)
            decoder_input_ids = core.cat([prompt, decoder_input_ids], dim=-1)
            kwargs.pop("decoder_attention_mask", None)
        else:
            kwargs.pop("decoder_attention_mask", None)
        return decoder_input_ids, kwargs

    def _set_max_new_tokens_and_length(self, decoder_input_ids, generation_config):
        """The decoder holds `max_target_positions` tokens, prompt included: refuse a longer
        request. A `max_length` (without `max_new_tokens`) counts from after the decoder
        prompt, up to that limit."""
        limit = self.config.max_target_positions
        prompt_length = decoder_input_ids.shape[-1]
        max_new_tokens = generation_config.max_new_tokens or 0
        if max_new_tokens + prompt_length > limit:
            raise ValueError(
                f"The length of `decoder_input_ids`, including special start tokens, prompt tokens, and previous "
                f"tokens, is {prompt_length},  and `max_new_tokens` is {max_new_tokens}. Thus, the combined length "
                f"of `decoder_input_ids` and `max_new_tokens` is: {max_new_tokens + prompt_length}. This exceeds the "
                f"`max_target_positions` of the Whisper model: {limit}. You should either reduce the length of your "
                f"prompt, or reduce the value of `max_new_tokens`, so that their combined length is less than "
                f"{limit}.")
        if generation_config.max_length is not None and generation_config.max_new_tokens is None:
            initial_tokens = min(limit // 2 - 1, prompt_length)
            generation_config.max_length = min(generation_config.max_length + initial_tokens, limit)

    def _generate_with_fallback(self, segment_input, decoder_input_ids, active, temperatures, generation_config,
                                logits_processor, stopping_criteria, prefix_allowed_tokens_fn, condition,
                                attention_mask, kwargs, window_frames=None):
        """Generate one window for the active rows, again at the next temperature for the rows
        whose result fails the thresholds. Returns (per row: generated tokens without
        padding or the final EOS, the row's view of the generate() output, whether to skip), and
        the type of generate()'s output. With `window_frames` (per row, the frames of audio
        left, or None each) the output gets the tokens' `token_timestamps`."""
        count = len(active)
        sequences, outputs = [None] * count, [None] * count
        skip = [False] * count
        pending = list(range(count))
        if generation_config.no_speech_threshold is not None:
            detector_inputs = {"inputs": segment_input, "input_ids": decoder_input_ids,
                               "decoder_attention_mask": kwargs.get("decoder_attention_mask")}
            for processor in logits_processor:
                if isinstance(processor, WhisperNoSpeechDetection):
                    processor.set_inputs(detector_inputs)
        for attempt, temperature in enumerate(temperatures):
            generation_config.do_sample = temperature is not None and temperature > 0.0
            generation_config.temperature = temperature if generation_config.do_sample else 1.0
            if generation_config.do_sample:
                generation_config.num_beams = 1
            call_kwargs = {k: v for k, v in kwargs.items() if k not in ("do_sample", "temperature", "num_beams")}
            # consumed into `logits_processor`: keep generate() from restoring them from the model's config
            call_kwargs.update(suppress_tokens=generation_config.suppress_tokens,
                               begin_suppress_tokens=generation_config.begin_suppress_tokens)
            if attention_mask is not None:
                call_kwargs["attention_mask"] = attention_mask
            result = GenerationMixin.generate(
                self, segment_input, generation_config=generation_config, logits_processor=logits_processor,
                stopping_criteria=stopping_criteria, prefix_allowed_tokens_fn=prefix_allowed_tokens_fn,
                decoder_input_ids=decoder_input_ids, **call_kwargs)
            if window_frames is not None and not isinstance(result, core.Tensor):
                frames = [window_frames[slot] for slot in pending]
                result["token_timestamps"] = self._extract_token_timestamps(
                    result, generation_config.alignment_heads, num_frames=None if frames[0] is None else frames,
                    num_input_ids=decoder_input_ids.shape[-1])
            full = result if isinstance(result, core.Tensor) else result["sequences"]
            generated = full[:, decoder_input_ids.shape[-1]:]
            still_pending = []
            for position, slot in enumerate(pending):
                tokens = generated[position].tolist()
                pad, eos = generation_config.pad_token_id, generation_config.eos_token_id
                if tokens and tokens[-1] == pad:
                    paddings = tokens.count(pad) - (1 if pad == eos else 0)
                    tokens = tokens[:len(tokens) - paddings] if paddings else tokens
                row_output = self._row_output(result, position)
                fallback, skip[slot] = self._need_fallback(tokens, row_output, position, logits_processor,
                                                           generation_config, temperature)
                if tokens and tokens[-1] == eos:
                    tokens = tokens[:-1]
                sequences[slot] = core.tensor(tokens, dtype=core.int64)
                outputs[slot] = row_output
                condition[active[slot]] = bool(generation_config.condition_on_prev_tokens) and (
                    temperature is None or temperature < 0.5)
                if fallback:
                    still_pending.append((slot, position))
            if not still_pending or attempt == len(temperatures) - 1:
                break
            pending = [slot for slot, _ in still_pending]
            keep = [position for _, position in still_pending]
            segment_input = segment_input[keep]
            decoder_input_ids = decoder_input_ids[keep]
            if "decoder_attention_mask" in kwargs:
                kwargs = dict(kwargs, decoder_attention_mask=kwargs["decoder_attention_mask"][keep])
        return sequences, outputs, skip, type(result)

    def _extract_token_timestamps(self, generate_outputs, alignment_heads, time_precision=0.02, num_frames=None,
                                  num_input_ids=None):
        """(batch, tokens) the time each token of `generate_outputs.sequences` ends, from the
        cross-attention of `alignment_heads` (see the module docstring). The decoder prompt's
        `num_input_ids` tokens are at 0.0 and kept out of the alignment; the last token, whose
        cross-attention generate() never computed, repeats the time before it. `num_frames`
        (an int, or one per row) crops each row's attention to its audio (2 mel frames per
        encoder position); after a beam search each row follows its beam's attention."""
        layers = [np.concatenate([step[layer].float().cpu().numpy() for step in generate_outputs["cross_attentions"]],
                                 axis=2) for layer in range(self.config.decoder_layers)]
        weights = np.stack([layers[layer][:, head] for layer, head in alignment_heads], axis=1)
        weight_length = None
        beam_indices = generate_outputs.get("beam_indices")
        if beam_indices is not None:
            beam_indices = beam_indices.cpu().numpy()
            weight_length = int((beam_indices != -1).sum(-1).max())
            beam_indices = beam_indices[:, :weight_length]
            if num_input_ids is not None and num_input_ids > 1:  # the prefill step attended for every prompt token
                weight_length += num_input_ids - 1
                beam_indices = np.concatenate([np.repeat(beam_indices[:, :1], num_input_ids - 1, axis=1),
                                               beam_indices], axis=1)
            beam_indices = np.where(beam_indices == -1, 0, beam_indices)
            weights = np.stack([weights[beam_indices[:, i], :, i] for i in range(beam_indices.shape[1])], axis=2)
        batch_size = generate_outputs["sequences"].shape[0]
        length = weight_length or layers[0].shape[2]
        timestamps = np.zeros((batch_size, length + 1), dtype=np.float32)
        row_frames = None
        if isinstance(num_frames, int):
            weights = weights[..., :num_frames // 2]
        elif num_frames is not None:
            if len(set(num_frames)) == 1:
                # HF crops a batch of one length at once and then each row again: a no-op, except
                # for a window that starts past the audio's end (a negative count), cropped twice
                weights = weights[..., :num_frames[0] // 2]
            row_frames = np.repeat(np.asarray(num_frames), batch_size // len(num_frames)).tolist()
        if num_input_ids is not None:
            weights = weights[:, :, num_input_ids:]
        if weights.shape[2] == 0:
            return core.tensor(timestamps)
        for row in range(batch_size):
            matrix = weights[row] if row_frames is None else weights[row, ..., :row_frames[row] // 2]
            matrix = (matrix - matrix.mean(axis=-2, keepdims=True)) / matrix.std(axis=-2, keepdims=True)
            matrix = _median_filter(matrix, self.config.median_filter_width).mean(axis=0)
            text_indices, time_indices = _dynamic_time_warping(-matrix.astype(np.float64))
            jumps = np.pad(np.diff(text_indices), (1, 0), constant_values=1).astype(bool)
            jump_times = time_indices[jumps] * time_precision
            timestamps[row] = np.concatenate([np.zeros(num_input_ids or 0), jump_times, jump_times[-1:]])
        return core.tensor(timestamps)

    @staticmethod
    def _row_output(result, position):
        """One row of a generate() result, as HF splits it: the tensor row, or each field of
        the dict output at that row (a beam search's step scores taken along the row's beam)."""
        if isinstance(result, core.Tensor):
            return result[position]
        beam_indices = result.get("beam_indices")
        row = {}
        for key, values in result.items():
            if values is None:
                row[key] = None
            elif key == "scores" and beam_indices is not None:
                beams = beam_indices[position][:len(values)].tolist()
                row[key] = [value[beam] for value, beam in zip(values, beams)]
            elif key in ("scores", "encoder_attentions", "encoder_hidden_states", "logits"):
                row[key] = [value[position] for value in values]
            elif key in ("decoder_attentions", "decoder_hidden_states", "cross_attentions"):
                row[key] = tuple(tuple(layer[position][None] for layer in step) for step in values)
            elif key == "past_key_values":
                row[key] = (values, position)
            else:
                row[key] = values[position]
        return row

    def _need_fallback(self, tokens, row_output, position, logits_processor, generation_config, temperature):
        """(try again at a higher temperature, skip the window as silence)."""
        fallback = skip = False
        if generation_config.compression_ratio_threshold is not None and tokens:
            if _compression_ratio(tokens, self.config.vocab_size) > generation_config.compression_ratio_threshold:
                fallback = True
        logprob = None
        if generation_config.logprob_threshold is not None:
            if "sequences_scores" in row_output:
                logprob = float(row_output["sequences_scores"])
            else:
                logprob = _average_logprob(row_output["scores"], tokens, temperature or 0.0) if tokens else 0.0
            if logprob < generation_config.logprob_threshold:
                fallback = True
        if generation_config.no_speech_threshold is not None:
            no_speech_prob = _processor_attribute(logits_processor, WhisperNoSpeechDetection, "no_speech_prob")
            if logprob is not None and logprob < generation_config.logprob_threshold and \
                    float(no_speech_prob[position]) > generation_config.no_speech_threshold:
                fallback, skip = False, True
        return fallback, skip

    @classmethod
    def _retrieve_segment(cls, tokens, output, time_offset, timestamp_begin, window_frames, time_precision,
                          time_precision_features, input_stride, prompt_length, with_token_timestamps=False):
        """(the window's segments, how many mel frames to advance). Consecutive timestamp
        tokens split the window into segments; after a closing pair the next window starts at
        the last timestamp, after a lone final timestamp (speech to the end) past the window.
        With token timestamps each segment holds its tokens' times, offset to the audio's start."""
        segments, advance = cls._split_segments(tokens, output, time_offset, timestamp_begin, window_frames,
                                                time_precision, time_precision_features, input_stride, prompt_length)
        if with_token_timestamps:
            for segment in segments:
                start, end = segment["idxs"]
                segment["token_timestamps"] = output["token_timestamps"][start:end] + time_offset
        return segments, advance

    @staticmethod
    def _split_segments(tokens, output, time_offset, timestamp_begin, window_frames, time_precision,
                        time_precision_features, input_stride, prompt_length):
        """`_retrieve_segment` without the token timestamps."""
        ids = tokens.tolist()
        is_timestamp = [token >= timestamp_begin for token in ids]
        single_timestamp_ending = is_timestamp[-2:] == [False, True]
        boundaries = [i + 1 for i in range(len(ids) - 1) if is_timestamp[i] and is_timestamp[i + 1]]
        if boundaries:
            if single_timestamp_ending:
                boundaries.append(len(ids))
            else:
                boundaries[-1] += 1
            segments, start = [], 0
            for n, end in enumerate(boundaries):
                piece = tokens[start:end]
                closing = -1 if n < len(boundaries) - 1 or single_timestamp_ending else -2
                segments.append({
                    "start": time_offset + (int(piece[0]) - timestamp_begin) * time_precision,
                    "end": time_offset + (int(piece[closing]) - timestamp_begin) * time_precision,
                    "tokens": piece, "idxs": (prompt_length + start, prompt_length + end), "result": output})
                start = end
            if single_timestamp_ending:
                return segments, window_frames
            return segments, (ids[start - 2] - timestamp_begin) * input_stride
        stamps = [token for token, flag in zip(ids, is_timestamp) if flag]
        last = int(window_frames * time_precision_features / time_precision)
        if stamps and stamps[-1] != timestamp_begin:
            last = stamps[-1] - timestamp_begin
        return [{"start": time_offset, "end": time_offset + last * time_precision, "tokens": tokens,
                 "idxs": (prompt_length, prompt_length + len(ids)), "result": output}], window_frames

    @staticmethod
    def _stack_outputs(outputs_by_row, output_type):
        """The rows' generate() outputs stacked back into one output of the type generate() gave."""
        first = outputs_by_row[0]
        stacked = {}
        for key, value in first.items():
            if value is None:
                continue
            if key == "past_key_values":
                stacked[key] = _stack_caches([row[key] for row in outputs_by_row])
            elif key in ("scores", "encoder_attentions", "encoder_hidden_states", "logits"):
                stacked[key] = tuple(core.stack([row[key][i] for row in outputs_by_row]) for i in range(len(value)))
            elif key in ("decoder_attentions", "decoder_hidden_states", "cross_attentions"):
                stacked[key] = tuple(tuple(core.cat([row[key][i][j] for row in outputs_by_row])
                                           for j in range(len(value[i]))) for i in range(len(value)))
            else:
                stacked[key] = core.stack([row[key] for row in outputs_by_row])
        return dict(stacked) if "token_timestamps" in stacked else output_type(**stacked)
