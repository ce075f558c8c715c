# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""WhisperFeatureExtractor: raw 16 kHz audio → Whisper's log-mel spectrogram, in NumPy.

Audio is padded with silence (or cut) to `chunk_length` seconds (30 s: 480 000 samples),
then: power spectrogram (STFT, periodic Hann window of `n_fft` = 400 samples, hop 160, centred
frames), `feature_size` Slaney mel filters up to 8 kHz, log10 of the energies floored at
1e-10, the last frame dropped (3000 frames remain), values floored at 8 below the clip's
maximum (an 80 dB dynamic range), and (x + 4) / 4 to bring them near [-1, 1].
"""
import logging

import numpy as np

from ...audio_utils import mel_filter_bank, spectrogram, window_function
from ...feature_extraction_sequence_utils import SequenceFeatureExtractor
from ...feature_extraction_utils import BatchFeature

logger = logging.getLogger(__name__)


class WhisperFeatureExtractor(SequenceFeatureExtractor):
    model_input_names = ["input_features"]
    _derived_attributes = ("mel_filters", "n_samples", "nb_max_frames")

    def __init__(self, feature_size=80, sampling_rate=16000, hop_length=160, chunk_length=30, n_fft=400,
                 padding_value=0.0, dither=0.0, return_attention_mask=False, **kwargs):
        for derived in self._derived_attributes:
            kwargs.pop(derived, None)
        super().__init__(feature_size=feature_size, sampling_rate=sampling_rate, padding_value=padding_value,
                         return_attention_mask=return_attention_mask, **kwargs)
        self.n_fft = n_fft
        self.hop_length = hop_length
        self.chunk_length = chunk_length
        self.dither = dither
        self.n_samples = chunk_length * sampling_rate
        self.nb_max_frames = self.n_samples // hop_length
        self.mel_filters = mel_filter_bank(num_frequency_bins=1 + n_fft // 2, num_mel_filters=feature_size,
                                           min_frequency=0.0, max_frequency=8000.0, sampling_rate=sampling_rate,
                                           norm="slaney", mel_scale="slaney")

    def _np_extract_fbank_features(self, waveform_batch, device="cpu"):
        """(batch, feature_size, frames) log-mel features of (batch, samples) waveforms."""
        if device != "cpu":
            raise ValueError(f"Got device `{device}` for feature extraction: the NumPy log-mel spectrogram runs on "
                             "the CPU only; pass device='cpu'")
        window = window_function(self.n_fft, "hann")
        features = []
        for waveform in waveform_batch:
            log_spec = spectrogram(waveform, window, frame_length=self.n_fft, hop_length=self.hop_length, power=2.0,
                                   dither=self.dither, mel_filters=self.mel_filters, log_mel="log10")[:, :-1]
            log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
            features.append((log_spec + 4.0) / 4.0)
        return np.array(features)

    @staticmethod
    def zero_mean_unit_var_norm(input_values, attention_mask, padding_value=0.0):
        """Each waveform shifted and scaled to mean 0, variance 1 over its unpadded samples
        (padding set back to `padding_value`)."""
        if attention_mask is None:
            return [(x - x.mean()) / np.sqrt(x.var() + 1e-7) for x in input_values]
        normed = []
        for vector, length in zip(input_values, np.asarray(attention_mask, np.int32).sum(-1)):
            scaled = (vector - vector[:length].mean()) / np.sqrt(vector[:length].var() + 1e-7)
            if length < scaled.shape[0]:
                scaled[length:] = padding_value
            normed.append(scaled)
        return normed

    def __call__(self, raw_speech, truncation=True, pad_to_multiple_of=None, return_tensors=None,
                 return_attention_mask=None, padding="max_length", max_length=None, sampling_rate=None,
                 do_normalize=None, device="cpu", **kwargs):
        """Features of one waveform or a batch (a list of waveforms, or a 2-D array), each mono
        at `sampling_rate` (must be the extractor's). `attention_mask` (with
        `return_attention_mask`) marks the frames that hold audio rather than padding."""
        if sampling_rate is not None:
            if sampling_rate != self.sampling_rate:
                raise ValueError(
                    f"The model corresponding to this feature extractor: {type(self).__name__} was trained using a "
                    f"sampling rate of {self.sampling_rate}. Please make sure that the provided `raw_speech` input "
                    f"was sampled with {self.sampling_rate} and not {sampling_rate}.")
        else:
            logger.warning(f"It is strongly recommended to pass the `sampling_rate` argument to `{type(self).__name__}"
                           "()`. Failing to do so can result in silent errors that might be hard to debug.")
        if hasattr(raw_speech, "numpy") and not isinstance(raw_speech, np.ndarray):
            raw_speech = raw_speech.numpy()
        is_batched_numpy = isinstance(raw_speech, np.ndarray) and raw_speech.ndim > 1
        if is_batched_numpy and raw_speech.ndim > 2:
            raise ValueError(f"Only mono-channel audio is supported for input to {self}")
        is_batched = is_batched_numpy or (isinstance(raw_speech, (list, tuple))
                                          and isinstance(raw_speech[0], (np.ndarray, tuple, list)))
        if is_batched:
            raw_speech = [np.asarray([speech], dtype=np.float32).T for speech in raw_speech]
        else:
            raw_speech = [np.asarray([np.asarray(raw_speech, dtype=np.float32)]).T]
        padded = self.pad(BatchFeature({"input_features": raw_speech}), padding=padding,
                          max_length=max_length if max_length else self.n_samples, truncation=truncation,
                          pad_to_multiple_of=pad_to_multiple_of,
                          return_attention_mask=return_attention_mask or do_normalize)
        if do_normalize:
            padded["input_features"] = np.stack(self.zero_mean_unit_var_norm(
                padded["input_features"], attention_mask=padded["attention_mask"], padding_value=self.padding_value))
        waveforms = np.stack([np.asarray(row) for row in padded["input_features"]]).transpose(2, 0, 1)[0]
        padded["input_features"] = self._np_extract_fbank_features(waveforms, device).astype(np.float32)
        if return_attention_mask:
            mask = np.asarray(padded["attention_mask"])
            frames = mask[:, ::self.hop_length]
            if mask.shape[1] % self.hop_length != 0:
                frames = frames[:, :-1]
            padded["attention_mask"] = frames
        if return_tensors is not None:
            padded = padded.convert_to_tensors(return_tensors)
        return padded


__all__ = ["WhisperFeatureExtractor"]
