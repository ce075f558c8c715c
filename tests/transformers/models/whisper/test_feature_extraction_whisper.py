"""WhisperFeatureExtractor against HF's log-mel features of the same waveforms (within 1e-5),
and its padding, masks and errors."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoFeatureExtractor, AutoProcessor, WhisperFeatureExtractor, WhisperProcessor

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "whisper")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "features", "expected.npz")) as data:
        return {k: data[k] for k in data.files}


def test_features_mask_and_normalisation_match_hf(expected):
    audio = [expected["audio_0"], expected["audio_1"]]
    extractor = WhisperFeatureExtractor(chunk_length=1)
    batch = extractor(audio, sampling_rate=16000, return_attention_mask=True, return_tensors="np")
    assert np.abs(batch["input_features"] - expected["small"]).max() <= 1e-5
    np.testing.assert_array_equal(batch["attention_mask"], expected["small_attention_mask"])
    normalized = extractor(audio, sampling_rate=16000, do_normalize=True, return_tensors="np")["input_features"]
    assert np.abs(normalized - expected["small_normalized"]).max() <= 1e-5


def test_thirty_second_features_match_hf(expected):
    features = WhisperFeatureExtractor()(expected["audio_1"], sampling_rate=16000, return_tensors="pt")
    features = features["input_features"]
    assert isinstance(features, core.Tensor) and tuple(features.shape) == tuple(expected["default_shape"])
    flat = features.numpy().reshape(-1)
    assert np.abs(flat[expected["default_index"]] - expected["default_values"]).max() <= 1e-5
    assert np.abs(features.numpy()[0, :, -5:] - expected["default_tail"]).max() <= 1e-5


def test_errors():
    extractor = WhisperFeatureExtractor()
    with pytest.raises(ValueError, match="sampling rate of 16000"):
        extractor(np.zeros(100, np.float32), sampling_rate=8000)
    with pytest.raises(ValueError, match="mono-channel"):
        extractor(np.zeros((2, 2, 100), np.float32), sampling_rate=16000)


def test_saved_extractor_and_processor_reload(tmp_path):
    processor = AutoProcessor.from_pretrained(os.path.join(FIXTURES, "model"))
    assert isinstance(processor, WhisperProcessor)
    processor.save_pretrained(tmp_path)
    extractor = AutoFeatureExtractor.from_pretrained(tmp_path)
    assert isinstance(extractor, WhisperFeatureExtractor) and extractor.chunk_length == 1
    assert extractor.to_dict() == processor.feature_extractor.to_dict()
    inputs = processor(np.zeros(8000, np.float32), sampling_rate=16000, text="the cat", return_tensors="np")
    assert inputs["input_features"].shape == (1, 80, 100)
    assert inputs["labels"][0][0] == processor.tokenizer.convert_tokens_to_ids("<|startoftranscript|>")
