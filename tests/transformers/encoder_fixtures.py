"""Reading tests/fixtures/encoders/<family>/ (made by tests/fixtures/make_encoder_fixtures.py).

The encoder families' tests and the pipeline tests share this: the HF checkpoint folder, the
head weights HF initialised per case, the outputs HF computed and, where the fixture has a
tokenizer, HF's encodings of a few texts. The `check_*` methods are the parity checks every
family runs.
"""
import json
import os

import numpy as np

from mindnlp import core
from mindnlp.core.serialization import load_safetensors

ROOT = os.path.join(os.path.dirname(__file__), "..", "fixtures", "encoders")
ATOL = 1e-4
FLOAT_LABELS = {"seq_cls_regression", "seq_cls_multi"}


class EncoderFixtures:
    """One family's fixtures; `load_case` builds our model of a case with HF's head weights."""

    def __init__(self, family):
        self.folder = os.path.join(ROOT, family)
        self.checkpoint = os.path.join(self.folder, "checkpoint")
        with open(os.path.join(self.folder, "expected.json"), encoding="utf-8") as fh:
            self.expected = json.load(fh)
        self.outputs = dict(np.load(os.path.join(self.folder, "outputs.npz")))
        self.heads = load_safetensors(os.path.join(self.folder, "heads.safetensors"))
        self.cases = self.expected["cases"]

    def inputs(self, case="model"):
        inputs = self.expected["inputs"]
        if case.startswith("multiple_choice"):
            return {k: core.tensor([v]) for k, v in inputs.items()}
        return {k: core.tensor(v) for k, v in inputs.items()}

    def labels(self, case):
        labels = {}
        for key, value in self.cases[case]["labels"].items():
            dtype = core.float32 if key == "labels" and case in FLOAT_LABELS else core.long
            labels[key] = core.tensor(value, dtype=dtype)
        return labels

    def head_weights(self, case):
        return {key.split("/", 1)[1]: value for key, value in self.heads.items() if key.startswith(case + "/")}

    def load_case(self, module, case):
        """(model, loading info) of `case`: its class from `module`, loaded from the checkpoint with
        the case's config overrides, then given the head weights HF initialised."""
        spec = self.cases[case]
        cls = getattr(module, spec["class"])
        overrides = dict(spec["overrides"])
        if "id2label" in overrides:  # JSON turned the label ids into strings
            overrides["id2label"] = {int(k): v for k, v in overrides["id2label"].items()}
        model, info = cls.from_pretrained(self.checkpoint, output_loading_info=True, **overrides)
        head = self.head_weights(case)
        if head:
            result = model.load_state_dict(head, strict=False)
            assert not result.unexpected_keys, result.unexpected_keys
        return model, info

    def check_case(self, module, case):
        """Our class of `case` reports HF's missing/unexpected keys and matches HF's outputs and loss."""
        model, info = self.load_case(module, case)
        spec = self.cases[case]
        assert type(model).__name__ == spec["class"]
        assert sorted(info["missing_keys"]) == spec["missing_keys"]
        assert sorted(info["unexpected_keys"]) == spec["unexpected_keys"]
        assert self.max_error(case, model) <= ATOL

    def check_inputs_embeds(self, module):
        """The base model given embeddings instead of ids gives HF's hidden states."""
        model, _ = self.load_case(module, "model")
        inputs = self.inputs()
        with core.no_grad():
            embeds = model.get_input_embeddings()(inputs.pop("input_ids"))
            hidden = model(inputs_embeds=embeds, attention_mask=inputs["attention_mask"]).last_hidden_state
        np.testing.assert_allclose(hidden.numpy(), self.outputs["model_inputs_embeds/last_hidden_state"], atol=ATOL)

    def check_save_round_trip(self, module, case, folder):
        """The files save_pretrained writes load back into a model with the same outputs; the
        masked-LM model (the class the checkpoint was saved from) writes HF's parameter names."""
        model, _ = self.load_case(module, case)
        model.save_pretrained(folder)
        reloaded = type(model).from_pretrained(folder)
        with core.no_grad():
            want, got = (m(**self.inputs(case))[0] for m in (model.eval(), reloaded.eval()))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        if case == "masked_lm":
            saved = set(load_safetensors(os.path.join(folder, "model.safetensors")))
            hf = set(load_safetensors(os.path.join(self.checkpoint, "model.safetensors")))
            assert saved == hf, sorted(saved ^ hf)

    def check_tokenizer(self, tokenizer_class):
        """The checkpoint's tokenizer (through AutoTokenizer and by class) encodes and decodes as HF's did."""
        from mindnlp.transformers import AutoTokenizer

        recorded = self.expected["tokenizer"]
        auto = AutoTokenizer.from_pretrained(self.checkpoint)
        assert type(auto) is tokenizer_class
        assert tokenizer_class.__name__.removesuffix("Fast") == recorded["class"]
        for tokenizer in (auto, tokenizer_class.from_pretrained(self.checkpoint)):
            for record in recorded["encodings"]:
                encoded = tokenizer(record["text"], record["pair"])
                assert {k: list(v) for k, v in encoded.items()} == record["encoding"], record["text"]
                assert tokenizer.convert_ids_to_tokens(encoded["input_ids"]) == record["tokens"]
                assert tokenizer.decode(encoded["input_ids"], skip_special_tokens=True) == record["decoded"]

    def recorded(self, case):
        """{output name: array} HF recorded for `case` (tuples as name/<i>)."""
        prefix = case + "/"
        return {key[len(prefix):]: value for key, value in self.outputs.items() if key.startswith(prefix)}

    def max_error(self, case, model):
        """Largest |ours - HF| over every output (and the loss) of `case`; fails on a missing output."""
        spec = self.cases[case]
        with core.no_grad():
            outputs = model(**self.inputs(case), **spec["call"])
            with_labels = model(**self.inputs(case), **self.labels(case)) if spec["labels"] else None
        worst = 0.0
        for name, want in self.recorded(case).items():
            if name == "loss":
                got = with_labels.loss
            elif name.count("/"):
                field, index = name.split("/")
                got = outputs[field][int(index)]
            else:
                got = outputs[name]
            assert got is not None, f"{case}: no {name}"
            assert tuple(got.shape) == want.shape, f"{case}/{name}: shape {tuple(got.shape)} != {want.shape}"
            worst = max(worst, float(np.abs(got.numpy().astype(np.float64) - want).max()))
        return worst


def check_loss_reaches_every_parameter(model, inputs):
    """In training mode, backward from the loss gives every parameter a finite gradient that is not all zero.

    A multiple-choice head's bias is the exception: it adds the same number to every choice's
    score, which the softmax over choices cancels, so its gradient is zero up to rounding.
    """
    model.train()
    model(**inputs).loss.backward()
    missing = [name for name, p in model.named_parameters() if p.grad is None]
    assert not missing, f"no gradient reached {missing}"
    cancelled = {"classifier.bias"} if type(model).__name__.endswith("ForMultipleChoice") else set()
    for name, p in model.named_parameters():
        grad = p.grad.numpy()
        assert np.isfinite(grad).all(), name
        if name in cancelled:
            assert np.abs(grad).max() < 1e-6, f"{name}: the softmax over choices should cancel its gradient"
        else:
            assert np.abs(grad).max() > 0, f"zero gradient for {name}"
