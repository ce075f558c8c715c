"""generate() on a tiny LM against Hugging Face transformers' generate() on the same LM (fixtures)."""
import contextlib
import io
import json
import os
import threading

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import PreTrainedTokenizerFast
from mindnlp.transformers.cache_utils import DynamicCache, StaticCache
from mindnlp.transformers.generation import (
    GenerateBeamDecoderOnlyOutput, GenerateDecoderOnlyOutput, LogitsProcessor, LogitsProcessorList,
    MaxLengthCriteria, StoppingCriteria, StoppingCriteriaList, TextIteratorStreamer, TextStreamer,
    TopKLogitsWarper,
)

from .tiny_lm import FIXTURES, load_tiny_lm

with open(os.path.join(FIXTURES, "generate.json")) as _fh:
    RECORDS = {record["name"]: record for record in json.load(_fh)}
ARRAYS = np.load(os.path.join(FIXTURES, "generate.npz"))
TOKENIZER_DIR = os.path.join(FIXTURES, "..", "tokenizers", "gpt2_bpe")


@pytest.fixture(scope="module")
def model():
    return load_tiny_lm()


@pytest.fixture(scope="module")
def tokenizer():
    return PreTrainedTokenizerFast.from_pretrained(TOKENIZER_DIR)


def run(model, name, **overrides):
    record = RECORDS[name]
    kwargs = dict(record["kwargs"], **overrides)
    if record["attention_mask"] is not None:
        kwargs["attention_mask"] = core.tensor(record["attention_mask"])
    return model.generate(core.tensor(record["input_ids"]), **kwargs)


GREEDY = ["greedy_single", "greedy_single_no_cache", "greedy_max_length", "greedy_batch_two_eos",
          "greedy_batch_no_pad_given", "greedy_min_new_tokens", "greedy_inferred_mask"]
BEAM = ["beam_basic", "beam_early_false", "beam_penalties_no_cache"]


@pytest.mark.parametrize("name", GREEDY + BEAM)
def test_sequences_match_transformers(model, name):
    out = run(model, name)
    assert out.tolist() == RECORDS[name]["sequences"]
    assert out.dtype == core.int64


@pytest.mark.parametrize("name", ["greedy_batch_eos", "greedy_penalties"])
def test_greedy_dict_output_matches_transformers(model, name):
    out = run(model, name)
    assert isinstance(out, GenerateDecoderOnlyOutput)
    assert out.sequences.tolist() == RECORDS[name]["sequences"]
    expected_scores = ARRAYS[name + "_scores"]
    assert len(out.scores) == len(expected_scores)
    np.testing.assert_allclose(np.stack([s.numpy() for s in out.scores]), expected_scores, rtol=1e-5, atol=1e-5)
    if name + "_logits" in ARRAYS:
        np.testing.assert_allclose(np.stack([s.numpy() for s in out.logits]), ARRAYS[name + "_logits"],
                                   rtol=1e-5, atol=1e-5)
    assert isinstance(out.past_key_values, DynamicCache)
    assert out.past_key_values.get_seq_length() == out.sequences.shape[1] - 1


@pytest.mark.parametrize("name", ["beam_return", "beam_early_true", "beam_early_never",
                                  "beam_length_penalty_negative"])
def test_beam_dict_output_matches_transformers(model, name):
    out = run(model, name)
    record = RECORDS[name]
    assert isinstance(out, GenerateBeamDecoderOnlyOutput)
    assert out.sequences.tolist() == record["sequences"]
    assert out.beam_indices.tolist() == record["beam_indices"]
    np.testing.assert_allclose(out.sequences_scores.numpy(), ARRAYS[name + "_sequences_scores"], rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(np.stack([s.numpy() for s in out.scores]), ARRAYS[name + "_scores"], rtol=1e-5,
                               atol=1e-4)
    if name + "_logits" in ARRAYS:
        np.testing.assert_allclose(np.stack([s.numpy() for s in out.logits]), ARRAYS[name + "_logits"],
                                   rtol=1e-5, atol=1e-5)


def test_transition_scores_rebuild_beam_scores(model):
    """HF's documented identity: summed transition scores / length**length_penalty = sequences_scores."""
    out = run(model, "beam_return")
    transition = model.compute_transition_scores(out.sequences, out.scores, out.beam_indices)
    lengths = (out.beam_indices >= 0).sum(-1).float()
    rebuilt = transition.sum(-1) / lengths ** 1.0
    np.testing.assert_allclose(rebuilt.numpy(), out.sequences_scores.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("index", range(6))
def test_sampling_first_step_scores_match_transformers(model, index):
    """The sampled tokens depend on the generator; the processed scores of the first step do not."""
    record = RECORDS[f"sample{index}"]
    core.manual_seed(index)
    out = model.generate(core.tensor(record["input_ids"]), attention_mask=core.tensor(record["attention_mask"]),
                         do_sample=True, max_new_tokens=4, pad_token_id=0, return_dict_in_generate=True,
                         output_scores=True, **record["kwargs"])
    expected = ARRAYS[f"sample{index}_first_scores"]
    np.testing.assert_allclose(out.scores[0].numpy(), expected, rtol=1e-5, atol=1e-5)
    # Every sampled token was allowed by the processed scores of its step (beam sampling: of its beam).
    if record["kwargs"].get("num_beams", 1) == 1:
        prompt_length = len(record["input_ids"][0])
        for step, step_scores in enumerate(out.scores):
            tokens = out.sequences[:, prompt_length + step]
            chosen = step_scores.gather(1, tokens[:, None])
            assert bool(core.isfinite(chosen).all())


def test_sampling_is_reproducible_with_seed(model):
    record = RECORDS["sample0"]
    results = []
    for _ in range(2):
        core.manual_seed(123)
        results.append(model.generate(core.tensor(record["input_ids"]), do_sample=True, max_new_tokens=6,
                                      top_k=20, pad_token_id=0,
                                      attention_mask=core.tensor(record["attention_mask"])).tolist())
    assert results[0] == results[1]


def test_use_cache_false_equals_true(model):
    record = RECORDS["greedy_batch_eos"]
    common = dict(attention_mask=core.tensor(record["attention_mask"]), max_new_tokens=9, pad_token_id=0,
                  num_beams=2, num_return_sequences=2)
    with_cache = model.generate(core.tensor(record["input_ids"]), use_cache=True, **common)
    without = model.generate(core.tensor(record["input_ids"]), use_cache=False, **common)
    assert with_cache.tolist() == without.tolist()


def test_left_padded_rows_match_unpadded_rows(model):
    """A left-padded row generates what the same prompt generates alone."""
    record = RECORDS["greedy_batch_eos"]
    batched = model.generate(core.tensor(record["input_ids"]), attention_mask=core.tensor(record["attention_mask"]),
                             max_new_tokens=8, pad_token_id=0)
    for row, mask in zip(range(3), record["attention_mask"]):
        start = mask.index(1)
        alone = model.generate(core.tensor([record["input_ids"][row][start:]]), max_new_tokens=8)
        assert batched[row, start:].tolist() == alone[0].tolist()


def test_stop_strings_match_transformers(model, tokenizer):
    record = RECORDS["stop_strings"]
    out = model.generate(core.tensor(record["input_ids"]), tokenizer=tokenizer, **record["kwargs"])
    assert out.tolist() == record["sequences"]
    with pytest.raises(ValueError, match="tokenizer"):
        model.generate(core.tensor(record["input_ids"]), **record["kwargs"])


@pytest.mark.parametrize("skip_prompt", [False, True])
def test_text_streamer_prints_like_transformers(model, tokenizer, skip_prompt):
    record = RECORDS[f"text_streamer_skip{skip_prompt}"]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        model.generate(core.tensor(record["input_ids"]), streamer=TextStreamer(tokenizer, skip_prompt=skip_prompt),
                       **record["kwargs"])
    assert buffer.getvalue() == record["printed"]


def test_iterator_streamer_from_another_thread(model, tokenizer):
    record = RECORDS["iterator_streamer"]
    streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, timeout=30)
    thread = threading.Thread(target=model.generate, args=(core.tensor(record["input_ids"]),),
                              kwargs=dict(streamer=streamer, **record["kwargs"]))
    thread.start()
    pieces = list(streamer)
    thread.join()
    assert pieces == record["pieces"]


def test_streamer_refuses_beam_search(model, tokenizer):
    with pytest.raises(ValueError, match="beam search"):
        model.generate(core.tensor([[1, 2, 3]]), num_beams=2, max_new_tokens=2, streamer=TextStreamer(tokenizer))


class _BanToken(LogitsProcessor):
    def __init__(self, token):
        self.token = token

    def __call__(self, input_ids, scores):
        scores = scores.clone()
        scores[:, self.token] = -float("inf")
        return scores


class _StopAfter(StoppingCriteria):
    def __init__(self, length):
        self.length = length

    def __call__(self, input_ids, scores, **kwargs):
        return core.full((input_ids.shape[0],), input_ids.shape[1] >= self.length, dtype=core.bool)


def test_custom_processors_and_criteria_are_used(model):
    prompt = core.tensor([RECORDS["greedy_single"]["input_ids"][0]])
    free = model.generate(prompt, max_new_tokens=4)
    banned = int(free[0, -1])
    out = model.generate(prompt, max_new_tokens=10, logits_processor=LogitsProcessorList([_BanToken(banned)]),
                         stopping_criteria=StoppingCriteriaList([_StopAfter(prompt.shape[1] + 3)]),
                         return_dict_in_generate=True, output_scores=True)
    assert out.sequences.shape[1] == prompt.shape[1] + 3
    assert banned not in out.sequences[0, prompt.shape[1]:].tolist()
    assert all(float(s[0, banned]) == -float("inf") for s in out.scores)


def test_custom_processor_replaces_default_of_same_type(model):
    prompt = core.tensor([[1, 2, 3, 4]])
    core.manual_seed(0)
    out = model.generate(prompt, do_sample=True, top_k=50, max_new_tokens=2, return_dict_in_generate=True,
                         output_scores=True, logits_processor=LogitsProcessorList([TopKLogitsWarper(top_k=2)]))
    assert int(core.isfinite(out.scores[0]).sum()) == 2


def test_generation_config_priority(model):
    """kwargs > model.generation_config > defaults; the model's config object is left untouched."""
    prompt = core.tensor([[5, 6, 7]])
    model.generation_config.max_new_tokens = 3
    try:
        assert model.generate(prompt).shape[1] == 6
        assert model.generate(prompt, max_new_tokens=5).shape[1] == 8
    finally:
        model.generation_config.max_new_tokens = None
    assert model.generation_config.max_new_tokens is None
    with pytest.warns(UserWarning, match="max_length"):
        assert model.generate(prompt).shape[1] == 23  # default max_length 20 new tokens


def test_errors(model):
    prompt = core.tensor([[5, 6, 7]])
    with pytest.raises(ValueError, match="max_length"):
        model.generate(prompt, max_length=3)
    with pytest.raises(ValueError, match="num_return_sequences"):
        model.generate(prompt, max_new_tokens=2, num_return_sequences=2)
    with pytest.raises(NotImplementedError, match="custom_generate"):
        model.generate(prompt, max_new_tokens=2, custom_generate="some/repo")


def test_right_padding_warns(model, caplog):
    with caplog.at_level("WARNING"):
        model.generate(core.tensor([[5, 6, 0], [5, 6, 7]]), attention_mask=core.tensor([[1, 1, 0], [1, 1, 1]]),
                       max_new_tokens=1, pad_token_id=0)
    assert "right-padding was detected" in caplog.text


def test_user_cache_is_continued(model):
    """Generating from a cache that already holds the prompt's prefix gives the same tokens."""
    record = RECORDS["greedy_single"]
    prompt = core.tensor(record["input_ids"])
    cache = DynamicCache()
    with core.no_grad():
        model(input_ids=prompt[:, :4], past_key_values=cache, use_cache=True)
    out = model.generate(prompt, past_key_values=cache, **record["kwargs"])
    assert out.tolist() == record["sequences"]
    assert cache.get_seq_length() == out.shape[1] - 1


def test_generating_in_two_calls_through_the_cache_equals_one_call_with_padding(model):
    """HF's GenerationTesterMixin check: positions come from the padding mask (a token's position
    is the number of attended tokens before it), so continuing from a cache, with the mask
    extended by ones, places the new tokens where one longer call would."""
    ids = core.tensor([[5, 6, 0, 0], [5, 6, 7, 0], [3, 4, 5, 6]])
    mask = core.tensor([[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]])
    kwargs = dict(do_sample=False, return_dict_in_generate=True, output_scores=True, pad_token_id=0)
    once = model.generate(ids, attention_mask=mask, max_new_tokens=4, **kwargs)
    first = model.generate(ids, attention_mask=mask, max_new_tokens=3, **kwargs)
    mask = core.cat([mask, core.ones((3, 3), dtype=mask.dtype)], dim=1)
    second = model.generate(first.sequences, attention_mask=mask, past_key_values=first.past_key_values,
                            max_new_tokens=1, **kwargs)
    assert second.sequences.tolist() == once.sequences.tolist()
    np.testing.assert_allclose(second.scores[0].numpy(), once.scores[3].numpy(), rtol=1e-5, atol=1e-5)


def test_static_cache_generation(model):
    record = RECORDS["greedy_batch_two_eos"]
    out = model.generate(core.tensor(record["input_ids"]), attention_mask=core.tensor(record["attention_mask"]),
                         cache_implementation="static", return_dict_in_generate=True, **record["kwargs"])
    assert out.sequences.tolist() == record["sequences"]
    assert isinstance(out.past_key_values, StaticCache)


def test_max_length_stopping_criteria_only(model):
    out = model.generate(core.tensor([[1, 2]]), max_new_tokens=3,
                         stopping_criteria=StoppingCriteriaList([MaxLengthCriteria(4)]))
    assert out.shape[1] == 4
