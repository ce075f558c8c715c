"""What the encoder-decoder parity tests (T5, BART and its kin) share: a fixture case made by
HF (a tiny checkpoint, HF's outputs on a right-padded batch, the head weights HF drew), the
comparison of arrays that may hold the infinities logits processors write, the check of the
LM logits and loss that every family runs, and a tiny random Marian translator for the tests
of what sits on top of generate (pipelines, the CLI)."""
import json
import os

import numpy as np

from mindnlp import core
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import MarianConfig, MarianMTModel, MarianTokenizer

MARIAN_TOKENIZER = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "bart", "marian_tokenizer", "shared")

ATOL = 1e-4


class Seq2SeqCase:
    """tests/fixtures/<family>/<name>/: model/, expected.npz, expected.json, heads.safetensors.
    Inputs are padded with the fixture's pad_token_id (BART's kin: 1), else 0 (T5)."""

    def __init__(self, fixtures, name):
        self.name = name
        self.dir = os.path.join(fixtures, name)
        with np.load(os.path.join(self.dir, "expected.npz")) as data:
            self.expected = {k: data[k] for k in data.files}
        with open(os.path.join(self.dir, "expected.json"), encoding="utf-8") as fh:
            self.info = json.load(fh)
        self.pad_token_id = self.info.get("pad_token_id", 0)

    def with_heads(self, model):
        """The head weights HF drew when it loaded the checkpoint into this head class."""
        own = model.state_dict()
        with core.no_grad():
            for key, value in load_safetensors(os.path.join(self.dir, "heads.safetensors")).items():
                if key in own:
                    own[key].copy_(value)
        return model

    def padded(self, rows):
        pad = self.pad_token_id
        width = max(len(r) for r in rows)
        return (core.tensor([r + [pad] * (width - len(r)) for r in rows]),
                core.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows]))

    def inputs(self):
        """(input_ids, attention_mask, decoder_input_ids, decoder_attention_mask), right-padded."""
        return (*self.padded(self.info["prompts"]), *self.padded(self.info["decoder_inputs"]))


def assert_close(actual, expected, what, atol=ATOL):
    """max |actual - expected| <= atol, where the infinities processors write must coincide."""
    actual = actual.detach().numpy() if hasattr(actual, "numpy") else np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    infinite = np.isinf(expected)
    assert np.array_equal(np.isinf(actual), infinite), f"{what}: infinities differ"
    assert np.array_equal(actual[infinite], expected[infinite]), f"{what}: infinities differ in sign"
    error = float(np.max(np.abs(actual[~infinite] - expected[~infinite]))) if actual.size else 0.0
    assert error <= atol, f"{what}: max |diff| {error:.3g} > {atol}"


def check_lm_logits_and_loss(case, attn):
    """The LM head's logits on the padded batch and the loss on labels (padding as -100) equal HF's."""
    model = case.load(attn_implementation=attn)
    ids, mask, dec_ids, dec_mask = case.inputs()
    with core.no_grad():
        out = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec_ids, decoder_attention_mask=dec_mask)
        assert_close(out.logits, case.expected["lm_logits"], f"{case.name} logits ({attn})")
        labels = dec_ids.masked_fill(dec_mask == 0, -100)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    assert_close(loss, case.expected["loss"], f"{case.name} loss")


def check_generate_matches_hf(case, model, name):
    """generate() with the fixture's settings `name` gives HF's sequences and scores."""
    ids, mask, _, _ = case.inputs()
    settings = case.info["generate"][name]
    out = model.generate(ids, attention_mask=mask, do_sample=False, return_dict_in_generate=True,
                         output_scores=True, **settings)
    expected = case.expected[f"generate/{name}/sequences"]
    assert out.sequences.tolist() == expected.tolist(), f"{case.name} {name}"
    assert_close(core.stack(list(out.scores), dim=1), case.expected[f"generate/{name}/scores"],
                 f"{case.name} {name} scores")
    if f"generate/{name}/sequences_scores" in case.expected:
        assert_close(out.sequences_scores, case.expected[f"generate/{name}/sequences_scores"],
                     f"{case.name} {name} sequence scores")
    return out


def compiled_for_generation(model):
    """HF's compiled-generation recipe: static caches and the forward under core.compile with
    fullgraph=True (a graph break raises). Returns the compiled forward."""
    model.generation_config.cache_implementation = "static"
    model.forward = core.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    return model.forward


def check_compiled_steps(compiled):
    """No break, and every graph that takes the cache is a decoding step of one new token per
    row: the first decoder call of a generate() allocates the caches and runs eagerly (a call
    without a cache, as Whisper's language detection, is a graph of its own)."""
    assert compiled.breaks == []
    steps = [graph for key, graph in zip(compiled.guards(), compiled.graphs)
             if "EncoderDecoderCache" in repr(key)]
    assert steps
    for graph in steps:
        assert graph.slots[graph.inputs[0]].shape[1:] == (1,)


def tiny_marian_translator():
    """(model, tokenizer): one-layer Marian weights drawn wide (init_std 0.5, seeded) so that
    generations vary, over the fixture's shared sentencepiece tokenizer."""
    tokenizer = MarianTokenizer.from_pretrained(MARIAN_TOKENIZER)
    core.manual_seed(0)
    config = MarianConfig(vocab_size=tokenizer.vocab_size, d_model=16, encoder_layers=1, decoder_layers=1,
                          encoder_ffn_dim=16, decoder_ffn_dim=16, encoder_attention_heads=2, decoder_attention_heads=2,
                          max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
                          decoder_start_token_id=tokenizer.pad_token_id, eos_token_id=0, forced_eos_token_id=0,
                          init_std=0.5)
    return MarianMTModel(config).eval(), tokenizer
