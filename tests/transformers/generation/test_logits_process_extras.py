"""Top-h, classifier-free guidance, Bark's and Dia's processors, generate() with
guidance_scale / top_h, and token healing: results equal Hugging Face's (tests/fixtures/
make_logits_process_extras_fixtures.py)."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.generation import logits_process as lp

from .tiny_lm import FIXTURES, load_tiny_lm

with open(os.path.join(FIXTURES, "processors_extra.json")) as fh:
    EXPECTED = json.load(fh)
ARRAYS = np.load(os.path.join(FIXTURES, "processors_extra.npz"))

PROCESSORS = {
    "top_h_0.4": lambda: lp.TopHLogitsWarper(top_h=0.4),
    "top_h_0.85": lambda: lp.TopHLogitsWarper(top_h=0.85),
    "cfg_1.5": lambda: lp.ClassifierFreeGuidanceLogitsProcessor(1.5),
    "bark_eos": lambda: lp.BarkEosPrioritizerLogitsProcessor(eos_token_id=[3, 7], min_eos_p=0.01),
    "alternating_even": lambda: lp.AlternatingCodebooksLogitsProcessor(5, 40, 50),
    "alternating_odd": lambda: lp.AlternatingCodebooksLogitsProcessor(4, 40, 50),
    "dia_cfg": lambda: lp.DiaClassifierFreeGuidanceLogitsProcessor(2.0, guidance_top_k=7),
    "dia_channel_filter": lambda: lp.DiaEOSChannelFilterLogitsProcessor(num_channels=2, eos_token_id=120),
}


@pytest.mark.parametrize("label", sorted(PROCESSORS))
def test_processor_equals_hf(label):
    ids = ARRAYS["ids"][:2] if label.startswith(("cfg", "dia_cfg")) else ARRAYS["ids"]
    out = PROCESSORS[label]()(core.tensor(ids), core.tensor(ARRAYS["scores"]).clone())
    np.testing.assert_allclose(out.numpy(), ARRAYS[label], rtol=1e-6, atol=1e-6)


def test_dia_delay_pattern_equals_hf():
    delay = lp.DiaEOSDelayPatternLogitsProcessor(delay_pattern=[0, 1, 2], eos_token_id=9, max_generation_len=40)
    for step in range(4):
        scores = np.repeat(ARRAYS["dia_delay_scores"][step].reshape(1, 3, 20), 2, axis=0)
        if step == 1:
            scores[0, 0, 9] = 10.0
        out = delay(core.zeros((2, 5 + step), dtype=core.int64), core.tensor(scores.reshape(6, 20)))
        np.testing.assert_array_equal(out.numpy(), ARRAYS["dia_delay_out"][step])


def test_unbatched_guidance_runs_the_unconditional_branch_as_hf():
    calls = []
    uncond = ARRAYS["unbatched_uncond"]

    def model(input_ids, attention_mask=None, use_cache=True, past_key_values=None):
        calls.append({"input_ids": input_ids.tolist(), "attention_mask": attention_mask.tolist()})
        return {"logits": core.tensor(uncond[len(calls) - 1])[None, None, :]}

    class Output(dict):
        def __getattr__(self, name):
            return self[name]

    cfg = lp.UnbatchedClassifierFreeGuidanceLogitsProcessor(1.7, lambda *a, **k: Output(model(*a, **k)),
                                                            unconditional_ids=core.tensor([[4, 5]]))
    ids, scores = ARRAYS["ids"], ARRAYS["scores"]
    outs = [cfg(core.tensor(ids[:1, :3 + step]), core.tensor(scores[:1])).numpy() for step in range(3)]
    np.testing.assert_allclose(np.concatenate(outs), ARRAYS["unbatched_out"], rtol=1e-5, atol=1e-5)
    assert calls == EXPECTED["unbatched_calls"]


def test_generate_with_guidance_equals_hf():
    model = load_tiny_lm()
    prompt = core.tensor([[3, 17, 250, 99, 4]])
    out = model.generate(prompt, max_new_tokens=8, do_sample=False, guidance_scale=1.5,
                         negative_prompt_ids=core.tensor([[250, 99]]))
    assert out.tolist() == EXPECTED["generate_guidance"]
    out = model.generate(prompt, max_new_tokens=8, do_sample=False, guidance_scale=0.5)
    assert out.tolist() == EXPECTED["generate_guidance_default_negative"]


def test_generate_with_top_h_filters_as_hf():
    model = load_tiny_lm()
    core.manual_seed(0)
    out = model.generate(core.tensor([[3, 17, 250, 99, 4]]), max_new_tokens=4, do_sample=True, top_h=0.3, top_k=0,
                         return_dict_in_generate=True, output_scores=True, output_logits=True)
    np.testing.assert_allclose(out.logits[0].numpy(), ARRAYS["generate_top_h_logits"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out.scores[0].numpy(), ARRAYS["generate_top_h_scores"], rtol=1e-4, atol=1e-4)
    kept = np.isfinite(ARRAYS["generate_top_h_scores"][0]).nonzero()[0]
    assert all(int(token) in kept for token in out.sequences[0, 5:6].tolist())


@pytest.fixture(scope="module")
def gpt2_tokenizer():
    from mindnlp.transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(os.path.join(FIXTURES, "..", "tokenizers", "gpt2_bpe"))
    tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


@pytest.mark.parametrize("case", EXPECTED["healing"], ids=lambda case: repr(case["prompt"]))
def test_token_healing_equals_hf(case, gpt2_tokenizer):
    ids = gpt2_tokenizer(case["prompt"], return_tensors="pt")["input_ids"]
    assert ids.tolist() == case["input_ids"]
    assert load_tiny_lm().heal_tokens(ids, tokenizer=gpt2_tokenizer).tolist() == case["healed"]


def test_generate_with_token_healing_equals_hf(gpt2_tokenizer):
    model = load_tiny_lm()
    for prompt, expected in EXPECTED["generate_healing"].items():
        ids = gpt2_tokenizer(prompt, return_tensors="pt")["input_ids"]
        out = model.generate(ids, token_healing=True, tokenizer=gpt2_tokenizer, max_new_tokens=5, do_sample=False)
        assert out.tolist() == expected
    with pytest.raises(ValueError, match="tokenizer"):
        model.generate(ids, token_healing=True, max_new_tokens=2)


def test_a_processor_list_hands_continuous_batching_context_to_the_processors_that_take_it():
    """HF's LogitsProcessorList.set_continuous_batching_context: processors with the method get
    the packed layout's metadata, others are left alone."""
    penalty, temperature = lp.RepetitionPenaltyLogitsProcessor(1.5), lp.TemperatureLogitsWarper(0.7)
    indices, lengths = core.tensor([1, 3]), core.tensor([0, 2, 4])
    lp.LogitsProcessorList([temperature, penalty]).set_continuous_batching_context(indices, lengths)
    assert penalty.logits_indices is indices and penalty.cu_seq_lens_q is lengths
    assert not hasattr(temperature, "logits_indices")
