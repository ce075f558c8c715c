"""Parity of Whisper with the outputs HF transformers recorded (tests/fixtures/whisper/, made by
tests/fixtures/make_whisper_fixtures.py): logits, encoder states and loss of a tiny checkpoint
saved by HF, its causal-LM and audio-classification heads, and generate() with Whisper's
prompt tokens, language detection, timestamps, prompts, beam search and long-form windows."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import (AutoModelForSpeechSeq2Seq, WhisperConfig, WhisperForAudioClassification,
                                  WhisperForCausalLM, WhisperForConditionalGeneration, WhisperModel,
                                  WhisperTokenizer)
from mindnlp.transformers.models.whisper.generation_whisper import _dynamic_time_warping, _median_filter
from mindnlp.transformers.models.whisper.modeling_whisper import sinusoids

from ..seq2seq_parity import assert_close, check_compiled_steps, compiled_for_generation

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "whisper")
MODEL = os.path.join(FIXTURES, "model")


@pytest.fixture(scope="module")
def expected():
    with np.load(os.path.join(FIXTURES, "expected.npz")) as data:
        arrays = {k: data[k] for k in data.files}
    with open(os.path.join(FIXTURES, "expected.json"), encoding="utf-8") as fh:
        return arrays, json.load(fh)


@pytest.fixture(scope="module")
def model():
    return WhisperForConditionalGeneration.from_pretrained(MODEL).eval()


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_logits_encoder_states_and_loss_match_hf(expected, attn):
    arrays, _ = expected
    model = WhisperForConditionalGeneration.from_pretrained(MODEL, attn_implementation=attn).eval()
    features = core.tensor(arrays["features"])
    decoder_ids, decoder_mask = core.tensor(arrays["decoder_input_ids"]), core.tensor(arrays["decoder_attention_mask"])
    with core.no_grad():
        out = model(features, decoder_input_ids=decoder_ids, decoder_attention_mask=decoder_mask)
        assert_close(out.logits, arrays["lm_logits"], f"logits ({attn})")
        assert_close(out.encoder_last_hidden_state, arrays["encoder_hidden"], f"encoder ({attn})")
        labels = decoder_ids[:, 1:].masked_fill(decoder_mask[:, 1:] == 0, -100)
        assert_close(model(features, labels=labels).loss, arrays["loss"], "loss")


def test_heads_match_hf(expected, model):
    arrays, _ = expected
    features = core.tensor(arrays["features"])
    config = WhisperConfig.from_pretrained(MODEL, num_labels=3)
    classifier = WhisperForAudioClassification(config).eval()
    with core.no_grad():
        classifier.encoder.load_state_dict(model.model.encoder.state_dict())
        own = classifier.state_dict()
        for key, value in load_safetensors(os.path.join(FIXTURES, "audio_cls_heads.safetensors")).items():
            own[key].copy_(value)
        assert_close(classifier(features).logits, arrays["audio_cls_logits"], "audio classification logits")
        causal = WhisperForCausalLM.from_pretrained(MODEL).eval()
        encoder_states = model.model.encoder(features).last_hidden_state
        logits = causal(core.tensor(arrays["decoder_input_ids"]), encoder_outputs=(encoder_states,),
                        attention_mask=core.tensor(arrays["decoder_attention_mask"])).logits
    assert_close(logits, arrays["causal_logits"], "causal LM logits")


def test_checkpoint_keys_and_auto_class():
    model = AutoModelForSpeechSeq2Seq.from_pretrained(MODEL)
    assert type(model) is WhisperForConditionalGeneration
    keys = set(model.state_dict())
    assert "model.encoder.conv1.weight" in keys and "model.decoder.embed_positions.weight" in keys
    assert "model.encoder.layers.0.self_attn.k_proj.bias" not in keys  # keys are unbiased
    assert model.proj_out.weight is model.model.decoder.embed_tokens.weight


def test_encoder_positions_are_frozen_sinusoids():
    config = WhisperConfig.from_pretrained(MODEL)
    encoder = WhisperModel(config).encoder
    table = encoder.embed_positions.weight
    assert not table.requires_grad
    np.testing.assert_allclose(table.detach().numpy(), sinusoids(*table.shape).numpy(), atol=1e-6)


def test_wrong_number_of_frames_is_an_error(model):
    with pytest.raises(ValueError, match="mel input features to be of length 100"):
        model(core.zeros((1, 80, 99)), decoder_input_ids=core.tensor([[1]]))


GENERATIONS = {
    "french": dict(language="fr", task="transcribe"),
    "detected_language": dict(),
    "translate_list_languages": dict(language=["de", "spanish"], task="translate"),
    "timestamps": dict(language="en", return_timestamps=True),
    "timestamps_segments": dict(language="en", return_timestamps=True, return_segments=True),
    "beam": dict(language="fr", num_beams=3, max_new_tokens=8),
    "max_new_tokens": dict(language="fr", max_new_tokens=5),
}


def segments_as_json(segments):
    return [[{"start": float(s["start"]), "end": float(s["end"]), "tokens": s["tokens"].tolist()} for s in row]
            for row in segments]


def check_generation(name, out, expected):
    arrays, info = expected
    sequences = out["sequences"] if isinstance(out, dict) else out
    np.testing.assert_array_equal(sequences.numpy(), arrays[f"generate/{name}/sequences"], err_msg=name)
    if "segments" in info["generate"][name]:
        got = segments_as_json(out["segments"])
        want = info["generate"][name]["segments"]
        assert [[s["tokens"] for s in row] for row in got] == [[s["tokens"] for s in row] for row in want]
        for row_got, row_want in zip(got, want):
            for a, b in zip(row_got, row_want):
                assert a["start"] == pytest.approx(b["start"]) and a["end"] == pytest.approx(b["end"])


@pytest.mark.parametrize("name", sorted(GENERATIONS))
def test_generate_matches_hf(expected, model, name):
    out = model.generate(core.tensor(expected[0]["features"]), **GENERATIONS[name])
    check_generation(name, out, expected)


def test_compiled_generation_matches_hf(expected):
    """HF's compiled-generation recipe (static self- and cross-attention caches, forward under
    core.compile): Whisper's language and task tokens, timestamps, long-form windows and beam
    search give HF's ids, each decoding step a replayed graph."""
    model = WhisperForConditionalGeneration.from_pretrained(MODEL).eval()
    compiled = compiled_for_generation(model)
    for name in ("french", "detected_language", "timestamps_segments", "beam"):
        check_generation(name, model.generate(core.tensor(expected[0]["features"]), **GENERATIONS[name]), expected)
    arrays = expected[0]
    out = model.generate(core.tensor(arrays["long_features"]), language="en", return_segments=True,
                         attention_mask=core.tensor(arrays["long_attention_mask"]))
    check_generation("long_form", out, expected)
    check_compiled_steps(compiled)


def test_generate_with_prompt_matches_hf(expected, model):
    prompt_ids = core.tensor(WhisperTokenizer.from_pretrained(MODEL).get_prompt_ids("the sat"))
    out = model.generate(core.tensor(expected[0]["features"]), language="fr", prompt_ids=prompt_ids)
    check_generation("prompt", out, expected)


@pytest.mark.parametrize("name,settings", [("long_form", dict(language="en")),
                                           ("long_form_condition", dict(language="en", condition_on_prev_tokens=True))])
def test_long_form_generate_matches_hf(expected, model, name, settings):
    arrays = expected[0]
    out = model.generate(core.tensor(arrays["long_features"]),
                         attention_mask=core.tensor(arrays["long_attention_mask"]), return_segments=True, **settings)
    check_generation(name, out, expected)


TOKEN_TIMESTAMPS = {  # name: (settings, with the attention mask), as make_whisper_fixtures.py runs them
    "token_timestamps": (dict(language="en"), False),
    "token_timestamps_num_frames": (dict(language="en"), True),
    "token_timestamps_timestamps": (dict(language="en", return_timestamps=True, return_segments=True), True),
    "token_timestamps_beam": (dict(language="fr", num_beams=3, max_new_tokens=8), False),
    "token_timestamps_dict": (dict(language="en", return_dict_in_generate=True, max_new_tokens=6), True),
}


def check_token_timestamps(name, out, expected):
    arrays, info = expected
    np.testing.assert_array_equal(out["sequences"].numpy(), arrays[f"generate/{name}/sequences"], err_msg=name)
    np.testing.assert_allclose(out["token_timestamps"].numpy(), arrays[f"generate/{name}/token_timestamps"],
                               atol=1e-6, err_msg=name)
    want = info["generate"][name]
    if "keys" in want:  # HF 5.24 calls the cache "cache"
        renamed = {"past_key_values": "cache"}
        assert sorted(renamed.get(key, key) for key in out) == want["keys"]
    if "segment_token_timestamps" in want:
        got = [[segment["token_timestamps"].tolist() for segment in row] for row in out["segments"]]
        assert [[len(s) for s in row] for row in got] == [[len(s) for s in row] for row in want[
            "segment_token_timestamps"]]
        for row_got, row_want in zip(got, want["segment_token_timestamps"]):
            for segment_got, segment_want in zip(row_got, row_want):
                np.testing.assert_allclose(segment_got, segment_want, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TOKEN_TIMESTAMPS))
def test_token_timestamps_match_hf(expected, model, name):
    """Cross-attention + DTW token times: without and with the attention mask's frame counts,
    beside segment timestamps, after a beam search, and in a full generate() output."""
    settings, with_mask = TOKEN_TIMESTAMPS[name]
    arrays = expected[0]
    mask = core.tensor(arrays["attention_mask"]) if with_mask else None
    out = model.generate(core.tensor(arrays["features"]), attention_mask=mask, return_token_timestamps=True,
                         **settings)
    check_token_timestamps(name, out, expected)


def test_long_form_token_timestamps_match_hf(expected, model):
    arrays = expected[0]
    out = model.generate(core.tensor(arrays["long_features"]), attention_mask=core.tensor(
        arrays["long_attention_mask"]), return_segments=True, language="en", return_token_timestamps=True)
    check_generation("long_form_token_timestamps", out, expected)
    check_token_timestamps("long_form_token_timestamps", out, expected)


def test_token_timestamps_of_several_sequences_per_input(expected, model):
    """Each returned sequence aligns to its own input's frames, as when the input is alone."""
    arrays = expected[0]
    features, mask = core.tensor(arrays["features"]), core.tensor(arrays["attention_mask"])
    settings = dict(language="en", return_token_timestamps=True, num_beams=2, num_return_sequences=2,
                    max_new_tokens=5)
    batched = model.generate(features, attention_mask=mask, **settings)
    for row in range(2):
        alone = model.generate(features[row:row + 1], attention_mask=mask[row:row + 1], **settings)
        np.testing.assert_array_equal(batched["sequences"][2 * row:2 * row + 2].numpy(), alone["sequences"].numpy())
        np.testing.assert_array_equal(batched["token_timestamps"][2 * row:2 * row + 2].numpy(),
                                      alone["token_timestamps"].numpy())


def test_token_timestamps_need_alignment_heads(expected):
    model = WhisperForConditionalGeneration.from_pretrained(MODEL).eval()
    del model.generation_config.alignment_heads
    with pytest.raises(ValueError, match="no `alignment_heads`"):
        model.generate(core.tensor(expected[0]["features"]), language="en", return_token_timestamps=True)


@pytest.mark.parametrize("name", ["random", "ties"])
def test_dynamic_time_warping_matches_hf(expected, name):
    """The warping path through HF's recorded cost matrices, one full of ties."""
    arrays = expected[0]
    text, time = _dynamic_time_warping(arrays[f"dtw/{name}/matrix"])
    np.testing.assert_array_equal(text, arrays[f"dtw/{name}/text"])
    np.testing.assert_array_equal(time, arrays[f"dtw/{name}/time"])


def test_median_filter_matches_hf(expected):
    arrays = expected[0]
    np.testing.assert_array_equal(_median_filter(arrays["median/weights"], 7), arrays["median/filtered"])
    with pytest.raises(ValueError, match="odd"):
        _median_filter(arrays["median/weights"], 4)


def test_generate_bad_requests_are_errors(expected, model):
    features = core.tensor(expected[0]["features"])
    with pytest.raises(ValueError, match="Unsupported language: klingon"):
        model.generate(features, language="klingon")
    with pytest.raises(ValueError, match="task is not supported"):
        model.generate(features, language="fr", task="summarize")
    long = core.tensor(expected[0]["long_features"])
    with pytest.raises(ValueError, match="requires the model to predict timestamp tokens"):
        model.generate(long[:1], return_timestamps=False)
    with pytest.raises(ValueError, match="attention_mask"):
        model.generate(long, language="en")


def test_saved_checkpoint_reloads_with_the_same_outputs(tmp_path, expected, model):
    model.save_pretrained(tmp_path)
    reloaded = WhisperForConditionalGeneration.from_pretrained(tmp_path).eval()
    assert reloaded.generation_config.lang_to_id == model.generation_config.lang_to_id
    out = reloaded.generate(core.tensor(expected[0]["features"]), **GENERATIONS["timestamps"])
    check_generation("timestamps", out, expected)
