# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`pipeline("automatic-speech-recognition")`: audio in, {"text": ...} out, as Hugging Face's
pipeline does it for Whisper.

Audio is a 1-D NumPy array at the feature extractor's sampling rate, a dict
{"raw" or "array": samples, "sampling_rate": rate} (resampled when the rate differs), or a
WAV file (a path, or its bytes) read with the standard library. Audio longer than one 30 s
window is transcribed by Whisper's own long-form generate(); with `chunk_length_s` it is
instead cut into overlapping chunks (overlap `stride_length_s`, default a sixth of a chunk),
transcribed one by one and joined where the chunks' tokens agree.

`return_timestamps=True` adds "chunks": [{"text", "timestamp": (start, end)}], one per
segment; `return_timestamps="word"` makes them one per word, timed by the tokens'
cross-attention alignment (generate's `return_token_timestamps`, which needs the checkpoint's
`alignment_heads`); `return_language=True` adds each chunk's language.
"""
import numpy as np

from ... import core
from ..audio_utils import read_wav, resample
from .base import ChunkPipeline


class AutomaticSpeechRecognitionPipeline(ChunkPipeline):
    """Whisper speech recognition: see the module docstring."""

    needs_feature_extractor = True
    # HF's defaults for what neither the call nor the model's generation config sets (beam
    # search as OpenAI's Whisper decodes); max_new_tokens only when no max_length is set either
    default_generate_kwargs = {"max_new_tokens": 256, "num_beams": 5}

    def __init__(self, model, tokenizer=None, feature_extractor=None, **kwargs):
        if getattr(model.config, "model_type", None) != "whisper":
            raise ValueError(f"automatic-speech-recognition supports Whisper checkpoints in mindnlp; "
                             f"{type(model).__name__} ({model.config.model_type}) is not one")
        if feature_extractor is None:
            raise ValueError("automatic-speech-recognition needs the checkpoint's feature extractor: pass "
                             "feature_extractor= (e.g. WhisperFeatureExtractor.from_pretrained(...))")
        self.feature_extractor = feature_extractor
        super().__init__(model, tokenizer=tokenizer, **kwargs)

    def _sanitize_parameters(self, chunk_length_s=None, stride_length_s=None, ignore_warning=None,
                             return_timestamps=None, return_language=None, generate_kwargs=None, **kwargs):
        preprocess_params, forward_params, postprocess_params = {}, dict(generate_kwargs or {}), {}
        forward_params.update(kwargs)
        if chunk_length_s is not None:
            preprocess_params["chunk_length_s"] = chunk_length_s
        if stride_length_s is not None:
            preprocess_params["stride_length_s"] = stride_length_s
        if return_language is not None:
            forward_params["return_language"] = return_language
            postprocess_params["return_language"] = return_language
        return_timestamps = return_timestamps or getattr(self.model.generation_config, "return_timestamps", None)
        if return_timestamps is not None:
            if return_timestamps == "char":
                raise ValueError("Whisper cannot return `char` timestamps, only word level or segment level "
                                 "timestamps. Use `return_timestamps='word'` or `return_timestamps=True` respectively.")
            forward_params["return_timestamps"] = return_timestamps
            postprocess_params["return_timestamps"] = return_timestamps
        return preprocess_params, forward_params, postprocess_params

    def _audio(self, inputs):
        """(mono float32 samples at the feature extractor's rate, the input dict's other keys)."""
        rate = self.feature_extractor.sampling_rate
        extra = {}
        if isinstance(inputs, (str, bytes, bytearray)):
            inputs, source_rate = read_wav(inputs)
            return resample(inputs, source_rate, rate), extra
        if isinstance(inputs, dict):
            inputs = dict(inputs)
            if "stride" in inputs:
                raise ValueError("a `stride` in the input dict is not supported; use chunk_length_s")
            if "sampling_rate" not in inputs or not ("raw" in inputs or "array" in inputs):
                raise ValueError(
                    "When passing a dictionary to AutomaticSpeechRecognitionPipeline, the dict needs to contain a "
                    '"raw" key containing the numpy array or torch tensor representing the audio and a '
                    '"sampling_rate" key, containing the sampling_rate associated with that array')
            samples = inputs.pop("raw", None)
            samples = inputs.pop("array", None) if samples is None else samples
            source_rate = inputs.pop("sampling_rate")
            inputs.pop("array", None)
            extra = inputs
            samples = samples.numpy() if isinstance(samples, core.Tensor) else samples
            inputs = resample(samples, source_rate, rate) if source_rate != rate else samples
        if isinstance(inputs, core.Tensor):
            inputs = inputs.numpy()
        if not isinstance(inputs, np.ndarray):
            raise TypeError(f"We expect a numpy ndarray or torch tensor as input, got `{type(inputs)}`")
        if inputs.ndim != 1:
            inputs = inputs.mean(axis=0)  # channels first, as HF averages them
        return inputs.astype(np.float32), extra

    def preprocess(self, inputs, chunk_length_s=0, stride_length_s=None):
        samples, extra = self._audio(inputs)
        extractor = self.feature_extractor
        rate = extractor.sampling_rate
        if chunk_length_s:
            stride_length_s = chunk_length_s / 6 if stride_length_s is None else stride_length_s
            if isinstance(stride_length_s, (int, float)):
                stride_length_s = [stride_length_s, stride_length_s]
            chunk_len = int(round(chunk_length_s * rate))
            stride_left, stride_right = (int(round(seconds * rate)) for seconds in stride_length_s)
            if chunk_len < stride_left + stride_right:
                raise ValueError("Chunk length must be superior to stride length")
            step = chunk_len - stride_left - stride_right
            for start in range(0, samples.shape[0], step):
                chunk = samples[start:start + chunk_len]
                is_last = start + chunk_len >= samples.shape[0]
                left = 0 if start == 0 else stride_left
                features = extractor(chunk, sampling_rate=rate, return_tensors="pt", return_attention_mask=True)
                if chunk.shape[0] > left:
                    yield {"is_last": is_last, "stride": (chunk.shape[0], left, 0 if is_last else stride_right),
                           **features}
                if is_last:
                    break
            return
        longer = samples.shape[0] > extractor.n_samples
        features = extractor(samples, sampling_rate=rate, return_tensors="pt", return_attention_mask=True,
                             **({"truncation": False, "padding": "longest"} if longer else {}))
        yield {"is_last": True, **features, **extra}

    def _collate(self, features):
        """A batch of features of one shape (clips of one window, or chunks of one length)."""
        batch = {}
        for key in features[0]:
            values = [feature[key] for feature in features]
            if isinstance(values[0], core.Tensor):
                if len({tuple(value.shape) for value in values}) > 1:
                    raise ValueError("batch_size > 1 needs inputs whose features have one shape (clips of at most "
                                     "one window, or equal chunks); transcribe these with batch_size=1")
                batch[key] = core.cat(values)
            else:
                batch[key] = values
        return batch

    def _forward(self, model_inputs, return_timestamps=False, return_language=None, **generate_kwargs):
        attention_mask = model_inputs.pop("attention_mask", None)
        stride = model_inputs.pop("stride", None)
        is_last = model_inputs.pop("is_last")
        features = model_inputs.pop("input_features")
        if return_timestamps:
            generate_kwargs["return_timestamps"] = bool(return_timestamps)
        words = return_timestamps == "word"
        if words:
            generate_kwargs.update(return_token_timestamps=True, return_segments=True)
        already_set = {**self.model.generation_config.to_diff_dict(), **generate_kwargs}
        for key, value in self.default_generate_kwargs.items():
            if key not in already_set and not (key == "max_new_tokens" and "max_length" in already_set):
                generate_kwargs[key] = value
        if return_language:
            generate_kwargs["return_segments"] = True
        generated = self.model.generate(features, attention_mask=attention_mask, **generate_kwargs)
        tokens = generated["sequences"] if isinstance(generated, dict) else generated
        output = {}
        if words:
            output["token_timestamps"] = self._token_timestamps(generated, tokens.shape[-1])
        if return_language:
            # the output drops the decoder prompt; its language token goes back in front (at time 0
            # among the token times, so that each text token keeps its own)
            language = self._language_token(generated, generate_kwargs)
            if language is not None:
                tokens = core.cat([core.tensor([[language]], dtype=tokens.dtype), tokens], dim=-1)
                if words:
                    output["token_timestamps"] = core.cat(
                        [core.zeros((1, 1), dtype=output["token_timestamps"].dtype), output["token_timestamps"]], dim=-1)
        output["tokens"] = tokens
        if stride is not None:
            output["stride"] = stride
        return {"is_last": is_last, **output, **model_inputs}

    @staticmethod
    def _token_timestamps(generated, width):
        """(batch, width) each row's segment token times, offset to the audio's start, padded
        like its tokens (with its last time)."""
        rows = []
        for segments in generated["segments"]:
            times = [time for segment in segments for time in segment["token_timestamps"].tolist()]
            rows.append(times + [times[-1] if times else 0.0] * (width - len(times)))
        return core.tensor(rows, dtype=core.float32)

    def _language_token(self, generated, generate_kwargs):
        """The first language token of the first segment's full sequence, or None."""
        segments = generated.get("segments") if isinstance(generated, dict) else None
        config = generate_kwargs.get("generation_config", self.model.generation_config)
        if not segments or not segments[0] or not hasattr(config, "lang_to_id"):
            return None
        result = segments[0][0]["result"]
        sequence = result["sequences"] if isinstance(result, dict) else result
        languages = set(config.lang_to_id.values())
        return next((token for token in sequence.tolist() if token in languages), None)

    def postprocess(self, model_outputs, return_timestamps=None, return_language=None):
        rate = self.feature_extractor.sampling_rate
        pieces = []
        for output in model_outputs:
            piece = {"tokens": output["tokens"].numpy()}
            if "token_timestamps" in output:
                piece["token_timestamps"] = output["token_timestamps"].numpy()
            if "stride" in output:
                piece["stride"] = tuple(value / rate for value in output["stride"])
            pieces.append(piece)
        time_precision = self.feature_extractor.chunk_length / self.model.config.max_source_positions
        text, optional = self.tokenizer._decode_asr(pieces, return_timestamps=return_timestamps,
                                                    return_language=return_language, time_precision=time_precision)
        extra = {}
        for output in model_outputs:
            for key, value in output.items():
                if key not in ("tokens", "is_last", "stride", "token_timestamps"):
                    extra.setdefault(key, []).append(value)
        return {"text": text, **optional, **extra}


__all__ = ["AutomaticSpeechRecognitionPipeline"]
