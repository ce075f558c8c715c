"""LabelSmoother against HF transformers' recorded losses and gradients
(tests/fixtures/trainer/label_smoother.*, made by tests/fixtures/make_adafactor_label_smoother_fixtures.py),
and the Trainer's `label_smoothing_factor`.

Tolerances: the smoother's float32 loss and logits gradient must match HF's to rtol=1e-6 (the loss
differs by at most one float32 ulp, the gradients by 2e-8 absolute). A Trainer's logged loss is
compared to the formula evaluated in float64 on the same logits, to rtol=1e-5: the Trainer computes
in float32 over a few dozen terms, and the smoothing moves the loss by far more (asserted too).
"""
import json
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import LlamaConfig
from mindnlp.transformers.models.llama.modeling_llama import LlamaForCausalLM
from mindnlp.transformers.trainer import Trainer
from mindnlp.transformers.trainer_pt_utils import LabelSmoother
from mindnlp.transformers.training_args import TrainingArguments

from .models import TokenClassifier, parity_data

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "trainer")
with open(os.path.join(FIXTURES, "label_smoother.json")) as f:
    CASES = json.load(f)
ARRAYS = np.load(os.path.join(FIXTURES, "label_smoother.npz"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_and_gradient_match_hf(name):
    case = CASES[name]
    logits = core.tensor(ARRAYS[f"{name}_logits"], requires_grad=True)
    labels = core.tensor(ARRAYS[f"{name}_labels"])
    output = {"logits": logits} if case["dict_output"] else (logits,)
    loss = LabelSmoother(**case["smoother_kwargs"])(output, labels, **case["call_kwargs"])
    assert loss.dtype == core.float32 and loss.shape == ()
    np.testing.assert_allclose(loss.item(), case["loss"], rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(logits.grad.numpy(), ARRAYS[f"{name}_grad"], rtol=1e-6, atol=1e-7)


def test_defaults_and_no_smoothing_is_cross_entropy():
    smoother = LabelSmoother()
    assert (smoother.epsilon, smoother.ignore_index) == (0.1, -100)
    logits = core.tensor(ARRAYS["tokens_logits"])
    labels = core.tensor(ARRAYS["tokens_labels"])
    plain = LabelSmoother(epsilon=0.0)((logits,), labels)
    expected = core.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
    np.testing.assert_allclose(plain.item(), expected.item(), rtol=1e-6)
    # With epsilon the uniform target pulls the loss away from plain cross entropy.
    assert abs(smoother((logits,), labels).item() - plain.item()) > 1e-2


def smoothed_loss(logits, labels, epsilon, shift=False):
    """(1 - eps) * NLL + eps * mean_c(-log p_c), averaged over the labels that are not -100 (float64)."""
    logits = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels)
    if shift:
        logits, labels = logits[..., :-1, :], labels[..., 1:]
    top = logits.max(-1, keepdims=True)
    log_probs = logits - top - np.log(np.exp(logits - top).sum(-1, keepdims=True))
    valid = labels != -100
    nll = -np.take_along_axis(log_probs, np.where(valid, labels, 0)[..., None], -1)[..., 0]
    uniform = -log_probs.mean(-1)
    return float(((1 - epsilon) * nll[valid].sum() + epsilon * uniform[valid].sum()) / valid.sum())


def make_args(output_dir, **kwargs):
    defaults = {"logging_steps": 1, "save_strategy": "no", "disable_tqdm": True, "report_to": "none",
                "train_sampling_strategy": "sequential", "learning_rate": 0.05}
    return TrainingArguments(str(output_dir), **{**defaults, **kwargs})


def first_logged_loss(trainer):
    return next(e["loss"] for e in trainer.state.log_history if "loss" in e)


def test_trainer_classification_loss_is_the_smoothed_cross_entropy(tmp_path, capsys):
    core.manual_seed(0)
    model = TokenClassifier()
    model.classifier.weight.data.mul_(20.0)
    trainer = Trainer(model, make_args(tmp_path, label_smoothing_factor=0.1, per_device_train_batch_size=8,
                                       max_steps=1), train_dataset=parity_data(16), eval_dataset=parity_data(8, seed=1))
    assert trainer.label_smoother == LabelSmoother(epsilon=0.1)
    batch = next(iter(trainer.get_train_dataloader()))
    with core.no_grad():
        outputs = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    expected = smoothed_loss(outputs["logits"].numpy(), batch["labels"].numpy(), 0.1)
    assert abs(expected - outputs["loss"].item()) > 1e-2  # the model's own (unsmoothed) loss differs

    trainer.train()
    np.testing.assert_allclose(first_logged_loss(trainer), expected, rtol=1e-5)

    # Evaluation scores with the same smoother.
    eval_batch = next(iter(trainer.get_eval_dataloader()))
    with core.no_grad():
        logits = model(input_ids=eval_batch["input_ids"], attention_mask=eval_batch["attention_mask"])["logits"]
    metrics = trainer.evaluate()
    np.testing.assert_allclose(metrics["eval_loss"], smoothed_loss(logits.numpy(), eval_batch["labels"].numpy(), 0.1),
                               rtol=1e-5)


def causal_lm():
    core.manual_seed(0)
    config = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                         initializer_range=0.5)
    return LlamaForCausalLM(config)


def causal_lm_data(n=8, length=6):
    rng = np.random.default_rng(3)
    rows = []
    for i in range(n):
        ids = rng.integers(0, 32, size=length).tolist()
        labels = list(ids)
        labels[length - 1 - i % 3:] = [-100] * (1 + i % 3)  # right padding of 1 to 3 tokens
        rows.append({"input_ids": ids, "labels": labels})
    return rows


@pytest.mark.parametrize("batch_size, accumulation", [(4, 1), (2, 2)])
def test_trainer_causal_lm_loss_shifts_labels(tmp_path, capsys, batch_size, accumulation):
    """A causal LM is scored with shifted labels; with accumulation each micro-batch is divided by the
    label count of the whole step, so the step's loss is the formula over all its examples."""
    model = causal_lm()
    data = causal_lm_data()
    ids = core.tensor([row["input_ids"] for row in data[:4]])
    labels = np.array([row["labels"] for row in data[:4]])
    with core.no_grad():
        logits = model(input_ids=ids).logits.numpy()
        own_loss = model(input_ids=ids, labels=core.tensor(labels)).loss.item()
    expected = smoothed_loss(logits, labels, 0.1, shift=True)
    assert abs(expected - smoothed_loss(logits, labels, 0.1)) > 1e-2
    assert abs(expected - own_loss) > 1e-2

    args = make_args(tmp_path, label_smoothing_factor=0.1, per_device_train_batch_size=batch_size,
                     gradient_accumulation_steps=accumulation, max_steps=1)
    trainer = Trainer(model, args, train_dataset=data)
    trainer.train()
    np.testing.assert_allclose(first_logged_loss(trainer), expected, rtol=1e-5)


def test_compute_loss_func_takes_precedence_over_label_smoothing(tmp_path, capsys):
    seen = []

    def loss_func(outputs, labels, num_items_in_batch=None):
        seen.append(labels)
        return core.nn.functional.cross_entropy(outputs["logits"], labels)

    trainer = Trainer(TokenClassifier(), make_args(tmp_path, label_smoothing_factor=0.1, max_steps=1,
                                                   per_device_train_batch_size=4),
                      train_dataset=parity_data(8), compute_loss_func=loss_func)
    trainer.train()
    assert len(seen) == 1 and seen[0].shape == (4,)


class MultiLabelClassifier(TokenClassifier):
    config = SimpleNamespace(problem_type="multi_label_classification")


def test_label_smoothing_is_off_for_multi_label_classification(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = Trainer(MultiLabelClassifier(), make_args(tmp_path, label_smoothing_factor=0.1))
    assert trainer.label_smoother is None
    assert any("not compatible with multi-label classification" in str(w.message) for w in caught)
    assert Trainer(TokenClassifier(), make_args(tmp_path)).label_smoother is None
    assert TrainingArguments(str(tmp_path)).label_smoothing_factor == 0.0
