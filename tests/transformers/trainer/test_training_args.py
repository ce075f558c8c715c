"""TrainingArguments: HF's defaults, derived values, validation errors and the v4 spellings."""
import json
import warnings

import pytest

from mindnlp.transformers.trainer_utils import IntervalStrategy, SaveStrategy, SchedulerType
from mindnlp.transformers.training_args import OptimizerNames, TrainingArguments


def test_defaults_are_hf_defaults(tmp_path):
    args = TrainingArguments(str(tmp_path))
    assert (args.per_device_train_batch_size, args.per_device_eval_batch_size) == (8, 8)
    assert (args.learning_rate, args.weight_decay, args.adam_beta1, args.adam_beta2, args.adam_epsilon) == \
        (5e-5, 0.0, 0.9, 0.999, 1e-8)
    assert (args.num_train_epochs, args.max_steps, args.max_grad_norm, args.seed) == (3.0, -1, 1.0, 42)
    assert args.lr_scheduler_type is SchedulerType.LINEAR and args.optim is OptimizerNames.ADAMW_TORCH
    assert args.eval_strategy is IntervalStrategy.NO and args.save_strategy is SaveStrategy.STEPS
    assert (args.logging_steps, args.save_steps, args.save_total_limit) == (500, 500, None)
    assert args.report_to == [] and args.remove_unused_columns and args.label_names is None
    assert TrainingArguments().output_dir == "trainer_output"


def test_eval_strategy_turns_on_do_eval_and_borrows_logging_steps(tmp_path):
    args = TrainingArguments(str(tmp_path), eval_strategy="steps", logging_steps=20)
    assert args.do_eval and args.eval_steps == 20


def test_load_best_model_defaults_to_loss(tmp_path):
    args = TrainingArguments(str(tmp_path), load_best_model_at_end=True, eval_strategy="steps", save_steps=100,
                             eval_steps=50)
    assert args.metric_for_best_model == "loss" and args.greater_is_better is False
    accuracy = TrainingArguments(str(tmp_path), metric_for_best_model="accuracy")
    assert accuracy.greater_is_better is True


def test_v4_spellings(tmp_path):
    with pytest.warns(FutureWarning, match="evaluation_strategy"):
        args = TrainingArguments(str(tmp_path), evaluation_strategy="epoch", overwrite_output_dir=True)
    assert args.eval_strategy is IntervalStrategy.EPOCH
    ratio = TrainingArguments(str(tmp_path), warmup_ratio=0.1)
    assert ratio.get_warmup_steps(95) == 10
    assert TrainingArguments(str(tmp_path), group_by_length=True).train_sampling_strategy == "group_by_length"
    assert TrainingArguments(str(tmp_path), warmup_steps=7).get_warmup_steps(100) == 7


@pytest.mark.parametrize("kwargs,message", [
    (dict(fp16=True, bf16=True), "At most one of fp16 and bf16"),
    (dict(load_best_model_at_end=True, eval_strategy="epoch"), "requires the save and eval strategy to match"),
    (dict(load_best_model_at_end=True, eval_strategy="steps", eval_steps=30, save_steps=50), "round multiple"),
    (dict(logging_steps=2.5), "must be an integer"),
    (dict(warmup_steps=-1), "warmup_steps >= 0"),
    (dict(warmup_ratio=1.5), r"warmup_ratio must lie in range \[0,1\]"),
    (dict(lr_scheduler_type="reduce_lr_on_plateau"), "requires an eval strategy"),
    (dict(lr_scheduler_type="triangular"), "not a valid SchedulerType"),
    (dict(optim="lion"), "not a valid OptimizerNames"),
    (dict(eval_strategy="sometimes"), "not a valid IntervalStrategy"),
])
def test_validation_errors(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrainingArguments(str(tmp_path), **kwargs)


def test_report_to_none_and_all(tmp_path):
    for value in ("none", "all", ["none"], None):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert TrainingArguments(str(tmp_path), report_to=value).report_to == []


def test_to_dict_and_json(tmp_path):
    args = TrainingArguments(str(tmp_path), lr_scheduler_type="cosine", lr_scheduler_kwargs='{"num_cycles": 2}')
    values = json.loads(args.to_json_string())
    assert values["lr_scheduler_type"] == "cosine" and values["save_strategy"] == "steps"
    assert values["lr_scheduler_kwargs"] == {"num_cycles": 2} and values["output_dir"] == str(tmp_path)
    assert "learning_rate=5e-05" in repr(args)


def test_batch_sizes_and_device(tmp_path):
    args = TrainingArguments(str(tmp_path), per_device_train_batch_size=4, per_device_eval_batch_size=6, use_cpu=True)
    assert (args.train_batch_size, args.eval_batch_size) == (4, 6)
    assert args.device.type == "cpu" and args.world_size == 1
