# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Loss helpers of the Trainer (HF's `trainer_pt_utils`): label smoothing."""
from dataclasses import dataclass

from .. import core
from ..core import nn


@dataclass
class LabelSmoother:
    """Label-smoothed cross-entropy on a model's output, as the Trainer computes it when
    `label_smoothing_factor` is set.

    The loss is (1 - epsilon) * NLL + epsilon * the mean over classes of -log p, both averaged
    over the labels that are not `ignore_index` (or divided by `num_items_in_batch` when the
    Trainer counts the labels of a whole accumulated batch). With `shift_labels`, position t's
    logits are scored against label t + 1, as in a causal LM.

    Args:
        epsilon (`float`, defaults to 0.1): the label smoothing factor.
        ignore_index (`int`, defaults to -100): the label value that marks positions to ignore.
    """

    epsilon: float = 0.1
    ignore_index: int = -100

    def __call__(self, model_output, labels, shift_labels=False, num_items_in_batch=None):
        logits = model_output["logits"] if isinstance(model_output, dict) else model_output[0]
        if shift_labels:
            logits = logits[..., :-1, :].contiguous()
            labels = labels[..., 1:].contiguous()

        log_probs = -nn.functional.log_softmax(logits, dim=-1)
        if labels.dim() == log_probs.dim() - 1:
            labels = labels.unsqueeze(-1)

        padding_mask = labels.eq(self.ignore_index)
        # -100 is not a class index: gather at 0 instead, the mask zeroes those positions anyway.
        labels = core.clamp(labels, min=0)
        nll_loss = log_probs.gather(dim=-1, index=labels)
        smoothed_loss = log_probs.sum(dim=-1, keepdim=True, dtype=core.float32)
        nll_loss = nll_loss.masked_fill(padding_mask, 0.0)
        smoothed_loss = smoothed_loss.masked_fill(padding_mask, 0.0)

        if num_items_in_batch is None:
            denominator = padding_mask.numel() - padding_mask.long().sum()
        elif isinstance(num_items_in_batch, core.Tensor):
            denominator = num_items_in_batch.to(nll_loss.device)
        else:
            denominator = num_items_in_batch
        nll_loss = nll_loss.sum() / denominator
        smoothed_loss = smoothed_loss.sum() / (denominator * log_probs.shape[-1])
        return (1 - self.epsilon) * nll_loss + self.epsilon * smoothed_loss


class ShardedBatchSampler:
    """This process's batches in a data-parallel job: of each run of `num_processes` consecutive
    batches, the `process_index`-th (accelerate's BatchSamplerShard). The batches of one step, over
    all ranks, are then exactly what one process with num_processes times the batch size draws.
    An incomplete last run is completed with the epoch's first batches, as accelerate's
    even_batches does, so that every rank takes the same number of steps."""

    def __init__(self, batch_sampler, num_processes, process_index):
        self.batch_sampler = batch_sampler
        self.num_processes = num_processes
        self.process_index = process_index

    @property
    def sampler(self):
        return getattr(self.batch_sampler, "sampler", None)

    @property
    def batch_size(self):
        return getattr(self.batch_sampler, "batch_size", None)

    def __len__(self):
        return -(-len(self.batch_sampler) // self.num_processes)

    def __iter__(self):
        batches = list(self.batch_sampler)
        if not batches:
            return iter(())
        short = -len(batches) % self.num_processes
        batches += (batches * (short // len(batches) + 1))[:short]
        return iter(batches[self.process_index::self.num_processes])


class IterableDatasetShard:
    """This process's examples of an iterable dataset in a data-parallel job (accelerate's
    IterableDatasetShard): examples are read in runs of batch_size x num_processes and each process
    keeps its batch_size slice of every run, so one step's batches over all ranks are the batch one
    process with num_processes times the batch size reads. A last, incomplete run is dropped with
    drop_last, else completed with the stream's first examples so every rank takes the same steps."""

    def __init__(self, dataset, batch_size, num_processes, process_index, drop_last=False):
        self.dataset = dataset
        self.batch_size = batch_size
        self.num_processes = num_processes
        self.process_index = process_index
        self.drop_last = drop_last

    def set_epoch(self, epoch):
        if hasattr(self.dataset, "set_epoch"):
            self.dataset.set_epoch(epoch)

    def __iter__(self):
        run = self.batch_size * self.num_processes
        mine = slice(self.process_index * self.batch_size, (self.process_index + 1) * self.batch_size)
        first, buffer = [], []
        for example in self.dataset:
            if len(first) < run:
                first.append(example)
            buffer.append(example)
            if len(buffer) == run:
                yield from buffer[mine]
                buffer = []
        if buffer and not self.drop_last:
            while len(buffer) < run:
                buffer += first[:run - len(buffer)]
            yield from buffer[mine]
