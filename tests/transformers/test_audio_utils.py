"""audio_utils: WAV reading with the standard library, resampling, mel scales and filters."""
import wave

import numpy as np
import pytest

from mindnlp.transformers.audio_utils import (compute_mask_indices, hertz_to_mel, mel_filter_bank, mel_to_hertz,
                                              read_wav, resample, spectrogram, window_function)


def write(path, frames, rate, width, channels):
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        wav.writeframes(frames)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_read_wav_every_pcm_width(tmp_path, width):
    values = np.array([0.0, 0.5, -0.5, 0.25], dtype=np.float64)
    scale = 2 ** (8 * width - 1)
    ints = np.round(values * scale).astype(np.int64)
    if width == 1:
        frames = (ints + 128).astype(np.uint8).tobytes()
    else:
        frames = b"".join(int(v).to_bytes(width, "little", signed=True) for v in ints)
    write(tmp_path / "a.wav", frames, 8000, width, 1)
    samples, rate = read_wav(str(tmp_path / "a.wav"))
    assert rate == 8000 and samples.dtype == np.float32
    np.testing.assert_allclose(samples, values, atol=1e-6)


def test_read_wav_averages_channels_and_rejects_other_files(tmp_path):
    stereo = np.array([[1000, 3000], [-2000, 0]], dtype=np.int16)
    write(tmp_path / "s.wav", stereo.tobytes(), 16000, 2, 2)
    samples, _ = read_wav((tmp_path / "s.wav").read_bytes())
    np.testing.assert_allclose(samples, [2000 / 32768, -1000 / 32768], atol=1e-7)
    with pytest.raises(ValueError, match="PCM WAV"):
        read_wav(b"fLaC not a wav")


def test_resample_keeps_a_tone():
    t = np.arange(8000) / 8000
    tone = np.sin(2 * np.pi * 440 * t)
    up = resample(tone, 8000, 16000)
    assert len(up) == 16000
    expected = np.sin(2 * np.pi * 440 * np.arange(16000) / 16000)
    assert np.abs(up[200:-200] - expected[200:-200]).max() < 1e-3
    down = resample(up, 16000, 8000)
    assert np.abs(down[100:-100] - tone[100:-100]).max() < 1e-3
    np.testing.assert_array_equal(resample(tone, 8000, 8000), tone.astype(np.float32))


@pytest.mark.parametrize("scale", ["htk", "kaldi", "slaney"])
def test_mel_scales_invert(scale):
    freqs = np.array([0.0, 200.0, 999.0, 1000.0, 4000.0, 8000.0])
    np.testing.assert_allclose(mel_to_hertz(hertz_to_mel(freqs, scale), scale), freqs, atol=1e-6)
    with pytest.raises(ValueError, match="mel_scale"):
        hertz_to_mel(freqs, "bark")


def test_filters_window_and_spectrogram_shapes():
    filters = mel_filter_bank(201, 80, 0.0, 8000.0, 16000, norm="slaney", mel_scale="slaney")
    assert filters.shape == (201, 80) and (filters >= 0).all() and (filters.max(axis=0) > 0).all()
    window = window_function(400, "hann")
    assert window.shape == (400,) and window[0] == 0.0
    power = spectrogram(np.random.default_rng(0).standard_normal(1600), window, 400, 160, power=2.0)
    assert power.shape == (201, 11)
    with pytest.raises(ValueError, match="Unknown window"):
        window_function(400, "kaiser")


def test_mask_spans():
    np.random.seed(0)
    mask = compute_mask_indices((3, 100), mask_prob=0.3, mask_length=5, min_masks=1)
    assert mask.shape == (3, 100) and mask.dtype == bool and (mask.sum(axis=1) >= 5).all()
    with pytest.raises(ValueError, match="mask_length"):
        compute_mask_indices((1, 4), 0.5, 5)
