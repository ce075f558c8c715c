# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Small pieces the Trainer is built from: strategy enums, output tuples, seeding, checkpoint
folders and the epoch-seeded sampler that makes `resume_from_checkpoint` replay the same data.

Names and semantics follow Hugging Face transformers' `trainer_utils`.
"""
import os
import random
import re
import shutil
import time
from enum import Enum
from typing import NamedTuple

import numpy as np

from .. import core
from ..core.utils.data import Sampler

PREFIX_CHECKPOINT_DIR = "checkpoint"
_CHECKPOINT_PATTERN = re.compile(r"^" + PREFIX_CHECKPOINT_DIR + r"\-(\d+)$")


class ExplicitEnum(str, Enum):
    """An Enum of strings whose error lists the accepted values."""

    @classmethod
    def _missing_(cls, value):
        raise ValueError(f"{value!r} is not a valid {cls.__name__}, please select one of "
                         f"{[member.value for member in cls]}")


class IntervalStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"


class SaveStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"
    BEST = "best"


class SchedulerType(ExplicitEnum):
    """Names accepted by `TrainingArguments.lr_scheduler_type` and `get_scheduler`."""

    LINEAR = "linear"
    COSINE = "cosine"
    COSINE_WITH_RESTARTS = "cosine_with_restarts"
    POLYNOMIAL = "polynomial"
    CONSTANT = "constant"
    CONSTANT_WITH_WARMUP = "constant_with_warmup"
    INVERSE_SQRT = "inverse_sqrt"
    REDUCE_ON_PLATEAU = "reduce_lr_on_plateau"
    COSINE_WITH_MIN_LR = "cosine_with_min_lr"
    WARMUP_STABLE_DECAY = "warmup_stable_decay"


class EvalPrediction:
    """What `compute_metrics` receives: predictions and label_ids as NumPy arrays (or tuples of them).

    Unpacks as `predictions, label_ids = eval_pred`, as in HF.
    """

    def __init__(self, predictions, label_ids, inputs=None, losses=None):
        self.predictions = predictions
        self.label_ids = label_ids
        self.inputs = inputs
        self.losses = losses
        self._fields = [predictions, label_ids] + [x for x in (inputs, losses) if x is not None]

    def __iter__(self):
        return iter(self._fields)

    def __getitem__(self, index):
        return self._fields[index]

    def __len__(self):
        return len(self._fields)


class EvalLoopOutput(NamedTuple):
    predictions: object
    label_ids: object
    metrics: dict
    num_samples: int


class PredictionOutput(NamedTuple):
    predictions: object
    label_ids: object
    metrics: dict


class TrainOutput(NamedTuple):
    global_step: int
    training_loss: float
    metrics: dict


def set_seed(seed):
    """Seed Python's `random`, NumPy's global RNG and the core generator (all devices draw from it)."""
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    core.manual_seed(seed)


def has_length(dataset):
    """Whether len(dataset) works (iterable datasets may raise TypeError)."""
    try:
        return len(dataset) is not None
    except (TypeError, NotImplementedError):
        return False


def speed_metrics(split, start_time, num_samples=None, num_steps=None, num_tokens=None):
    """`{split}_runtime` and per-second rates, rounded as HF rounds them."""
    runtime = time.time() - start_time
    result = {f"{split}_runtime": round(runtime, 4)}
    if runtime == 0:
        return result
    if num_samples is not None:
        result[f"{split}_samples_per_second"] = round(num_samples / runtime, 3)
    if num_steps is not None:
        result[f"{split}_steps_per_second"] = round(num_steps / runtime, 3)
    if num_tokens is not None:
        result[f"{split}_tokens_per_second"] = round(num_tokens / runtime, 3)
    return result


def denumpify_detensorize(metrics):
    """Metric values as plain Python numbers, so they serialize to JSON."""
    if isinstance(metrics, (list, tuple)):
        return type(metrics)(denumpify_detensorize(m) for m in metrics)
    if isinstance(metrics, dict):
        return type(metrics)({k: denumpify_detensorize(v) for k, v in metrics.items()})
    if isinstance(metrics, np.generic):
        return metrics.item()
    if isinstance(metrics, core.Tensor) and metrics.numel() == 1:
        return metrics.item()
    if isinstance(metrics, np.ndarray) and metrics.size == 1:
        return metrics.item()
    return metrics


def get_last_checkpoint(folder):
    """The `checkpoint-<step>` sub-folder of `folder` with the highest step, or None."""
    checkpoints = [name for name in os.listdir(folder)
                   if _CHECKPOINT_PATTERN.search(name) and os.path.isdir(os.path.join(folder, name))]
    if not checkpoints:
        return None
    return os.path.join(folder, max(checkpoints, key=lambda name: int(_CHECKPOINT_PATTERN.search(name).group(1))))


def sorted_checkpoints(output_dir):
    """`checkpoint-<step>` folders of output_dir, oldest step first."""
    found = []
    for name in os.listdir(output_dir) if os.path.isdir(output_dir) else []:
        match = _CHECKPOINT_PATTERN.search(name)
        if match and os.path.isdir(os.path.join(output_dir, name)):
            found.append((int(match.group(1)), os.path.join(output_dir, name)))
    return [path for _, path in sorted(found)]


def rotate_checkpoints(output_dir, save_total_limit, best_model_checkpoint=None):
    """Delete the oldest checkpoints beyond `save_total_limit`, never the newest (needed to resume)
    nor the best one (needed by load_best_model_at_end)."""
    if save_total_limit is None or save_total_limit <= 0:
        return
    checkpoints = sorted_checkpoints(output_dir)
    if len(checkpoints) <= save_total_limit:
        return
    protected = {os.path.abspath(checkpoints[-1])}
    if best_model_checkpoint is not None:
        protected.add(os.path.abspath(best_model_checkpoint))
    remaining = len(checkpoints)
    keep = max(save_total_limit, len(protected))
    for path in checkpoints:
        if remaining <= keep:
            break
        if os.path.abspath(path) in protected:
            continue
        shutil.rmtree(path, ignore_errors=True)
        remaining -= 1


class EpochSeededRandomSampler(Sampler):
    """A random permutation drawn from a generator seeded with `seed + epoch`.

    The order of epoch e depends only on (seed, e), not on how many random numbers were drawn
    before, so a run resumed from a checkpoint sees the same batches as an uninterrupted one
    (the role accelerate's SeedableRandomSampler plays for HF's Trainer).
    """

    def __init__(self, data_source, seed=0):
        self.data_source = data_source
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __iter__(self):
        generator = core.Generator().manual_seed(self.seed + self.epoch)
        return iter(core.randperm(len(self.data_source), generator=generator).tolist())

    def __len__(self):
        return len(self.data_source)


class SkipBatchSampler(Sampler):
    """The batches of `batch_sampler` after the first `skip_batches`: resuming mid-epoch skips the
    consumed batches by their indices, without loading or collating them."""

    def __init__(self, batch_sampler, skip_batches):
        self.batch_sampler = batch_sampler
        self.skip_batches = skip_batches

    def __iter__(self):
        for index, batch in enumerate(self.batch_sampler):
            if index >= self.skip_batches:
                yield batch

    def __len__(self):
        return max(len(self.batch_sampler) - self.skip_batches, 0)


def loss_curve_svg(series, width=640, height=360):
    """An SVG line plot of {label: [(step, loss), ...]}: axes with the step and loss ranges at
    their ends, one polyline per non-empty series (eval points marked), and a legend. Written
    by hand so that a loss curve needs no plotting library."""
    colors = ("#1f77b4", "#ff7f0e")
    points = [p for values in series.values() for p in values]
    left, right, top, bottom = 60, width - 20, 20, height - 40
    lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             'font-size="12">', f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<path d="M{left},{top} V{bottom} H{right}" stroke="black" fill="none"/>',
             f'<text x="{(left + right) / 2}" y="{height - 8}" text-anchor="middle">step</text>']
    if points:
        steps, losses = [s for s, _ in points], [v for _, v in points]
        s0, s1 = min(steps), max(steps) if max(steps) > min(steps) else min(steps) + 1
        l0, l1 = min(losses), max(losses) if max(losses) > min(losses) else min(losses) + 1

        def xy(step, loss):
            return (left + (step - s0) / (s1 - s0) * (right - left), bottom - (loss - l0) / (l1 - l0) * (bottom - top))

        lines += [f'<text x="{left}" y="{bottom + 16}" text-anchor="middle">{s0:g}</text>',
                  f'<text x="{right}" y="{bottom + 16}" text-anchor="middle">{s1:g}</text>',
                  f'<text x="{left - 6}" y="{bottom}" text-anchor="end">{l0:.4g}</text>',
                  f'<text x="{left - 6}" y="{top + 10}" text-anchor="end">{l1:.4g}</text>']
        for i, (label, values) in enumerate((k, v) for k, v in series.items() if v):
            color = colors[i % len(colors)]
            coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(s, v) for s, v in values))
            lines.append(f'<polyline points="{coords}" stroke="{color}" stroke-width="1.5" fill="none"/>')
            if label.startswith("eval"):
                lines += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"/>'
                          for x, y in (xy(s, v) for s, v in values)]
            lines.append(f'<text x="{right - 100}" y="{top + 14 + 16 * i}" fill="{color}">{label}</text>')
    lines.append("</svg>")
    return "\n".join(lines) + "\n"
