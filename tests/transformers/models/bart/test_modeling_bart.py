"""Parity of BART, mBART and Marian with the outputs HF transformers recorded.

The fixtures (tests/fixtures/bart/<case>/, made by tests/fixtures/make_bart_fixtures.py) hold
a tiny checkpoint saved by HF per case and HF's logits, losses and generations on a
right-padded batch. Logits are compared with eager and with sdpa attention.
"""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp import transformers
from mindnlp.core.serialization import load_safetensors

from mindnlp.transformers.cache_utils import StaticCache

from ..seq2seq_parity import (Seq2SeqCase, assert_close, check_compiled_steps, check_generate_matches_hf,
                              check_lm_logits_and_loss, compiled_for_generation)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "bart")
CASES = {
    "bart": ("Bart", "BartForConditionalGeneration"),
    "mbart": ("MBart", "MBartForConditionalGeneration"),
    "marian": ("Marian", "MarianMTModel"),
    "marian_separate": ("Marian", "MarianMTModel"),
}


class Case(Seq2SeqCase):
    def __init__(self, name):
        super().__init__(FIXTURES, name)
        self.prefix, self.lm_class = CASES[name]

    def load(self, class_name=None, attn_implementation="sdpa", directory=None):
        cls = getattr(transformers, class_name or self.lm_class)
        return cls.from_pretrained(directory or os.path.join(self.dir, "model"),
                                   attn_implementation=attn_implementation)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    return Case(request.param)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_lm_logits_and_loss(case, attn):
    check_lm_logits_and_loss(case, attn)


def test_embeddings_are_tied_as_hf_ties_them(case):
    model = case.load()
    shared = case.name != "marian_separate"
    encoder, decoder = model.model.encoder.embed_tokens, model.model.decoder.embed_tokens
    assert (encoder.weight is decoder.weight) == shared
    assert model.lm_head.weight is (model.model.shared.weight if shared else decoder.weight)
    assert model.lm_head.weight.shape[0] == model.final_logits_bias.shape[-1]


def test_base_and_causal_models(case):
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        hidden = case.load(f"{case.prefix}Model")(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids,
                                                   decoder_attention_mask=dec_mask).last_hidden_state
        assert_close(hidden, case.expected["model_hidden"], f"{case.name} base model")
        if "causal_logits" not in case.expected:
            return
        causal = case.load(f"{case.prefix}ForCausalLM")
        causal.model.decoder.embed_tokens.weight.copy_(case.load().model.decoder.embed_tokens.weight)
        assert causal.lm_head.weight is causal.model.decoder.embed_tokens.weight
        logits = causal(input_ids=dec_ids, attention_mask=dec_mask).logits
    assert_close(logits, case.expected["causal_logits"], f"{case.name} causal LM")


def test_task_heads(case):
    if case.prefix == "Marian":
        pytest.skip("Marian has no classification heads")
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        seq_cls = case.with_heads(case.load(f"{case.prefix}ForSequenceClassification", "eager")).eval()
        assert_close(seq_cls(input_ids=ids, attention_mask=mask).logits, case.expected["seq_cls_logits"],
                     f"{case.name} sequence classification")
        qa = case.with_heads(case.load(f"{case.prefix}ForQuestionAnswering", "eager")).eval()
        out = qa(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids, decoder_attention_mask=dec_mask)
    assert_close(out.start_logits, case.expected["qa_start_logits"], f"{case.name} qa start")
    assert_close(out.end_logits, case.expected["qa_end_logits"], f"{case.name} qa end")


def test_generate_matches_hf(case):
    model = case.load()
    for name in case.info["generate"]:
        check_generate_matches_hf(case, model, name)


def test_compiled_generation_matches_hf(case):
    """HF's compiled-generation recipe (static caches, forward under core.compile): greedy
    decoding and beam search replay one graph per step shape and give HF's ids and scores."""
    model = case.load().eval()
    compiled = compiled_for_generation(model)
    for name in case.info["generate"]:
        out = check_generate_matches_hf(case, model, name)
        assert isinstance(out.past_key_values.cross_attention_cache, StaticCache)
    check_compiled_steps(compiled)


def test_compiled_generation_continues_a_masked_prefix_and_samples_as_eager():
    """A decoder prefix with its attention mask (padded to the static cache's length, one shape
    for every step) and sampling (drawn outside the compiled forward) give eager's ids."""
    case = Case("bart")
    eager, model = case.load().eval(), case.load().eval()
    compiled = compiled_for_generation(model)
    ids, mask, _, _ = case.inputs()
    prefix = core.tensor([[2, 5, 6]] * ids.shape[0])
    settings = dict(attention_mask=mask, max_new_tokens=6, decoder_input_ids=prefix,
                    decoder_attention_mask=core.ones_like(prefix))
    assert model.generate(ids, **settings).tolist() == eager.generate(ids, **settings).tolist()
    for seed in (0, 1):
        core.manual_seed(seed)
        want = eager.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=True, top_k=5)
        core.manual_seed(seed)
        assert model.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=True, top_k=5).tolist() == \
            want.tolist()
    check_compiled_steps(compiled)
    assert len(compiled.graphs) == 2    # a step with the decoder's mask, a step without


def test_generate_without_cache_matches_with_cache(case):
    model = case.load()
    ids, mask, _, _ = case.inputs()
    for settings in (dict(max_new_tokens=6), dict(max_new_tokens=6, num_beams=3, num_return_sequences=2)):
        with_cache = model.generate(ids, attention_mask=mask, **settings)
        without_cache = model.generate(ids, attention_mask=mask, use_cache=False, **settings)
        assert with_cache.tolist() == without_cache.tolist()


def test_saved_checkpoint_has_hf_keys_and_reloads(case, tmp_path):
    model = case.load()
    model.save_pretrained(tmp_path)
    assert sorted(load_safetensors(os.path.join(tmp_path, "model.safetensors"))) == case.info["keys"]
    reloaded = case.load(directory=str(tmp_path))
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        logits = reloaded(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids,
                          decoder_attention_mask=dec_mask).logits
    assert_close(logits, case.expected["lm_logits"], f"{case.name} reloaded")


def test_auto_classes_pick_the_family(case):
    directory = os.path.join(case.dir, "model")
    config = transformers.AutoConfig.from_pretrained(directory)
    assert type(config).__name__ == f"{case.prefix}Config"
    assert type(transformers.AutoModelForSeq2SeqLM.from_pretrained(directory)).__name__ == case.lm_class
    assert type(transformers.AutoModel.from_config(config)).__name__ == f"{case.prefix}Model"
    assert type(transformers.AutoModelForCausalLM.from_config(config)).__name__ == f"{case.prefix}ForCausalLM"


def test_shift_tokens_right():
    from mindnlp.transformers.models.bart.modeling_bart import shift_tokens_right
    from mindnlp.transformers.models.mbart.modeling_mbart import shift_tokens_right as mbart_shift

    labels = core.tensor([[71, 82, 18, 33, 2, 1, 1], [68, 34, 26, 58, 30, 82, 2]])
    assert shift_tokens_right(labels, 1, 2).tolist() == [[2, 71, 82, 18, 33, 2, 1], [2, 68, 34, 26, 58, 30, 82]]
    # mBART moves each row's language code (its last non-pad token) to the front.
    labels = core.tensor([[71, 82, 2, 250, -100, -100], [68, 34, 26, 2, 250, 1]])
    assert mbart_shift(labels, 1).tolist() == [[250, 71, 82, 2, 250, 1], [250, 68, 34, 26, 2, 250]]


def test_marian_positions_are_sinusoids_and_not_saved(tmp_path):
    config = transformers.MarianConfig(vocab_size=30, d_model=6, encoder_layers=1, decoder_layers=1,
                                       encoder_ffn_dim=8, decoder_ffn_dim=8, encoder_attention_heads=2,
                                       decoder_attention_heads=2, max_position_embeddings=10, pad_token_id=29,
                                       decoder_start_token_id=29)
    model = transformers.MarianMTModel(config)
    table = model.model.encoder.embed_positions.weight
    assert not table.requires_grad
    position, column = 3, 1  # column 1 is the sine of the second frequency, column 4 its cosine
    angle = position / 10000 ** (2 / 6)
    assert abs(float(table[position, column]) - np.sin(angle)) < 1e-6
    assert abs(float(table[position, 3 + column]) - np.cos(angle)) < 1e-6
    model.save_pretrained(tmp_path)
    assert not any("embed_positions" in k for k in load_safetensors(os.path.join(tmp_path, "model.safetensors")))
    reloaded = transformers.MarianMTModel.from_pretrained(tmp_path)
    assert core.equal(reloaded.model.decoder.embed_positions.weight, table)


def test_bart_config_defaults_follow_hf():
    config = transformers.BartConfig()
    assert (config.num_labels, config.num_hidden_layers, config.forced_eos_token_id) == (3, 12, 2)
    assert transformers.MBartConfig().num_labels == 2 and transformers.MBartConfig().decoder_start_token_id is None
    marian = transformers.MarianConfig(vocab_size=100, pad_token_id=99, decoder_start_token_id=99)
    assert marian.decoder_vocab_size == 100 and marian.share_encoder_decoder_embeddings


def test_sequence_classification_needs_equal_eos_counts():
    config = transformers.BartConfig(vocab_size=20, d_model=8, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=8,
                                     decoder_ffn_dim=8, encoder_attention_heads=2, decoder_attention_heads=2,
                                     max_position_embeddings=16)
    model = transformers.BartForSequenceClassification(config).eval()
    with pytest.raises(ValueError, match="same number of <eos> tokens"):
        model(input_ids=core.tensor([[0, 5, 2, 2], [0, 5, 6, 2]]))
