"""Trainer behaviour on tiny models: training, accumulation, checkpoints, exact resume,
evaluation/prediction, best-model tracking, early stopping, datasets input and callbacks."""
import json
import os
import shutil
import struct
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.trainer import Trainer
from mindnlp.transformers.trainer_callback import EarlyStoppingCallback, TrainerCallback, TrainerState
from mindnlp.transformers.trainer_pt_utils import IterableDatasetShard
from mindnlp.transformers.trainer_utils import get_last_checkpoint
from mindnlp.transformers.training_args import TrainingArguments

from .models import RegressionModel, TokenClassifier, TokenLossModel, parity_data, regression_data


def make_args(output_dir, **kwargs):
    defaults = dict(per_device_train_batch_size=8, learning_rate=0.1, logging_steps=1, save_strategy="no",
                    disable_tqdm=True, report_to="none")
    defaults.update(kwargs)
    return TrainingArguments(str(output_dir), **defaults)


def checkpoints(folder):
    return sorted(name for name in os.listdir(folder) if name.startswith("checkpoint-"))


def train_losses(trainer):
    return {entry["step"]: entry["loss"] for entry in trainer.state.log_history if "loss" in entry}


def accuracy(eval_prediction):
    predictions, labels = eval_prediction
    return {"accuracy": float((predictions.argmax(-1) == labels).mean())}


def test_training_reduces_loss_and_learns_the_line(tmp_path, capsys):
    trainer = Trainer(RegressionModel(), make_args(tmp_path, num_train_epochs=10), train_dataset=regression_data())
    output = trainer.train()
    losses = list(train_losses(trainer).values())
    assert output.global_step == 80
    assert np.mean(losses[-8:]) < 0.1 * np.mean(losses[:8])
    assert abs(trainer.model.a.item() - 2.0) < 0.1 and abs(trainer.model.b.item() - 3.0) < 0.1
    assert output.training_loss == pytest.approx(np.mean(losses))
    assert "train_runtime" in output.metrics and trainer.state.log_history[-1]["train_loss"] == output.training_loss


def test_logged_learning_rate_follows_the_linear_schedule(tmp_path, capsys):
    trainer = Trainer(RegressionModel(), make_args(tmp_path, max_steps=8, warmup_steps=2, learning_rate=0.08),
                      train_dataset=regression_data())
    trainer.train()
    rates = [e["learning_rate"] for e in trainer.state.log_history if "learning_rate" in e]
    # HF logs the lr used by each step: warmup 0, 0.5 lr, then linear decay to 0 at step 8.
    expected = [0.0, 0.04] + [0.08 * (8 - s) / 6 for s in range(2, 8)]
    np.testing.assert_allclose(rates, expected, rtol=1e-12)
    epochs = [e["epoch"] for e in trainer.state.log_history if "loss" in e]
    assert epochs == [s / 8 for s in range(1, 9)]


def test_gradient_accumulation_matches_a_bigger_batch(tmp_path, capsys):
    data = regression_data(32)
    common = dict(max_steps=4, optim="sgd", lr_scheduler_type="constant", train_sampling_strategy="sequential",
                  max_grad_norm=0)
    big = Trainer(RegressionModel(), make_args(tmp_path / "a", per_device_train_batch_size=8, **common),
                  train_dataset=data)
    big.train()
    small = Trainer(RegressionModel(), make_args(tmp_path / "b", per_device_train_batch_size=4,
                                                 gradient_accumulation_steps=2, **common), train_dataset=data)
    small.train()
    np.testing.assert_allclose([small.model.a.item(), small.model.b.item()], [big.model.a.item(), big.model.b.item()],
                               rtol=1e-6)
    np.testing.assert_allclose(list(train_losses(small).values()), list(train_losses(big).values()), rtol=1e-5)


def test_num_items_in_batch_normalizes_token_losses_over_the_accumulated_batch(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = []
    for i in range(8):
        labels = rng.standard_normal(4).astype(np.float32)
        labels[: i % 4] = -100  # micro-batches hold different numbers of labelled tokens
        rows.append({"input_x": rng.standard_normal(4).astype(np.float32), "labels": labels})
    common = dict(max_steps=1, optim="sgd", lr_scheduler_type="constant", train_sampling_strategy="sequential",
                  max_grad_norm=0)
    big = Trainer(TokenLossModel(), make_args(tmp_path / "a", per_device_train_batch_size=8, **common),
                  train_dataset=rows)
    big.train()
    small = Trainer(TokenLossModel(), make_args(tmp_path / "b", per_device_train_batch_size=2,
                                                gradient_accumulation_steps=4, **common), train_dataset=rows)
    assert small.model_accepts_loss_kwargs
    small.train()
    np.testing.assert_allclose(small.model.weight.item(), big.model.weight.item(), rtol=1e-6)
    assert small.model.weight.item() != 0.5


def test_checkpoint_contents_and_rotation(tmp_path, capsys):
    args = make_args(tmp_path, max_steps=8, save_strategy="steps", save_steps=2, save_total_limit=2)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data())
    trainer.train()
    assert checkpoints(tmp_path) == ["checkpoint-6", "checkpoint-8"]
    files = set(os.listdir(tmp_path / "checkpoint-8"))
    assert {"model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json",
            "training_args.json"} <= files
    state = TrainerState.load_from_json(tmp_path / "checkpoint-8" / "trainer_state.json")
    assert state.global_step == 8 and state.max_steps == 8
    assert [e["step"] for e in state.log_history if "loss" in e] == list(range(1, 9))
    saved = core.serialization.load_safetensors(str(tmp_path / "checkpoint-8" / "model.safetensors"))
    assert saved["a"].item() == trainer.model.a.item()
    assert json.load(open(tmp_path / "checkpoint-8" / "training_args.json"))["save_steps"] == 2
    assert get_last_checkpoint(str(tmp_path)).endswith("checkpoint-8")


def test_save_only_model_writes_no_training_state(tmp_path, capsys):
    args = make_args(tmp_path, max_steps=2, save_strategy="steps", save_steps=2, save_only_model=True)
    Trainer(RegressionModel(), args, train_dataset=regression_data()).train()
    files = set(os.listdir(tmp_path / "checkpoint-2"))
    assert "model.safetensors" in files and "optimizer.pt" not in files and "rng_state.pth" not in files


@pytest.mark.parametrize("accumulation", [1, 2])
def test_resume_from_checkpoint_continues_exactly(tmp_path, capsys, accumulation):
    """N steps straight vs N/2 steps + resume: the same losses, bit for bit (dropout and shuffling included)."""
    data = regression_data(40)

    def run(output_dir, resume=None):
        args = make_args(output_dir, num_train_epochs=3, per_device_train_batch_size=8 // accumulation,
                         gradient_accumulation_steps=accumulation, save_strategy="steps", save_steps=7,
                         learning_rate=0.05, warmup_steps=2)
        trainer = Trainer(RegressionModel(dropout=0.3), args, train_dataset=data)
        trainer.train(resume_from_checkpoint=resume)
        return trainer

    straight = run(tmp_path / "straight")
    assert straight.state.global_step == 15
    resumed_dir = tmp_path / "resumed"
    resumed_dir.mkdir()
    shutil.copytree(tmp_path / "straight" / "checkpoint-7", resumed_dir / "checkpoint-7")
    resumed = run(resumed_dir, resume=True)
    expected = train_losses(straight)
    got = train_losses(resumed)
    assert sorted(got) == list(range(1, 16))
    assert [got[s] for s in range(8, 16)] == [expected[s] for s in range(8, 16)]
    assert resumed.model.a.item() == straight.model.a.item()
    assert resumed.model.b.item() == straight.model.b.item()


def test_resume_with_no_checkpoint_is_an_error(tmp_path, capsys):
    trainer = Trainer(RegressionModel(), make_args(tmp_path, max_steps=2), train_dataset=regression_data())
    with pytest.raises(ValueError, match="No valid checkpoint found"):
        trainer.train(resume_from_checkpoint=True)


def test_evaluate_and_predict(tmp_path, capsys):
    data = parity_data(40)
    args = make_args(tmp_path, per_device_eval_batch_size=16)
    trainer = Trainer(TokenClassifier(), args, eval_dataset=data, compute_metrics=accuracy)
    metrics = trainer.evaluate()
    assert {"eval_loss", "eval_accuracy", "eval_runtime", "eval_samples_per_second"} <= set(metrics)
    prediction = trainer.predict(data)
    assert prediction.predictions.shape == (40, 2) and prediction.predictions.dtype == np.float32
    np.testing.assert_array_equal(prediction.label_ids, [row["label"] for row in data])
    expected = float((prediction.predictions.argmax(-1) == prediction.label_ids).mean())
    assert prediction.metrics["test_accuracy"] == expected == metrics["eval_accuracy"]
    # Mean of the per-batch mean losses, as HF computes eval_loss.
    logits = prediction.predictions
    shifted = logits - logits.max(-1, keepdims=True)
    per_example = -(shifted - np.log(np.exp(shifted).sum(-1, keepdims=True)))[np.arange(40), prediction.label_ids]
    batch_means = [per_example[i:i + 16].mean() for i in range(0, 40, 16)]
    assert metrics["eval_loss"] == pytest.approx(np.mean(batch_means), rel=1e-5)
    without_labels = trainer.predict([{"input_ids": r["input_ids"]} for r in data[:5]])
    assert without_labels.label_ids is None and without_labels.predictions.shape == (5, 2)


def test_training_a_classifier_with_eval_strategy(tmp_path, capsys):
    args = make_args(tmp_path, num_train_epochs=6, learning_rate=0.05, eval_strategy="epoch", logging_strategy="epoch")
    trainer = Trainer(TokenClassifier(), args, train_dataset=parity_data(64), eval_dataset=parity_data(32, seed=1),
                      compute_metrics=accuracy)
    trainer.train()
    evals = [e for e in trainer.state.log_history if "eval_loss" in e]
    assert [e["epoch"] for e in evals] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert evals[-1]["eval_loss"] < evals[0]["eval_loss"] and evals[-1]["eval_accuracy"] >= 0.8


def test_load_best_model_at_end_restores_the_best_checkpoint(tmp_path, capsys):
    """With a learning rate that makes training diverge, the first evaluation is the best one."""
    args = make_args(tmp_path, max_steps=6, learning_rate=3.0, optim="sgd", lr_scheduler_type="constant",
                     eval_strategy="steps", eval_steps=2, save_strategy="steps", save_steps=2,
                     load_best_model_at_end=True, save_total_limit=1, max_grad_norm=0)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(16))
    trainer.train()
    evals = {e["step"]: e["eval_loss"] for e in trainer.state.log_history if "eval_loss" in e}
    best_step = min(evals, key=evals.get)
    assert trainer.state.best_metric == evals[best_step]
    assert trainer.state.best_model_checkpoint.endswith(f"checkpoint-{best_step}")
    saved = core.serialization.load_safetensors(os.path.join(trainer.state.best_model_checkpoint,
                                                             "model.safetensors"))
    assert trainer.model.a.item() == saved["a"].item()
    assert trainer.evaluate()["eval_loss"] == pytest.approx(evals[best_step], rel=1e-6)
    # save_total_limit=1 keeps only the best checkpoint at the end.
    assert checkpoints(tmp_path) == [f"checkpoint-{best_step}"]


def test_save_strategy_best_saves_only_improvements(tmp_path, capsys):
    args = make_args(tmp_path, max_steps=6, learning_rate=3.0, optim="sgd", lr_scheduler_type="constant",
                     eval_strategy="steps", eval_steps=1, save_strategy="best", metric_for_best_model="loss",
                     max_grad_norm=0)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(16))
    trainer.train()
    losses = [e["eval_loss"] for e in trainer.state.log_history if "eval_loss" in e]
    improving = [i + 1 for i, loss in enumerate(losses) if loss < min(losses[:i], default=np.inf)]
    assert sorted(int(name.split("-")[1]) for name in checkpoints(tmp_path)) == improving


def test_early_stopping_stops_after_patience(tmp_path, capsys):
    args = make_args(tmp_path, max_steps=40, learning_rate=3.0, optim="sgd", lr_scheduler_type="constant",
                     eval_strategy="steps", eval_steps=1, save_strategy="steps", save_steps=1,
                     load_best_model_at_end=True, max_grad_norm=0)
    callback = EarlyStoppingCallback(early_stopping_patience=2)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(16),
                      callbacks=[callback])
    trainer.train()
    losses = [e["eval_loss"] for e in trainer.state.log_history if "eval_loss" in e]
    best = int(np.argmin(losses))
    assert trainer.state.global_step == best + 3 < 40  # two evaluations without improvement after the best
    assert callback.early_stopping_patience_counter == 2


def test_early_stopping_needs_a_metric_and_an_eval_strategy(tmp_path, capsys):
    trainer = Trainer(RegressionModel(), make_args(tmp_path, max_steps=2), train_dataset=regression_data(),
                      callbacks=[EarlyStoppingCallback()])
    with pytest.raises(ValueError, match="metric_for_best_model"):
        trainer.train()


def test_callbacks_see_the_events_in_order(tmp_path, capsys):
    events = []

    class Recorder(TrainerCallback):
        def __getattribute__(self, name):
            if name.startswith("on_"):
                events.append(name)
            return super().__getattribute__(name)

    args = make_args(tmp_path, max_steps=2, gradient_accumulation_steps=2, logging_steps=2, eval_strategy="steps",
                     eval_steps=2)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data(32), eval_dataset=regression_data(8),
                      callbacks=[Recorder()])
    trainer.train()
    assert events[:8] == ["on_init_end", "on_train_begin", "on_epoch_begin", "on_step_begin", "on_substep_end",
                          "on_pre_optimizer_step", "on_optimizer_step", "on_step_end"]
    assert events[-1] == "on_train_end"
    assert events.count("on_evaluate") == 1 and events.count("on_prediction_step") == 1


def test_progress_bars_are_shown_during_training_and_evaluation(tmp_path, capsys):
    args = make_args(tmp_path, max_steps=3, eval_strategy="steps", eval_steps=3, disable_tqdm=False)
    Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(8)).train()
    err = capsys.readouterr().err
    assert "3/3" in err and "1/1" in err


def test_datasets_input_with_map_and_unused_columns_removed(tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    rows = parity_data(48)
    table = datasets.Dataset.from_dict({"text": [" ".join(map(str, r["input_ids"])) for r in rows],
                                        "label": [r["label"] for r in rows], "idx": list(range(48))})

    def tokenize(batch):
        ids = [[int(t) for t in text.split()] for text in batch["text"]]
        return {"input_ids": ids, "attention_mask": [[1] * len(i) for i in ids]}

    encoded = table.map(tokenize, batched=True)
    args = make_args(tmp_path, num_train_epochs=2, learning_rate=0.05)
    trainer = Trainer(TokenClassifier(), args, train_dataset=encoded, eval_dataset=encoded, compute_metrics=accuracy)
    loader = trainer.get_train_dataloader()
    assert sorted(loader.dataset.column_names) == ["attention_mask", "input_ids", "label"]
    batch = next(iter(loader))
    assert sorted(batch) == ["attention_mask", "input_ids", "labels"] and batch["input_ids"].shape == (8, 6)
    trainer.train()
    assert trainer.evaluate()["eval_accuracy"] > 0.5
    kept = Trainer(TokenClassifier(), make_args(tmp_path, remove_unused_columns=False), train_dataset=encoded)
    assert "text" in kept.get_train_dataloader().dataset.column_names


def test_streamed_datasets_train_as_the_same_rows_in_order(tmp_path, capsys):
    """A `datasets.IterableDataset` (as `load_dataset(..., streaming=True)` gives) trains like the
    same rows read in order from a map-style dataset, its unused columns removed."""
    datasets = pytest.importorskip("datasets")
    rows = [{**r, "note": "unused"} for r in regression_data(32)]
    args = dict(max_steps=6, learning_rate=0.1, train_sampling_strategy="sequential")
    in_order = Trainer(RegressionModel(), make_args(tmp_path / "a", **args), train_dataset=rows)
    in_order.train()
    streamed = datasets.Dataset.from_list(rows).to_iterable_dataset(num_shards=2)
    trainer = Trainer(RegressionModel(), make_args(tmp_path / "b", **args), train_dataset=streamed)
    assert "note" not in next(iter(trainer.get_train_dataloader()))
    trainer.train()
    assert trainer.state.global_step == 6
    for ours, theirs in zip(trainer.model.parameters(), in_order.model.parameters()):
        assert abs(ours.item() - theirs.item()) < 1e-6


def test_iterable_shards_split_each_run_of_batches_between_processes():
    stream = list(range(11))
    shards = [list(IterableDatasetShard(stream, batch_size=2, num_processes=3, process_index=r)) for r in range(3)]
    # run k (6 examples) is one step of one process with batch 6: rank r takes its 2 of each run
    assert shards == [[0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 0]]  # the last run completed from the start
    dropped = [list(IterableDatasetShard(stream, 2, 3, r, drop_last=True)) for r in range(3)]
    assert dropped == [[0, 1], [2, 3], [4, 5]]


def test_unused_fields_of_plain_examples_are_dropped_before_collation(tmp_path, capsys):
    rows = [{**r, "comment": "ignored"} for r in parity_data(8)]
    trainer = Trainer(TokenClassifier(), make_args(tmp_path), train_dataset=rows)
    batch = next(iter(trainer.get_train_dataloader()))
    assert sorted(batch) == ["attention_mask", "input_ids", "labels"]


def test_create_optimizer_excludes_bias_and_norm_weights_from_decay(tmp_path, capsys):
    trainer = Trainer(TokenClassifier(), make_args(tmp_path, weight_decay=0.01))
    optimizer = trainer.create_optimizer()
    assert type(optimizer).__name__ == "AdamW"
    names = {id(p): n for n, p in trainer.model.named_parameters()}
    decayed = sorted(names[id(p)] for p in optimizer.param_groups[0]["params"])
    plain = sorted(names[id(p)] for p in optimizer.param_groups[1]["params"])
    assert decayed == ["classifier.weight", "embed.weight"]
    assert plain == ["classifier.bias", "norm.bias", "norm.weight"]
    assert optimizer.param_groups[0]["weight_decay"] == 0.01 and optimizer.param_groups[1]["weight_decay"] == 0.0
    assert optimizer.param_groups[0]["betas"] == (0.9, 0.999) and optimizer.param_groups[0]["eps"] == 1e-8


def test_custom_optimizer_and_scheduler_are_used(tmp_path, capsys):
    model = RegressionModel()
    optimizer = core.optim.SGD(model.parameters(), lr=0.01)
    scheduler = core.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.5)
    trainer = Trainer(model, make_args(tmp_path, max_steps=2), train_dataset=regression_data(),
                      optimizers=(optimizer, scheduler))
    trainer.train()
    assert trainer.optimizer is optimizer
    assert [e["learning_rate"] for e in trainer.state.log_history if "learning_rate" in e] == [0.005, 0.005]


def test_compute_loss_func_receives_outputs_labels_and_item_count(tmp_path, capsys):
    seen = []

    def loss_func(outputs, labels, num_items_in_batch=None):
        seen.append(num_items_in_batch)
        return core.nn.functional.cross_entropy(outputs["logits"], labels)

    trainer = Trainer(TokenClassifier(), make_args(tmp_path, max_steps=2, per_device_train_batch_size=4),
                      train_dataset=parity_data(16), compute_loss_func=loss_func)
    trainer.train()
    assert seen == [4, 4]


def test_model_init_builds_the_model(tmp_path, capsys):
    trainer = Trainer(model_init=lambda: RegressionModel(a=1.0), args=make_args(tmp_path, max_steps=2),
                      train_dataset=regression_data())
    trainer.train()
    assert trainer.state.global_step == 2
    with pytest.raises(RuntimeError, match="either a `model` or `model_init`"):
        Trainer(args=make_args(tmp_path))


@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_training_runs_and_learns(tmp_path, capsys, precision):
    args = make_args(tmp_path, num_train_epochs=6, learning_rate=0.05, **{precision: True})
    trainer = Trainer(TokenClassifier(), args, train_dataset=parity_data(64))
    assert (trainer.scaler is not None) == (precision == "fp16")
    trainer.train()
    losses = list(train_losses(trainer).values())
    assert all(np.isfinite(losses)) and np.mean(losses[-8:]) < np.mean(losses[:8])
    assert trainer.model.classifier.weight.dtype == core.float32


def test_loss_curve_png_is_written(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib (the optional `plot` extra) is not installed")
    args = make_args(tmp_path, max_steps=4, eval_strategy="steps", eval_steps=2)
    Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(8)).train()
    with open(tmp_path / "loss_curve.png", "rb") as file:
        header = file.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    width, height = struct.unpack(">II", header[16:24])
    assert width > 100 and height > 100


def test_trainer_without_matplotlib_draws_the_curve_as_svg(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    args = make_args(tmp_path, max_steps=4, eval_strategy="steps", eval_steps=2)
    trainer = Trainer(RegressionModel(), args, train_dataset=regression_data(), eval_dataset=regression_data(8))
    trainer.train()
    assert not os.path.exists(tmp_path / "loss_curve.png")
    svg = (tmp_path / "loss_curve.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2 and "eval loss" in svg
    assert trainer.save_loss_curve() == str(tmp_path / "loss_curve.svg")


def test_report_to_unknown_integration_warns_and_is_ignored(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        args = TrainingArguments(str(tmp_path), report_to=["wandb", "tensorboard"])
    assert args.report_to == []
    assert any("wandb" in str(w.message) for w in caught)


class StreamedRegression(core.utils.data.IterableDataset):
    def __init__(self, rows):
        self.rows = rows

    def __iter__(self):
        return iter(self.rows)


def test_iterable_dataset_needs_max_steps_and_resumes_exactly(tmp_path, capsys):
    stream = StreamedRegression(regression_data(48))
    with pytest.raises(ValueError, match="max_steps must be set"):
        Trainer(RegressionModel(), make_args(tmp_path / "x"), train_dataset=stream).train()

    def run(output_dir, resume=None):
        args = make_args(output_dir, max_steps=8, save_strategy="steps", save_steps=3, learning_rate=0.05)
        trainer = Trainer(RegressionModel(dropout=0.2), args, train_dataset=stream)
        trainer.train(resume_from_checkpoint=resume)
        return trainer

    straight = run(tmp_path / "a")
    resumed = run(tmp_path / "b", resume=str(tmp_path / "a" / "checkpoint-3"))
    assert train_losses(resumed) == train_losses(straight) and len(train_losses(straight)) == 8


def test_group_by_length_batches_hold_similar_lengths(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = [{"input_ids": [1] * int(n), "label": 0} for n in rng.integers(2, 60, size=256)]
    args = make_args(tmp_path, train_sampling_strategy="group_by_length", per_device_train_batch_size=8)
    trainer = Trainer(TokenClassifier(), args, train_dataset=rows)
    sampler = trainer._get_train_sampler()
    order = list(sampler)
    assert sorted(order) == list(range(256))
    spread = np.mean([np.ptp([len(rows[i]["input_ids"]) for i in order[k:k + 8]]) for k in range(0, 256, 8)])
    assert spread < 10  # random batches of 8 lengths from 2..59 spread over ~40
    sampler.set_epoch(1)
    assert list(sampler) != order
