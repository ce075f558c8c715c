"""Parity of T5 v1.0, T5 v1.1 and mT5 with the outputs HF transformers recorded.

The fixtures (tests/fixtures/t5/<case>/, made by tests/fixtures/make_t5_fixtures.py) hold a
tiny checkpoint saved by HF per case and HF's logits, losses and generations on a
right-padded batch. Logits are compared with eager and with sdpa attention.
"""
import os

import pytest

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp import transformers

from mindnlp.transformers.cache_utils import StaticCache

from ..seq2seq_parity import (Seq2SeqCase, assert_close, check_compiled_steps, check_generate_matches_hf,
                              check_lm_logits_and_loss, compiled_for_generation)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "t5")
CASES = {"t5_v1_0": "T5", "t5_v1_1": "T5", "mt5": "MT5"}


class Case(Seq2SeqCase):
    def __init__(self, name):
        super().__init__(FIXTURES, name)
        self.prefix = CASES[name]

    def load(self, head="ForConditionalGeneration", attn_implementation="sdpa", directory=None):
        cls = getattr(transformers, f"{self.prefix}{head}")
        return cls.from_pretrained(directory or os.path.join(self.dir, "model"),
                                   attn_implementation=attn_implementation)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    return Case(request.param)


@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_lm_logits_and_loss(case, attn):
    check_lm_logits_and_loss(case, attn)


def test_head_is_tied_only_for_v1_0(case):
    model = case.load()
    tied = model.lm_head.weight is model.shared.weight
    assert tied == (case.name == "t5_v1_0")
    assert model.encoder.embed_tokens.weight is model.shared.weight
    assert model.decoder.embed_tokens.weight is model.shared.weight
    assert model.config.scale_decoder_outputs == (case.name == "t5_v1_0")


def test_base_and_encoder_models(case):
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        hidden = case.load("Model")(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids,
                                    decoder_attention_mask=dec_mask).last_hidden_state
        assert_close(hidden, case.expected["model_hidden"], f"{case.name} T5Model")
        encoded = case.load("EncoderModel")(input_ids=ids, attention_mask=mask).last_hidden_state
    assert_close(encoded, case.expected["encoder_hidden"], f"{case.name} encoder")


def test_task_heads(case):
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        seq_cls = case.with_heads(case.load("ForSequenceClassification", "eager")).eval()
        assert_close(seq_cls(input_ids=ids, attention_mask=mask).logits, case.expected["seq_cls_logits"],
                     f"{case.name} sequence classification")
        token_cls = case.with_heads(case.load("ForTokenClassification", "eager")).eval()
        assert_close(token_cls(input_ids=ids, attention_mask=mask).logits, case.expected["token_cls_logits"],
                     f"{case.name} token classification")
        qa = case.with_heads(case.load("ForQuestionAnswering", "eager")).eval()
        out = qa(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids, decoder_attention_mask=dec_mask)
    assert_close(out.start_logits, case.expected["qa_start_logits"], f"{case.name} qa start")
    assert_close(out.end_logits, case.expected["qa_end_logits"], f"{case.name} qa end")


@pytest.mark.parametrize("name", ["greedy", "greedy_ngram_forced_eos", "greedy_encoder_ngram_forced_bos", "beam",
                                  "beam_never"])
def test_generate_matches_hf(case, name):
    out = check_generate_matches_hf(case, case.load(), name)
    type_name = "GenerateBeamEncoderDecoderOutput" if "beam" in name else "GenerateEncoderDecoderOutput"
    assert type(out).__name__ == type_name


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", ["greedy", "beam", "beam_never"])
def test_static_cache_generation_matches_hf(case, name, compiled):
    """Static caches give HF's ids and scores, eager and under HF's compiled-generation recipe
    (every decoding step after the first replays one graph). The position bias is looked up
    at `cache_position`: a static cache's keys fill a buffer of fixed length."""
    model = case.load().eval()
    if compiled:
        step = compiled_for_generation(model)
    else:
        model.generation_config.cache_implementation = "static"
    out = check_generate_matches_hf(case, model, name)
    assert isinstance(out.past_key_values.self_attention_cache, StaticCache)
    if compiled:
        check_compiled_steps(step)


@pytest.mark.parametrize("settings", [dict(max_new_tokens=6), dict(max_new_tokens=6, num_beams=3,
                                                                   num_return_sequences=2)])
def test_generate_without_cache_matches_with_cache(case, settings):
    model = case.load()
    ids, mask, _, _ = case.inputs()
    with_cache = model.generate(ids, attention_mask=mask, **settings)
    without_cache = model.generate(ids, attention_mask=mask, use_cache=False, **settings)
    assert with_cache.tolist() == without_cache.tolist()


def test_generate_from_encoder_outputs_and_decoder_prefix(case):
    """Encoding once by hand, or continuing given decoder ids, gives generate()'s own tokens."""
    model = case.load()
    ids, mask, _, _ = case.inputs()
    expected = case.expected["generate/greedy/sequences"]
    encoder_outputs = model.get_encoder()(input_ids=ids, attention_mask=mask)
    out = model.generate(encoder_outputs=encoder_outputs, attention_mask=mask, max_new_tokens=10)
    assert out.tolist() == expected.tolist()
    prefix = core.tensor(expected[:, :4])
    out = model.generate(ids, attention_mask=mask, decoder_input_ids=prefix, max_new_tokens=7)
    assert out.tolist() == expected[:, :11].tolist()


def test_generate_dict_outputs(case):
    model = case.load()
    ids, mask, _, _ = case.inputs()
    out = model.generate(ids, attention_mask=mask, max_new_tokens=3, return_dict_in_generate=True,
                         output_attentions=True, output_hidden_states=True)
    decoder_layers = model.config.num_decoder_layers
    assert len(out.encoder_attentions) == model.config.num_layers
    assert len(out.encoder_hidden_states) == model.config.num_layers + 1
    assert len(out.decoder_attentions) == len(out.cross_attentions) == len(out.decoder_hidden_states) == 3
    assert len(out.cross_attentions[0]) == decoder_layers
    assert tuple(out.cross_attentions[1][0].shape) == (3, model.config.num_heads, 1, ids.shape[1])
    assert tuple(out.decoder_attentions[1][0].shape) == (3, model.config.num_heads, 1, 2)


def test_saved_checkpoint_reloads_with_hf_keys(case, tmp_path):
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
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(directory)
    assert type(model).__name__ == f"{case.prefix}ForConditionalGeneration"
    assert type(transformers.AutoModel.from_config(config)).__name__ == f"{case.prefix}Model"


def test_relative_position_buckets_match_hf_table():
    """Buckets at every distance within reach of the fixtures' settings and beyond them."""
    from mindnlp.transformers.models.t5.modeling_t5 import relative_position_bucket

    distances = core.arange(-40, 41)
    bidirectional = relative_position_bucket(distances, True, num_buckets=8, max_distance=20).tolist()
    causal = relative_position_bucket(distances, False, num_buckets=8, max_distance=20).tolist()
    # Mesh TensorFlow's scheme, written out: 4 buckets per direction (2 exact, 2 log-spaced to 20)...
    assert bidirectional[40 - 40:40 - 19] == [3] * 21
    assert bidirectional[40 - 2:40 + 3] == [2, 1, 0, 5, 6]
    assert bidirectional[40 + 20:] == [7] * 21
    # ...and a decoder's 8 buckets for looking back only (4 exact, 4 log-spaced).
    assert causal[40:] == [0] * 41
    assert causal[40 - 4:40 + 1] == [4, 3, 2, 1, 0]
    assert causal[:40 - 19] == [7] * 21


@pytest.mark.parametrize("num_buckets, max_distance", [(32, 128), (8, 20), (32, 8)])
def test_buckets_read_from_a_table_are_the_computed_ones(num_buckets, max_distance):
    """The table of the distances up to max_distance gives every distance's bucket, farther ones
    included (max_distance below num_buckets: computed, no saturation to rely on)."""
    from mindnlp.transformers.modeling_position_buckets import _buckets_of, relative_position_bucket

    distances = core.arange(-300, 301)
    for bidirectional in (True, False):
        options = dict(bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
        assert core.equal(_buckets_of(distances, **options), relative_position_bucket(distances, **options))


@pytest.mark.parametrize("query_length, key_length, past_length", [(7, 7, 0), (1, 9, 8), (3, 10, 7), (5, 2, 0)])
def test_bucket_bias_is_the_pairwise_lookup_laid_out_heads_first(query_length, key_length, past_length):
    """The bias built from one bucket per distance equals looking up every (query, key) pair, and
    so does the bias of queries placed by a position tensor (a static cache's decoding step)."""
    from mindnlp.transformers.modeling_position_buckets import bucket_bias, bucket_bias_at, relative_position_bucket

    core.manual_seed(0)
    table = core.nn.Embedding(8, 3)
    options = dict(bidirectional=past_length == 0, num_buckets=8, max_distance=20)
    bias = bucket_bias(table, query_length, key_length, past_length, **options)
    queries = core.arange(past_length, past_length + query_length)[:, None]
    pairwise = table(relative_position_bucket(core.arange(key_length)[None, :] - queries, **options))
    assert tuple(bias.shape) == (1, 3, query_length, key_length) and bias.is_contiguous()
    assert core.equal(bias, pairwise.permute(2, 0, 1).unsqueeze(0))
    at_positions = bucket_bias_at(table, core.arange(past_length, past_length + query_length), key_length, **options)
    assert core.equal(at_positions, bias)


def test_shift_right_and_its_errors():
    config = transformers.T5Config(vocab_size=20, d_model=8, d_kv=4, d_ff=8, num_layers=1, num_heads=2,
                                   decoder_start_token_id=0)
    model = transformers.T5Model(config)
    labels = core.tensor([[5, 6, -100, -100], [7, 8, 9, 1]])
    assert model._shift_right(labels).tolist() == [[0, 5, 6, 0], [0, 7, 8, 9]]
    del model.config.decoder_start_token_id
    with pytest.raises(ValueError, match="decoder_start_token_id"):
        model._shift_right(labels)


def test_config_derives_the_feed_forward_and_rejects_bad_ones():
    config = transformers.T5Config(feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    assert (config.dense_act_fn, config.is_gated_act, config.scale_decoder_outputs) == ("gelu_new", True, False)
    assert config.tie_word_embeddings is True
    config = transformers.T5Config(feed_forward_proj="gated-silu")
    assert (config.dense_act_fn, config.is_gated_act, config.scale_decoder_outputs) == ("silu", True, True)
    with pytest.raises(ValueError, match="feed_forward_proj"):
        transformers.T5Config(feed_forward_proj="gated-gelu-new")
    assert transformers.MT5Config().model_type == "mt5"
    assert transformers.MT5Config(tie_word_embeddings=True).scale_decoder_outputs is False


def test_generate_refuses_what_it_cannot_do():
    config = transformers.T5Config(vocab_size=20, d_model=8, d_kv=4, d_ff=8, num_layers=1, num_heads=2)
    model = transformers.T5ForConditionalGeneration(config).eval()
    ids = core.tensor([[5, 6, 1]])
    with pytest.raises(ValueError, match="decoder_start_token_id"):
        model.generate(ids, max_new_tokens=2)
    with pytest.raises(ValueError, match="`decoder_start_token_id` expected to have length 1"):
        model.generate(ids, max_new_tokens=2, decoder_start_token_id=[0, 0])


def test_encoder_decoder_cache_reuses_cross_attention_keys():
    """The cross-attention keys are projected at the first step only; later steps read them back."""
    config = transformers.T5Config(vocab_size=20, d_model=8, d_kv=4, d_ff=8, num_layers=2, num_heads=2,
                                   decoder_start_token_id=0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    ids = core.tensor([[5, 6, 7, 1]])
    with core.no_grad():
        first = model(input_ids=ids, decoder_input_ids=core.tensor([[0]]), use_cache=True)
        cache = first.past_key_values
        assert isinstance(cache, transformers.EncoderDecoderCache)
        assert cache.is_updated == {0: True, 1: True}
        assert cache.cross_attention_cache.get_seq_length() == 4
        step = model(encoder_outputs=(first.encoder_last_hidden_state,), decoder_input_ids=core.tensor([[3]]),
                     past_key_values=cache, use_cache=True)
        full = model(input_ids=ids, decoder_input_ids=core.tensor([[0, 3]]), use_cache=False)
    assert cache.get_seq_length() == 2 and cache.cross_attention_cache.get_seq_length() == 4
    assert_close(step.logits[:, -1], full.logits[:, -1].numpy(), "cached step")
