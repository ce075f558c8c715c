"""Watermarking: green lists, processors, detectors and watermarked generate(), against what
Hugging Face transformers computed (tests/fixtures/make_watermark_fixtures.py).

The watermarks are defined by torch's CPU random stream; equal green lists and g-values mean
text watermarked by either library is detected by the other.
"""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import PretrainedConfig, SynthIDTextWatermarkingConfig, WatermarkingConfig
from mindnlp.transformers.generation import (BayesianDetectorConfig, BayesianDetectorModel, GenerationConfig,
                                             SynthIDTextWatermarkDetector,
                                             SynthIDTextWatermarkLogitsProcessor, WatermarkDetector,
                                             WatermarkLogitsProcessor)
from mindnlp.transformers.generation import torch_cpu_stream

from .tiny_lm import FIXTURES, load_tiny_lm

with open(os.path.join(FIXTURES, "watermark.json")) as fh:
    EXPECTED = json.load(fh)
ARRAYS = np.load(os.path.join(FIXTURES, "watermark.npz"))


@pytest.mark.parametrize("case", EXPECTED["greenlists"], ids=lambda case: f"{case['kwargs']}-{case['context']}")
def test_green_lists_equal_hf(case):
    processor = WatermarkLogitsProcessor(device="cpu", **case["kwargs"])
    green = processor._get_greenlist_ids(core.tensor(case["context"])).tolist()
    assert len(green) == case["size"] and sum(green) == case["sum"]
    assert green[:len(case["greenlist"])] == case["greenlist"]


def test_selfhash_lookup_table_equals_hf():
    table = WatermarkLogitsProcessor(vocab_size=421, device="cpu").fixed_table
    expected = EXPECTED["fixed_table"]
    assert table.shape == (1_000_003,)
    assert table[:64].tolist() == expected["first"] and table[-16:].tolist() == expected["last"]
    assert int(table.sum()) == expected["sum"] and int(table.argmax()) == expected["argmax"]


def test_torch_stream_randperm_prefix_is_the_full_permutation_start():
    full = torch_cpu_stream.randperm(123456789, 500)
    assert sorted(full) == list(range(500))
    assert torch_cpu_stream.randperm(123456789, 500, prefix=37) == full[:37]


def test_membership_follows_the_value_through_the_swaps():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.choice([2, 3, 20, 421]))
        prefix = int(rng.integers(1, n))
        seed = int(rng.integers(0, 2 ** 40))
        green = set(torch_cpu_stream.randperm(seed, n, prefix=prefix))
        for value in rng.choice(n, size=min(n, 6), replace=False).tolist():
            assert torch_cpu_stream.randperm_prefix_contains(seed, n, prefix, value) == (value in green)


@pytest.mark.parametrize("index", range(3))
def test_watermark_processor_scores_equal_hf(index):
    processor = WatermarkLogitsProcessor(vocab_size=421, device="cpu", **EXPECTED["processor_cases"][index])
    scores = core.tensor(ARRAYS["processor_scores"])
    out = processor(core.tensor(ARRAYS["processor_ids"]), scores)
    np.testing.assert_array_equal(out.numpy(), ARRAYS[f"processor_out_{index}"])
    np.testing.assert_array_equal(scores.numpy(), ARRAYS["processor_scores"])   # input untouched


def test_watermark_processor_rejects_bad_settings():
    with pytest.raises(ValueError, match="seeding_scheme"):
        WatermarkLogitsProcessor(vocab_size=20, device="cpu", seeding_scheme="hash")
    with pytest.raises(ValueError, match="greenlist_ratio"):
        WatermarkLogitsProcessor(vocab_size=20, device="cpu", greenlist_ratio=1.2)


@pytest.mark.parametrize("case", EXPECTED["detector"], ids=lambda case: case["label"])
def test_detector_equals_hf(case):
    detector = WatermarkDetector(model_config=PretrainedConfig(vocab_size=421), device="cpu",
                                 watermarking_config=WatermarkingConfig(**case["watermark"]))
    out = detector(core.tensor(case["input_ids"]), return_dict=True)
    np.testing.assert_array_equal(out.num_tokens_scored, case["num_tokens_scored"])
    np.testing.assert_array_equal(out.num_green_tokens, case["num_green_tokens"])
    np.testing.assert_allclose(out.z_score, case["z_score"], rtol=1e-12)
    np.testing.assert_allclose(out.p_value, case["p_value"], rtol=1e-12)
    assert out.prediction.tolist() == case["prediction"]
    assert detector(core.tensor(case["input_ids"])).tolist() == case["prediction"]


def test_detector_can_count_each_distinct_ngram_once():
    ids = core.tensor([[5, 9, 5, 9, 5, 9, 5, 9, 11]])
    config = {"seeding_scheme": "lefthash", "greenlist_ratio": 0.5}
    every = WatermarkDetector(PretrainedConfig(vocab_size=421), "cpu", config)(ids, return_dict=True)
    distinct = WatermarkDetector(PretrainedConfig(vocab_size=421), "cpu", config, ignore_repeated_ngrams=True)(
        ids, return_dict=True)
    assert every.num_tokens_scored.tolist() == [8] and distinct.num_tokens_scored.tolist() == [3]


@pytest.mark.parametrize("label", ["lefthash", "selfhash", "synthid"])
def test_watermarked_greedy_generation_equals_hf(label):
    model = load_tiny_lm()
    config = {"lefthash": WatermarkingConfig(), "selfhash": WatermarkingConfig(seeding_scheme="selfhash", bias=2.5),
              "synthid": SynthIDTextWatermarkingConfig(ngram_len=3, keys=[10, 20, 30])}[label]
    prompt = core.tensor([[3, 17, 250, 99, 4], [8, 8, 120, 64, 300]])
    out = model.generate(prompt, max_new_tokens=20, do_sample=False, watermarking_config=config,
                         return_dict_in_generate=True, output_scores=True)
    assert out.sequences.tolist() == EXPECTED["generate"][label]
    assert out.sequences.tolist() != EXPECTED["generate"]["plain"]
    scores = core.stack([out.scores[i] for i in (0, 1, -1)], dim=1).numpy()
    np.testing.assert_allclose(scores, ARRAYS[f"generate_{label}_scores"], rtol=1e-4, atol=1e-4)


def test_watermarking_config_from_a_dict_and_through_a_saved_file(tmp_path):
    model = load_tiny_lm()
    prompt = core.tensor([[3, 17, 250, 99, 4], [8, 8, 120, 64, 300]])
    as_dict = model.generate(prompt, max_new_tokens=20, do_sample=False,
                             watermarking_config={"seeding_scheme": "selfhash", "bias": 2.5})
    assert as_dict.tolist() == EXPECTED["generate"]["selfhash"]
    GenerationConfig(watermarking_config=SynthIDTextWatermarkingConfig(ngram_len=3, keys=[10, 20, 30])).save_pretrained(
        tmp_path)
    loaded = GenerationConfig.from_pretrained(tmp_path)
    assert isinstance(loaded.watermarking_config, SynthIDTextWatermarkingConfig)
    assert loaded.watermarking_config.keys == [10, 20, 30]
    with pytest.raises(ValueError, match="seeding_scheme"):
        GenerationConfig(watermarking_config={"seeding_scheme": "hash"})


def test_detector_finds_the_watermark_it_was_given_and_no_other():
    model = load_tiny_lm()
    prompt = core.tensor([[3, 17, 250, 99, 4], [8, 8, 120, 64, 300]])
    marked = model.generate(prompt, max_new_tokens=30, do_sample=False,
                            watermarking_config=WatermarkingConfig(bias=4.0))[:, 5:]
    plain = model.generate(prompt, max_new_tokens=30, do_sample=False)[:, 5:]
    detector = WatermarkDetector(PretrainedConfig(vocab_size=421), "cpu", WatermarkingConfig(bias=4.0))
    assert detector(marked).tolist() == [True, True]
    assert detector(plain).tolist() == [False, False]
    other_key = WatermarkDetector(PretrainedConfig(vocab_size=421), "cpu", WatermarkingConfig(hashing_key=7))
    assert other_key(marked).tolist() == [False, False]


def test_synthid_table_g_values_and_masks_equal_hf():
    synthid = EXPECTED["synthid"]
    processor = SynthIDTextWatermarkLogitsProcessor(device="cpu", **synthid["config"])
    assert processor.sampling_table[:64].tolist() == synthid["table_first"]
    assert int(processor.sampling_table.sum()) == synthid["table_sum"]
    text = core.tensor(ARRAYS["synthid_text"])
    np.testing.assert_array_equal(processor.compute_g_values(text).numpy(), ARRAYS["synthid_g_values"])
    np.testing.assert_array_equal(processor.compute_context_repetition_mask(text).numpy(),
                                  ARRAYS["synthid_repetition_mask"])
    np.testing.assert_array_equal(processor.compute_eos_token_mask(text, 7).numpy(), ARRAYS["synthid_eos_mask"])
    assert processor.expected_mean_g_value(vocab_size=50) == pytest.approx(synthid["expected_mean_g_value"])


def test_synthid_consecutive_calls_equal_hf():
    processor = SynthIDTextWatermarkLogitsProcessor(device="cpu", **EXPECTED["synthid"]["config"])
    text = core.tensor(ARRAYS["synthid_text"])
    scores = core.tensor(ARRAYS["synthid_call_scores"])
    for step, length in enumerate(range(3, 9)):
        out = processor(text[:, :length], scores)
        np.testing.assert_allclose(out.numpy(), ARRAYS["synthid_call_out"][step], rtol=1e-5, atol=1e-5)


def test_synthid_detector_scores_masked_g_values():
    processor = SynthIDTextWatermarkLogitsProcessor(device="cpu", **EXPECTED["synthid"]["config"])
    tokenizer = type("Tokenizer", (), {"eos_token_id": 7})()
    seen = {}

    def detector_module(g_values, mask):
        seen["g_values"], seen["mask"] = g_values, mask
        return (g_values.float().mean(-1) * mask).sum(-1) / mask.sum(-1)

    text = core.tensor(ARRAYS["synthid_text"])
    SynthIDTextWatermarkDetector(detector_module, processor, tokenizer)(text)
    expected_mask = ARRAYS["synthid_repetition_mask"] & ARRAYS["synthid_eos_mask"][:, 2:]
    np.testing.assert_array_equal(seen["mask"].numpy(), expected_mask)
    np.testing.assert_array_equal(seen["g_values"].numpy(), ARRAYS["synthid_g_values"])


def test_bayesian_detector_equals_hf():
    model = BayesianDetectorModel(BayesianDetectorConfig(watermarking_depth=4, base_rate=0.3))
    with core.no_grad():
        for name, param in model.named_parameters():
            param.copy_(core.tensor(ARRAYS[f"bayesian_{name}"]))
    g_values, mask = core.tensor(ARRAYS["bayesian_g_values"]), core.tensor(ARRAYS["bayesian_mask"])
    posterior, loss = model(g_values, mask, labels=core.tensor(ARRAYS["bayesian_labels"]))
    np.testing.assert_allclose(posterior.detach().numpy(), ARRAYS["bayesian_posterior"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(loss.detach().numpy(), ARRAYS["bayesian_loss"], rtol=1e-5)
    out = model(g_values, mask, return_dict=True)
    assert out.loss is None and out.posterior_probabilities.shape == (3,)
    loss.backward()                                        # trainable: gradients reach every parameter
    assert all(param.grad is not None for param in model.parameters())
