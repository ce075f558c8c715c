"""Assisted decoding: a draft (from an assistant model or the prompt) checked by the model.

Greedy results must be plain greedy decoding's, token for token and score for score, whoever
drafts; how many forward passes the model needs shows whether drafts are accepted; sampling
keeps the model's distribution through speculative sampling.
"""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import LlamaConfig, LlamaForCausalLM, TextIteratorStreamer
from mindnlp.transformers.generation.candidate_generator import (AssistedCandidateGenerator,
                                                                 PromptLookupCandidateGenerator)
from mindnlp.transformers.generation.utils import _speculative_sampling

PROMPT = [[1, 5, 9, 3, 5, 9, 3, 5, 9, 3, 12]]


def _llama(seed, hidden, layers, vocab=64, **config):
    core.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, bos_token_id=0, eos_token_id=None, **config)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def models():
    return _llama(0, 32, 2), _llama(1, 16, 1)




@pytest.mark.parametrize("drafter", ["assistant", "same_model", "prompt_lookup"])
def test_greedy_assisted_decoding_equals_greedy(models, drafter):
    main, small = models
    ids = core.tensor(PROMPT)
    plain = main.generate(ids, max_new_tokens=15, do_sample=False, return_dict_in_generate=True, output_scores=True,
                          output_logits=True)
    extra = {"assistant": {"assistant_model": small}, "same_model": {"assistant_model": main},
             "prompt_lookup": {"prompt_lookup_num_tokens": 3}}[drafter]
    assisted = main.generate(ids, max_new_tokens=15, do_sample=False, return_dict_in_generate=True,
                             output_scores=True, output_logits=True, **extra)
    assert assisted.sequences.tolist() == plain.sequences.tolist()
    assert len(assisted.scores) == len(assisted.logits) == 15
    for ours, expected in zip(assisted.scores + assisted.logits, plain.scores + plain.logits):
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_a_draft_the_model_agrees_with_costs_one_forward(models):
    main, _ = models
    twin = _llama(0, 32, 2)                    # the same weights: every drafted token is accepted
    twin.generation_config.num_assistant_tokens = 5
    # A random model is never confident: without this, drafts would stop after one token.
    twin.generation_config.assistant_confidence_threshold = 0
    calls = []
    handle = main.register_forward_hook(lambda *args: calls.append(1))
    try:
        out = main.generate(core.tensor(PROMPT), max_new_tokens=12, do_sample=False, assistant_model=twin)
    finally:
        handle.remove()
    assert out.shape[1] == len(PROMPT[0]) + 12
    # 12 tokens in two forward passes: each checks a draft of 5 and adds the model's own token.
    assert len(calls) == 2


def test_heuristic_schedule_adapts_the_draft_length(models):
    main, small = models
    small.generation_config.num_assistant_tokens_schedule = "heuristic"
    small.generation_config.num_assistant_tokens = 4
    try:
        generator = AssistedCandidateGenerator(core.tensor(PROMPT), small, main.generation_config, {})
        checked = core.zeros((1, 5, 64))       # the model's scores for a draft of 4 and its own token
        generator.update_candidate_strategy(None, checked, 4)
        assert generator.num_assistant_tokens == 6
        generator.update_candidate_strategy(None, checked, 1)
        assert generator.num_assistant_tokens == 5
    finally:
        small.generation_config.num_assistant_tokens_schedule = "constant"
        small.generation_config.num_assistant_tokens = 20


def test_prompt_lookup_drafts_what_followed_the_last_ngram():
    generator = PromptLookupCandidateGenerator(num_output_tokens=3, max_matching_ngram_size=2, max_length=40)
    ids = core.tensor([[7, 1, 2, 8, 9, 4, 1, 2]])
    candidates, scores = generator.get_candidates(ids)
    assert scores is None and candidates.tolist() == [[7, 1, 2, 8, 9, 4, 1, 2, 8, 9, 4]]
    unmatched, _ = generator.get_candidates(core.tensor([[7, 1, 2, 3]]))
    assert unmatched.tolist() == [[7, 1, 2, 3]]
    near_the_end = PromptLookupCandidateGenerator(num_output_tokens=3, max_matching_ngram_size=2, max_length=10)
    candidates, _ = near_the_end.get_candidates(ids)       # room for 1 draft token + the model's own
    assert candidates.tolist() == [[7, 1, 2, 8, 9, 4, 1, 2, 8]]


def test_prompt_lookup_stops_the_draft_at_a_forbidden_token(models):
    main, _ = models
    ids = core.tensor(PROMPT)
    eos = 9                                     # drafted from the prompt, banned by min_new_tokens
    plain = main.generate(ids, max_new_tokens=10, min_new_tokens=10, eos_token_id=eos, pad_token_id=0,
                          do_sample=False)
    assisted = main.generate(ids, max_new_tokens=10, min_new_tokens=10, eos_token_id=eos, pad_token_id=0,
                             do_sample=False, prompt_lookup_num_tokens=3)
    assert assisted.tolist() == plain.tolist()
    assert eos not in assisted[0, len(PROMPT[0]):].tolist()


def test_sampling_with_an_assistant_is_reproducible_and_within_bounds(models):
    main, small = models
    runs = []
    for _ in range(2):
        core.manual_seed(3)
        runs.append(main.generate(core.tensor(PROMPT), max_new_tokens=12, do_sample=True, top_k=8,
                                  assistant_model=small).tolist())
    assert runs[0] == runs[1] and len(runs[0][0]) == len(PROMPT[0]) + 12
    assert all(0 <= token < 64 for token in runs[0][0])


def test_speculative_sampling_accepts_agreeing_drafts_and_resamples_rejected_ones():
    vocab = 6
    logits = core.tensor(np.log(np.array([[0.1, 0.2, 0.3, 0.2, 0.1, 0.1]] * 4, np.float32)))[None]
    draft = core.tensor([[2, 1, 3]])
    tokens, n_matches = _speculative_sampling(draft, logits[:, :3], 3, logits, False)
    assert n_matches == 3 and tokens[0, :3].tolist() == [2, 1, 3] and tokens.shape == (1, 4)
    # The assistant is sure of token 5 where the model gives it no probability: always rejected,
    # and the replacement comes from max(0, p - q), which excludes token 5.
    model_logits = core.tensor(np.log(np.array([[0.5, 0.5, 1e-30, 1e-30, 1e-30, 1e-30]] * 2, np.float32)))[None]
    assistant_logits = core.tensor(np.log(np.array([[1e-30] * 5 + [1.0]], np.float32)))[None]
    for seed in range(5):
        core.manual_seed(seed)
        tokens, n_matches = _speculative_sampling(core.tensor([[5]]), assistant_logits, 1, model_logits, False)
        assert n_matches == 0 and tokens.shape == (1, 1) and tokens[0, 0].item() in (0, 1)
    assert vocab == logits.shape[-1]


def test_assisted_decoding_streams_every_token(models):
    main, small = models
    streamer = TextIteratorStreamer.__new__(TextIteratorStreamer)
    pieces = []
    streamer.put = lambda value: pieces.append(value.reshape(-1).tolist())
    streamer.end = lambda: None
    out = main.generate(core.tensor(PROMPT), max_new_tokens=9, do_sample=False, assistant_model=small,
                        streamer=streamer)
    assert [token for piece in pieces for token in piece] == out[0].tolist()


def test_assisted_decoding_rejects_what_it_cannot_do(models):
    main, small = models
    with pytest.raises(ValueError, match="batch_size = 1"):
        main.generate(core.tensor(PROMPT * 2), max_new_tokens=3, assistant_model=small)
    with pytest.raises(ValueError, match="beam search"):
        main.generate(core.tensor(PROMPT), max_new_tokens=3, num_beams=2, assistant_model=small)
    # Another vocabulary needs both tokenizers (universal assisted decoding).
    with pytest.raises(ValueError, match="different tokenizers"):
        main.generate(core.tensor(PROMPT), max_new_tokens=3, assistant_model=_llama(2, 16, 1, vocab=70))
