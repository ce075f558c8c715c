"""Assisted decoding for encoder-decoders: the assistant runs its own encoder once and drafts
decoder ids; the model checks them with its cached encoder output. Greedy results must be
plain greedy decoding's, token for token and score for score, with the encoder-decoder
output fields (cross-attentions per generated token) laid out as plain decoding lays them out."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import BartConfig, BartForConditionalGeneration, LlamaConfig, LlamaForCausalLM

PROMPT = [[0, 5, 9, 3, 5, 9, 3, 5, 9, 3, 12, 2]]


def _bart(seed, d_model, layers):
    core.manual_seed(seed)
    config = BartConfig(vocab_size=64, d_model=d_model, encoder_layers=layers, decoder_layers=layers,
                        encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=2 * d_model,
                        decoder_ffn_dim=2 * d_model, max_position_embeddings=64, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, decoder_start_token_id=2, forced_bos_token_id=None, forced_eos_token_id=None)
    return BartForConditionalGeneration(config).eval()


@pytest.fixture(scope="module")
def models():
    return _bart(0, 32, 2), _bart(1, 16, 1)


def _greedy(model, **extra):
    return model.generate(core.tensor(PROMPT), max_new_tokens=12, min_new_tokens=12, do_sample=False,
                          return_dict_in_generate=True, output_scores=True, output_attentions=True, **extra)


@pytest.mark.parametrize("drafter", ["assistant", "same_model", "prompt_lookup"])
def test_greedy_assisted_decoding_equals_greedy(models, drafter):
    main, small = models
    plain = _greedy(main)
    extra = {"assistant": {"assistant_model": small}, "same_model": {"assistant_model": main},
             "prompt_lookup": {"prompt_lookup_num_tokens": 3}}[drafter]
    assisted = _greedy(main, **extra)
    assert type(assisted).__name__ == "GenerateEncoderDecoderOutput"
    assert assisted.sequences.tolist() == plain.sequences.tolist()
    assert len(assisted.scores) == 12
    for ours, expected in zip(assisted.scores, plain.scores):
        np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    assert len(assisted.cross_attentions) == len(plain.cross_attentions) == 12
    for ours, expected in zip(assisted.cross_attentions, plain.cross_attentions):
        for layer_ours, layer_expected in zip(ours, expected):
            assert layer_ours.shape == layer_expected.shape
            np.testing.assert_allclose(layer_ours.numpy(), layer_expected.numpy(), rtol=1e-5, atol=1e-6)


def test_the_assistant_runs_its_encoder_once(models):
    main, small = models
    calls = []
    handle = small.get_encoder().register_forward_hook(lambda *args: calls.append(1))
    try:
        main.generate(core.tensor(PROMPT), max_new_tokens=10, do_sample=False, assistant_model=small)
    finally:
        handle.remove()
    assert calls == [1]


def test_sampling_with_an_encoder_decoder_assistant_keeps_to_the_vocabulary(models):
    main, small = models
    core.manual_seed(3)
    out = main.generate(core.tensor(PROMPT), max_new_tokens=10, do_sample=True, assistant_model=small)
    assert out.shape[0] == 1 and 2 <= out.shape[1] <= 11
    assert int(out.max()) < 64 and int(out[0, 0]) == 2


def test_a_decoder_only_assistant_is_refused_for_an_encoder_decoder(models):
    main, _ = models
    core.manual_seed(0)
    decoder_only = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                                num_hidden_layers=1, num_attention_heads=2)).eval()
    with pytest.raises(ValueError, match="encoder-decoder assistant"):
        main.generate(core.tensor(PROMPT), max_new_tokens=4, assistant_model=decoder_only)


def test_early_exit_is_refused_for_an_encoder_decoder(models):
    main, _ = models
    with pytest.raises(NotImplementedError, match="assistant_early_exit"):
        main.generate(core.tensor(PROMPT), max_new_tokens=4, assistant_early_exit=1)


def test_a_draft_the_model_agrees_with_costs_one_decoder_forward(models):
    main, _ = models
    twin = _bart(0, 32, 2)                     # the same weights: every drafted token is accepted
    twin.generation_config.num_assistant_tokens = 5
    twin.generation_config.assistant_confidence_threshold = 0
    calls = []
    handle = main.get_decoder().register_forward_hook(lambda *args: calls.append(1))
    try:
        out = main.generate(core.tensor(PROMPT), max_new_tokens=12, min_new_tokens=12, do_sample=False,
                            assistant_model=twin)
    finally:
        handle.remove()
    assert out.shape[1] == 13
    # Drafts of 5, 7 (after a fully accepted draft the schedule adds two) cover the 12 tokens.
    assert len(calls) <= 3
