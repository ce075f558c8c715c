"""Assisted decoding with an assistant of another tokenizer (universal assisted decoding when
greedy, universal speculative decoding when sampling), early exit, the confidence threshold
and HF's candidate-generator helpers.

Greedy results must equal plain greedy decoding whatever the assistant drafts: the model
checks every token. The two tokenizers are the fixture GPT-2 byte-level BPE and Llama BPE
(different vocabularies, different word-start markers).
"""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
from mindnlp.transformers.generation import candidate_generator as cg
from mindnlp.transformers.generation.candidate_generator import (
    AssistantToTargetTranslator, AssistantVocabTranslatorCache, AssistedCandidateGenerator,
    AssistedCandidateGeneratorDifferentTokenizers, PromptLookupCandidateGenerator,
)

TOKENIZERS = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tokenizers")
TEXT = "the cat sat on the mat and the dog"


def _llama(seed, vocab, hidden, layers):
    core.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, bos_token_id=None, eos_token_id=None)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def tokenizers():
    return (AutoTokenizer.from_pretrained(os.path.join(TOKENIZERS, "gpt2_bpe")),
            AutoTokenizer.from_pretrained(os.path.join(TOKENIZERS, "llama_chat")))


@pytest.fixture(scope="module")
def main_model(tokenizers):
    return _llama(0, len(tokenizers[0].get_vocab()), 32, 2)


def _record_drafts(monkeypatch, cls):
    """Wrap cls.get_candidates to record how many tokens each draft proposes."""
    drafts = []
    original = cls.get_candidates

    def recording(self, input_ids, is_first_iteration=False):
        candidates, scores = original(self, input_ids, is_first_iteration)
        drafts.append(candidates.shape[1] - input_ids.shape[1])
        return candidates, scores

    monkeypatch.setattr(cls, "get_candidates", recording)
    return drafts


def test_tokens_diag_as_hf():
    diag = AssistedCandidateGeneratorDifferentTokenizers._get_tokens_diag
    assert diag(np.array([[1, 2, 3]]), np.array([[4, 5, 6]])) == (None, None, None)
    for prompt_plus_new in ([[1, 2, 3, 4, 5]], [[2, 3, 4, 5]]):
        length, new_only, discrepancy = diag(np.array([[1, 2, 3]]), np.array(prompt_plus_new))
        assert length == 0 and new_only.tolist() == [[4, 5]] and discrepancy.shape == (1, 0)
    length, new_only, discrepancy = diag(np.array([[1, 2, 3]]), np.array([[1, 2, 3]]))
    assert length == 0 and new_only.shape == (1, 0) and discrepancy.shape == (1, 0)
    # The re-tokenization replaced the prompt's last token (3 -> 7 8) and added 9.
    length, new_only, discrepancy = diag(core.tensor([[1, 2, 3]]), core.tensor([[1, 2, 7, 9]]))
    assert length == 1 and new_only.tolist() == [[9]] and discrepancy.tolist() == [[7]]


def test_longest_diagonal():
    matrix = np.array([[1, 0, 0, 0], [0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1]])
    diags = AssistedCandidateGeneratorDifferentTokenizers._get_longest_diag_dict(matrix, np.argwhere(matrix))
    assert diags == {(0, 0): 4, (1, 3): 1, (2, 0): 2}
    assert AssistedCandidateGeneratorDifferentTokenizers._get_longest_diag_index(matrix) == ((0, 0), 4)


def test_universal_assisted_decoding_equals_greedy(tokenizers, main_model, monkeypatch):
    target, assistant = tokenizers
    ids = target(TEXT, return_tensors="pt")["input_ids"]
    plain = main_model.generate(ids, max_new_tokens=20, do_sample=False)
    drafts = _record_drafts(monkeypatch, AssistedCandidateGeneratorDifferentTokenizers)
    small = _llama(1, len(assistant.get_vocab()), 16, 1)
    assisted = main_model.generate(ids, max_new_tokens=20, do_sample=False, assistant_model=small,
                                   tokenizer=target, assistant_tokenizer=assistant)
    assert assisted.tolist() == plain.tolist()
    assert sum(drafts) > 0                       # the assistant's drafts reached the model


def test_universal_speculative_decoding_prunes_the_assistant_and_keeps_the_model_distribution(
        tokenizers, main_model, monkeypatch):
    target, assistant = tokenizers
    ids = target(TEXT, return_tensors="pt")["input_ids"]
    plain = main_model.generate(ids, max_new_tokens=12, do_sample=False)
    drafts = _record_drafts(monkeypatch, cg.UniversalSpeculativeDecodingGenerator)
    small = _llama(1, len(assistant.get_vocab()), 16, 1)
    core.manual_seed(0)
    # Near-zero temperature: sampling the model alone is greedy decoding, and speculative
    # sampling must keep that.
    sampled = main_model.generate(ids, max_new_tokens=12, do_sample=True, temperature=1e-9, assistant_model=small,
                                  tokenizer=target, assistant_tokenizer=assistant)
    assert sampled.tolist() == plain.tolist()
    assert sum(drafts) > 0
    shared = set(target.get_vocab()) & {token.replace("▁", "Ġ", 1) for token in assistant.get_vocab()}
    assert small.get_output_embeddings().pruned_lm_head.weight.shape[0] == len(shared)
    # A new assistant with the same tokenizers gets its own translator (the cached one pruned `small`).
    other = _llama(2, len(assistant.get_vocab()), 16, 1)
    core.manual_seed(0)
    again = main_model.generate(ids, max_new_tokens=12, do_sample=True, temperature=1e-9, assistant_model=other,
                                tokenizer=target, assistant_tokenizer=assistant)
    assert again.tolist() == plain.tolist()


class _Vocab:
    """A tokenizer stand-in: a vocabulary and no word-start marker."""

    def __init__(self, vocab):
        self.vocab = vocab

    def get_vocab(self):
        return self.vocab

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": []}


def test_translator_maps_ids_and_logits_as_hf():
    translator = AssistantToTargetTranslator(_Vocab({"hello": 0, "world": 1, "foo": 2, "bar": 3}),
                                             _Vocab({"hello": 0, "world": 1, "foo": 2, "baz": 4}),
                                             target_vocab_size=6)
    suppress = translator.SUPPRESS_TOKEN_ID
    assert translator._assistant_to_target_input_ids.tolist() == [0, 1, 2, suppress, suppress]
    assert translator._get_suppress_input_ids().tolist() == [3, 4]
    ids = translator.get_target_ids(core.tensor([[0, 1, 2]]), core.tensor([[0, 1, 2]]), core.tensor([[0, 1, 2, 4]]))
    assert ids.tolist() == [[0, 1, 2, suppress]]
    logits = translator.get_target_logits(core.tensor([[[0.1, 0.2, 0.3, 0.4, -np.inf]]]))
    expected = np.full((1, 1, 6), -np.inf, np.float32)
    expected[0, 0, :3] = [0.1, 0.2, 0.3]
    np.testing.assert_array_equal(logits.numpy(), expected)
    # Assistant ids the model lacks are suppressed in its drafts.
    suppressed = translator.logits_processors(None, core.zeros((1, 5)))
    assert core.isinf(suppressed).tolist() == [[False, False, False, True, True]]


def test_translator_cache_reuses_a_translator_per_tokenizer_pair():
    AssistantVocabTranslatorCache._cache.clear()
    target, assistant = _Vocab({"a": 0}), _Vocab({"a": 0, "b": 1})
    first = AssistantVocabTranslatorCache.get_translator(target, assistant, target_vocab_size=2)
    assert AssistantVocabTranslatorCache.get_translator(target, assistant, target_vocab_size=2) is first
    assert AssistantVocabTranslatorCache.get_translator(_Vocab({"a": 0}), assistant, target_vocab_size=2) is not first
    AssistantVocabTranslatorCache.cleanup()
    assert AssistantVocabTranslatorCache.get_translator(target, assistant, target_vocab_size=2) is first


def test_early_exit_drafts_with_the_first_layers_and_equals_greedy(main_model, monkeypatch):
    ids = core.tensor([[5, 9, 3, 5, 9, 3, 12]])
    plain = main_model.generate(ids, max_new_tokens=12, do_sample=False)
    drafts = _record_drafts(monkeypatch, cg.EarlyExitCandidateGenerator)
    main_model.generation_config.assistant_confidence_threshold = 0.0
    try:
        early = main_model.generate(ids, max_new_tokens=12, do_sample=False, assistant_early_exit=1)
    finally:
        main_model.generation_config.assistant_confidence_threshold = None
    assert early.tolist() == plain.tolist() and sum(drafts) > 0
    assert main_model.model.config.num_hidden_layers == 2      # restored after each draft


def test_confidence_threshold_ends_unsure_drafts(main_model, monkeypatch):
    ids = core.tensor([[5, 9, 3, 5, 9, 3, 12]])
    small = _llama(1, main_model.config.vocab_size, 16, 1)
    small.generation_config.num_assistant_tokens = 5
    drafts = _record_drafts(monkeypatch, AssistedCandidateGenerator)
    for threshold, longest in ((0.0, 5), (0.99, 1)):       # a random model is never 99% sure
        drafts.clear()
        small.generation_config.assistant_confidence_threshold = threshold
        out = main_model.generate(ids, max_new_tokens=10, do_sample=False, assistant_model=small)
        assert out.shape[1] == ids.shape[1] + 10
        assert max(drafts) == longest


@pytest.mark.parametrize("schedule, persisted", [("heuristic", True), ("heuristic_transient", False)])
def test_heuristic_schedule_carries_the_draft_length_over(main_model, schedule, persisted):
    twin = _llama(0, main_model.config.vocab_size, 32, 2)      # same weights: every draft is accepted
    twin.generation_config.update(num_assistant_tokens_schedule=schedule, num_assistant_tokens=2,
                                  assistant_confidence_threshold=0.0)
    main_model.generate(core.tensor([[5, 9, 3, 5]]), max_new_tokens=9, do_sample=False, assistant_model=twin)
    assert (twin.generation_config.num_assistant_tokens > 2) == persisted


def test_confidence_threshold_tuning_follows_hf():
    pytest.importorskip("sklearn")
    small = _llama(1, 64, 16, 1)
    small.generation_config.assistant_confidence_threshold = 0.4
    cases = [([], 0, [0], [0.9], 0.4),
             ([1, 0, 1, 0, 1], 3, [1, 0, 1, 0, 1, 1, 1, 1, 0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], 0.2),
             ([1, 1, 1, 1, 1], 4, [1] * 9, [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], 0.4),
             ([1, 1, 1, 1, 1], 2, [1] * 7 + [0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2], 0.3),
             ([1, 1, 1, 1, 1], 1, [1] * 6 + [0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3], 0.4)]
    for matches, num_matches, expected_matches, expected_probs, expected_threshold in cases:
        generator = AssistedCandidateGenerator(core.tensor([[1, 2]]), small, small.generation_config, {})
        generator.probs = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]
        generator.matches = list(matches)
        generator.update_candidate_strategy(None, core.zeros((1, 6, 64)), num_matches)
        assert generator.matches == expected_matches and generator.probs == expected_probs
        threshold = generator.assistant_generation_config.assistant_confidence_threshold
        assert threshold == pytest.approx(expected_threshold)


def test_prompt_lookup_never_drafts_past_eos():
    ids = core.tensor([[7, 12, 30, 51, 0, 8, 9, 51]])        # 51 was followed by EOS (0) earlier
    generator = PromptLookupCandidateGenerator(eos_token_id=core.tensor([0]), num_output_tokens=4,
                                               max_matching_ngram_size=1)
    assert generator.get_candidates(ids, is_first_iteration=None)[0].shape[-1] == 8
    no_eos = PromptLookupCandidateGenerator(num_output_tokens=4, max_matching_ngram_size=1)
    assert no_eos.get_candidates(ids)[0].tolist() == [[7, 12, 30, 51, 0, 8, 9, 51, 0, 8, 9, 51]]
