# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Audio helpers in NumPy shared by the speech models: reading WAV files with the standard
library, resampling, mel filter banks, windows, the short-time Fourier transform and the
(log-)mel spectrograms built on it, and SpecAugment's random span masks.

The spectrogram follows Hugging Face's `audio_utils.spectrogram` (itself torch.stft's and
librosa's conventions): frames centred by reflect-padding half a frame on each side, each
frame windowed and zero-padded to `fft_length`, one-sided FFT. Frames are cut with a strided
view and transformed in one `rfft` call rather than one frame at a time.
"""
import io
import wave

import numpy as np

MEL_SCALES = ("htk", "kaldi", "slaney")
_SLANEY_MIN_LOG_HERTZ = 1000.0
_SLANEY_MIN_LOG_MEL = 15.0
_SLANEY_LOGSTEP = 27.0 / np.log(6.4)


def _check_mel_scale(mel_scale):
    if mel_scale not in MEL_SCALES:
        raise ValueError('mel_scale should be one of "htk", "slaney" or "kaldi".')


def hertz_to_mel(freq, mel_scale="htk"):
    """Frequencies in hertz on the mel scale: HTK's 2595 log10(1 + f / 700), Kaldi's
    1127 ln(1 + f / 700), or Slaney's (linear below 1 kHz, logarithmic above)."""
    _check_mel_scale(mel_scale)
    if mel_scale == "htk":
        return 2595.0 * np.log10(1.0 + freq / 700.0)
    if mel_scale == "kaldi":
        return 1127.0 * np.log(1.0 + freq / 700.0)
    freq = np.asarray(freq, dtype=np.float64)
    logarithmic = _SLANEY_MIN_LOG_MEL + np.log(np.maximum(freq, 1e-30) / _SLANEY_MIN_LOG_HERTZ) * _SLANEY_LOGSTEP
    mels = np.where(freq >= _SLANEY_MIN_LOG_HERTZ, logarithmic, 3.0 * freq / 200.0)
    return mels if mels.ndim else float(mels)


def mel_to_hertz(mels, mel_scale="htk"):
    """The inverse of `hertz_to_mel`."""
    _check_mel_scale(mel_scale)
    if mel_scale == "htk":
        return 700.0 * (np.power(10, mels / 2595.0) - 1.0)
    if mel_scale == "kaldi":
        return 700.0 * (np.exp(mels / 1127.0) - 1.0)
    mels = np.asarray(mels, dtype=np.float64)
    logarithmic = _SLANEY_MIN_LOG_HERTZ * np.exp((mels - _SLANEY_MIN_LOG_MEL) / _SLANEY_LOGSTEP)
    freq = np.where(mels >= _SLANEY_MIN_LOG_MEL, logarithmic, 200.0 * mels / 3.0)
    return freq if freq.ndim else float(freq)


def mel_filter_bank(num_frequency_bins, num_mel_filters, min_frequency, max_frequency, sampling_rate, norm=None,
                    mel_scale="htk", triangularize_in_mel_space=False):
    """(num_frequency_bins, num_mel_filters) triangular filters whose centres are evenly spaced
    on the mel scale between `min_frequency` and `max_frequency`; with `norm="slaney"` each
    filter is scaled to unit area (2 / its width in hertz), as librosa does."""
    if norm is not None and norm != "slaney":
        raise ValueError('norm must be one of None or "slaney"')
    if num_frequency_bins < 2:
        raise ValueError(f"Require num_frequency_bins: {num_frequency_bins} >= 2")
    if min_frequency > max_frequency:
        raise ValueError(f"Require min_frequency: {min_frequency} <= max_frequency: {max_frequency}")
    mel_freqs = np.linspace(hertz_to_mel(min_frequency, mel_scale), hertz_to_mel(max_frequency, mel_scale),
                            num_mel_filters + 2)
    filter_freqs = mel_to_hertz(mel_freqs, mel_scale)
    if triangularize_in_mel_space:
        bin_width = sampling_rate / ((num_frequency_bins - 1) * 2)
        fft_freqs = hertz_to_mel(bin_width * np.arange(num_frequency_bins), mel_scale)
        corners = mel_freqs
    else:
        fft_freqs = np.linspace(0, sampling_rate // 2, num_frequency_bins)
        corners = filter_freqs
    # each filter rises from corner i to i + 1 and falls to i + 2
    distances = corners[None, :] - fft_freqs[:, None]
    widths = np.diff(corners)
    rising = -distances[:, :-2] / widths[:-1]
    falling = distances[:, 2:] / widths[1:]
    filters = np.maximum(0.0, np.minimum(rising, falling))
    if norm == "slaney":
        filters *= 2.0 / (filter_freqs[2:num_mel_filters + 2] - filter_freqs[:num_mel_filters])[None, :]
    return filters


def window_function(window_length, name="hann", periodic=True, frame_length=None, center=True):
    """A window for `spectrogram`: "hann", "hamming", "boxcar" or "povey" (Hann to the 0.85);
    periodic (torch's default: the symmetric window one sample longer, its last sample
    dropped), zero-padded to `frame_length` (centred unless `center` is False)."""
    length = window_length + 1 if periodic else window_length
    if name == "boxcar":
        window = np.ones(length)
    elif name in ("hamming", "hamming_window"):
        window = np.hamming(length)
    elif name in ("hann", "hann_window"):
        window = np.hanning(length)
    elif name == "povey":
        window = np.power(np.hanning(length), 0.85)
    else:
        raise ValueError(f"Unknown window function '{name}'")
    if periodic:
        window = window[:-1]
    if frame_length is None:
        return window
    if window_length > frame_length:
        raise ValueError(f"Length of the window ({window_length}) may not be larger than frame_length ({frame_length})")
    padded = np.zeros(frame_length)
    offset = (frame_length - window_length) // 2 if center else 0
    padded[offset:offset + window_length] = window
    return padded


def spectrogram(waveform, window, frame_length, hop_length, fft_length=None, power=1.0, center=True,
                pad_mode="reflect", dither=0.0, mel_filters=None, mel_floor=1e-10, log_mel=None, dtype=np.float32):
    """The (frequency bins or mel filters, frames) spectrogram of a 1-D waveform, computed in
    float64: magnitudes to the `power` (complex values when None), projected on
    `mel_filters` and floored at `mel_floor`, then `log_mel` ("log", "log10" or "dB",
    10 log10) when given. `dither` adds that much Gaussian noise to each frame."""
    fft_length = frame_length if fft_length is None else fft_length
    if frame_length > fft_length:
        raise ValueError(f"frame_length ({frame_length}) may not be larger than fft_length ({fft_length})")
    if len(window) != frame_length:
        raise ValueError(f"Length of the window ({len(window)}) must equal frame_length ({frame_length})")
    if hop_length <= 0:
        raise ValueError("hop_length must be greater than zero")
    if waveform.ndim != 1:
        raise ValueError(f"Input waveform must have only one dimension, shape is {waveform.shape}")
    if np.iscomplexobj(waveform):
        raise ValueError("Complex-valued input waveforms are not currently supported")
    if power is None and mel_filters is not None:
        raise ValueError("mel_filters need a power spectrogram: give `power` (1.0 or 2.0)")
    if center:
        waveform = np.pad(waveform, frame_length // 2, mode=pad_mode)
    waveform = waveform.astype(np.float64)
    num_frames = 1 + (waveform.size - frame_length) // hop_length
    frames = np.lib.stride_tricks.sliding_window_view(waveform, frame_length)[::hop_length][:num_frames].copy()
    if dither != 0.0:
        frames += dither * np.random.randn(*frames.shape)
    spectrum = np.fft.rfft(frames * window.astype(np.float64), n=fft_length).astype(np.complex64)
    if power is None:
        return spectrum.T
    spectrum = (np.abs(spectrum, dtype=np.float64) ** power).T
    if mel_filters is not None:
        spectrum = np.maximum(mel_floor, mel_filters.T @ spectrum)
    if log_mel is not None:
        if log_mel == "log":
            spectrum = np.log(spectrum)
        elif log_mel == "log10":
            spectrum = np.log10(spectrum)
        elif log_mel == "dB":
            spectrum = 10.0 * np.log10(np.maximum(1e-10, spectrum))
        else:
            raise ValueError(f"Unknown log_mel option: {log_mel}")
    return np.asarray(spectrum, dtype)


def read_wav(source):
    """(mono float32 samples in [-1, 1], sampling rate) of a PCM WAV file (a path, bytes or a
    binary file), read with the standard library's `wave`; channels are averaged. Only
    uncompressed integer PCM (8, 16, 24 or 32 bits) is supported."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        with wave.open(source, "rb") as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            data = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as error:
        raise ValueError(f"could not read {source!r} as a PCM WAV file ({error}); convert it to 16-bit PCM WAV, "
                         "or pass the decoded samples as {'raw': array, 'sampling_rate': rate}") from error
    if width == 1:
        samples = (np.frombuffer(data, np.uint8).astype(np.float32) - 128.0) / 128.0
    elif width == 3:
        raw = np.frombuffer(data, np.uint8).reshape(-1, 3).astype(np.int32)
        values = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
        samples = (np.where(values >= 1 << 23, values - (1 << 24), values) / float(1 << 23)).astype(np.float32)
    elif width in (2, 4):
        dtype = np.int16 if width == 2 else np.int32
        samples = np.frombuffer(data, dtype).astype(np.float32) / float(np.iinfo(dtype).max + 1)
    else:
        raise ValueError(f"unsupported WAV sample width: {width} bytes")
    return samples.reshape(-1, channels).mean(axis=1), rate


def resample(waveform, orig_sampling_rate, target_sampling_rate):
    """The waveform at `target_sampling_rate`, by band-limited (windowed-sinc) interpolation:
    a low-pass at the lower Nyquist frequency avoids aliasing when downsampling."""
    waveform = np.asarray(waveform, dtype=np.float64)
    if orig_sampling_rate == target_sampling_rate:
        return waveform.astype(np.float32)
    if orig_sampling_rate <= 0 or target_sampling_rate <= 0:
        raise ValueError("sampling rates must be positive")
    ratio = target_sampling_rate / orig_sampling_rate
    cutoff = min(1.0, ratio)
    half_width = 16 / cutoff
    out_length = int(np.ceil(len(waveform) * ratio))
    positions = np.arange(out_length) / ratio
    taps = np.arange(-int(half_width), int(half_width) + 1)
    indices = np.floor(positions)[:, None].astype(np.int64) + taps[None, :]
    offsets = positions[:, None] - indices
    taper = np.where(np.abs(offsets) < half_width, 0.5 * (1.0 + np.cos(np.pi * offsets / half_width)), 0.0)
    kernel = cutoff * np.sinc(cutoff * offsets) * taper
    valid = (indices >= 0) & (indices < len(waveform))
    values = np.where(valid, waveform[np.clip(indices, 0, len(waveform) - 1)], 0.0)
    return (values * kernel).sum(axis=1).astype(np.float32)


def compute_mask_indices(shape, mask_prob, mask_length, attention_mask=None, min_masks=0):
    """SpecAugment's (batch, length) boolean mask of random spans (Park et al., 2019), as
    wav2vec 2.0 draws them: about `mask_prob * length / mask_length` spans of `mask_length`
    per row (at least `min_masks`), starting at distinct random places within each row's
    unpadded length (from `attention_mask`); spans may overlap."""
    batch_size, sequence_length = shape
    if mask_length < 1:
        raise ValueError("`mask_length` has to be bigger than 0.")
    if mask_length > sequence_length:
        raise ValueError(f"`mask_length` has to be smaller than `sequence_length`, but got `mask_length`: "
                         f"{mask_length} and `sequence_length`: {sequence_length}`")
    epsilon = np.random.rand(1).item()  # rounds the span count up or down at random

    def span_count(input_length):
        count = max(int(mask_prob * input_length / mask_length + epsilon), min_masks)
        count = min(count, sequence_length // mask_length)
        return max(min(count, input_length - (mask_length - 1)), 0)

    lengths = (attention_mask.detach().sum(-1).tolist() if attention_mask is not None
               else [sequence_length] * batch_size)
    mask = np.zeros((batch_size, sequence_length), dtype=bool)
    if span_count(sequence_length) == 0:
        return mask
    for row, length in enumerate(lengths):
        length = int(length)
        starts = np.random.choice(np.arange(length - (mask_length - 1)), span_count(length), replace=False)
        spans = (starts[:, None] + np.arange(mask_length)[None, :]).reshape(-1)
        mask[row, np.minimum(spans, sequence_length - 1)] = True
    return mask
