"""The base models the tests adapt, with the inputs the fixtures were recorded on."""
import os

import numpy as np

from mindnlp import core
from mindnlp.core import serialization
from mindnlp.core.nn import functional as F

from .testing_common import FIXTURES
from .toy_models import TOY_MODELS

INPUT_IDS = [[2, 14, 35, 61, 3, 17, 48, 3], [2, 71, 9, 3, 55, 3, 0, 0], [2, 23, 3, 88, 3, 0, 0, 0]]
ATTENTION_MASK = [[1] * 8, [1] * 6 + [0] * 2, [1] * 5 + [0] * 3]
SEQ_LABELS = [2, 0, 1]


def toy_inputs(name):
    """The same arrays make_peft_fixtures.toy_inputs draws."""
    generator = np.random.default_rng(0)
    if name == "mlp":
        return generator.standard_normal((4, 10)).astype(np.float32)
    if name == "emb_conv1d":
        return generator.integers(0, 100, (4, 10)).astype(np.int64)
    return generator.standard_normal((4, 5, 5)).astype(np.float32)


class ToyCase:
    def __init__(self, name):
        self.name = name

    def make_model(self):
        model = TOY_MODELS[self.name]()
        model.load_state_dict(serialization.load_safetensors(os.path.join(FIXTURES, "toy", f"{self.name}.safetensors")))
        return model.eval()

    def inputs(self, train=False):
        return {"X": core.tensor(toy_inputs(self.name))}

    def loss(self, output):
        return F.nll_loss(output, core.tensor([0, 1, 1, 0]))

    def logits(self, output):
        return output


class HFCase:
    """A tiny mindnlp.transformers model saved by HF transformers in tests/fixtures/peft/<name>."""

    def __init__(self, name, class_name):
        self.name = name
        self.class_name = class_name

    def make_model(self):
        import mindnlp.transformers as transformers

        return getattr(transformers, self.class_name).from_pretrained(os.path.join(FIXTURES, self.name)).eval()

    def inputs(self, train=False):
        inputs = {"input_ids": core.tensor(INPUT_IDS), "attention_mask": core.tensor(ATTENTION_MASK)}
        if train:
            inputs["labels"] = core.tensor(SEQ_LABELS if self.name == "bert" else INPUT_IDS)
        return inputs

    def loss(self, output):
        return output.loss

    def logits(self, output):
        return output.logits


def make_case(kind):
    if kind == "bert":
        return HFCase("bert", "BertForSequenceClassification")
    if kind == "llama":
        return HFCase("llama", "LlamaForCausalLM")
    return ToyCase(kind)


def run_logits(model, case):
    """The logits `model` gives on the case's inputs, as a NumPy array."""
    with core.no_grad():
        return case.logits(model(**case.inputs())).numpy()
