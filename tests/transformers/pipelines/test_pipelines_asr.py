"""pipeline("automatic-speech-recognition") against what HF's pipeline gave on the Whisper
fixture checkpoint (tests/fixtures/whisper): arrays with their sampling rate, a 16-bit WAV file
read with the standard library, segment and word timestamps, chunked audio; and the input errors."""
import json
import os
import wave

import numpy as np
import pytest

from mindnlp.transformers import pipeline

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "whisper")


@pytest.fixture(scope="module")
def asr():
    return pipeline("automatic-speech-recognition", model=os.path.join(FIXTURES, "model"))


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as fh:
        info = json.load(fh)["pipeline"]
    with np.load(os.path.join(FIXTURES, "features", "expected.npz")) as data:
        audio = data["audio_1"]
    with np.load(os.path.join(FIXTURES, "expected.npz")) as data:
        pcm16 = data["pcm16"]
    return info, audio, pcm16


def as_json(result):
    return json.loads(json.dumps(result))


def long_clip():
    """waveform(2.6, 3) of make_whisper_fixtures.py."""
    rng = np.random.default_rng(3)
    t = np.arange(int(2.6 * 16000)) / 16000
    return (0.5 * np.sin(2 * np.pi * (200 + 900 * t) * t) + 0.05 * rng.standard_normal(t.shape)).astype(np.float32)


def test_array_inputs_match_hf(asr, expected):
    info, audio, _ = expected
    english = {"generate_kwargs": {"language": "en"}}
    assert asr({"raw": audio, "sampling_rate": 16000}, **english) == info["text"]
    assert asr({"array": audio, "sampling_rate": 16000}, **english) == info["text"]
    assert as_json(asr({"raw": audio, "sampling_rate": 16000}, return_timestamps=True, **english)) == \
        info["timestamps"]


def test_chunked_audio_matches_hf(asr, expected):
    info = expected[0]
    clip = {"raw": long_clip(), "sampling_rate": 16000}
    assert asr(dict(clip), chunk_length_s=0.8, generate_kwargs={"language": "en"}) == info["chunked"]
    assert as_json(asr(dict(clip), chunk_length_s=0.8, return_timestamps=True, return_language=True,
                       generate_kwargs={"language": "en"})) == info["chunked_timestamps"]


def test_word_timestamps_match_hf(asr, expected):
    info, audio, _ = expected
    english = {"generate_kwargs": {"language": "en"}}
    assert as_json(asr({"raw": audio, "sampling_rate": 16000}, return_timestamps="word", **english)) == info["words"]
    assert as_json(asr({"raw": long_clip(), "sampling_rate": 16000}, chunk_length_s=0.8, return_timestamps="word",
                       **english)) == info["chunked_words"]


def test_word_timestamps_with_language(asr, expected):
    """HF's pipeline fails here (the language token it puts back has no time); each word keeps
    the times it has without the language, and gains the language."""
    info, audio, _ = expected
    words = asr({"raw": audio, "sampling_rate": 16000}, return_timestamps="word", return_language=True,
                generate_kwargs={"language": "en"})
    assert as_json(words["chunks"]) == [dict(chunk, language="english") for chunk in info["words"]["chunks"]]


def write_wav(path, samples, rate, width=2, channels=1):
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(channels)
        wav.setsampwidth(width)
        wav.setframerate(rate)
        wav.writeframes(samples.tobytes())


def test_wav_file_matches_hf_on_its_samples(asr, expected, tmp_path):
    info, _, pcm16 = expected
    path = tmp_path / "clip.wav"
    write_wav(path, pcm16, 16000)
    assert asr(str(path), generate_kwargs={"language": "en"}) == info["pcm16"]
    assert asr(path.read_bytes(), generate_kwargs={"language": "en"}) == info["pcm16"]


def test_other_sampling_rates_are_resampled(asr, expected):
    _, audio, _ = expected
    at_8k = asr({"raw": audio[::2].copy(), "sampling_rate": 8000}, generate_kwargs={"language": "en"})
    assert isinstance(at_8k["text"], str) and at_8k["text"]


def test_bad_inputs_are_errors(asr, tmp_path):
    with pytest.raises(ValueError, match='"sampling_rate" key'):
        asr({"raw": np.zeros(100, np.float32)})
    with pytest.raises(TypeError, match="numpy ndarray"):
        asr(3.5)
    not_wav = tmp_path / "clip.mp3"
    not_wav.write_bytes(b"ID3\x03\x00 not a wave file")
    with pytest.raises(ValueError, match="PCM WAV"):
        asr(str(not_wav))
    with pytest.raises(ValueError, match="cannot return `char` timestamps"):
        asr(np.zeros(1600, np.float32), return_timestamps="char")


def test_batches_give_what_single_calls_give(asr, expected):
    _, audio, _ = expected
    clips = [{"raw": audio[:11000], "sampling_rate": 16000}, {"raw": audio[5000:16000], "sampling_rate": 16000}]
    for timestamps in (True, "word"):  # word times are each row's own, padded like its tokens
        settings = dict(return_timestamps=timestamps, generate_kwargs={"language": "en"})
        single = [asr(dict(clip), **settings) for clip in clips]
        assert asr([dict(clip) for clip in clips], batch_size=2, **settings) == single
    with pytest.raises(ValueError, match="one shape"):
        asr([{"raw": audio, "sampling_rate": 16000}, {"raw": audio[:8000], "sampling_rate": 16000}], batch_size=2)
