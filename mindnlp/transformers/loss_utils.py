# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The losses heads compute when labels are given, with HF's conventions (-100 is ignored)."""
from .. import core
from ..core import nn


def sequence_classification_loss(config, num_labels, logits, labels):
    """Regression, single-label or multi-label loss, chosen (and remembered) as HF does."""
    if config.problem_type is None:
        if num_labels == 1:
            config.problem_type = "regression"
        elif num_labels > 1 and labels.dtype in (core.int64, core.int32):
            config.problem_type = "single_label_classification"
        else:
            config.problem_type = "multi_label_classification"
    if config.problem_type == "regression":
        if num_labels == 1:
            return nn.functional.mse_loss(logits.squeeze(), labels.squeeze().to(logits.dtype))
        return nn.functional.mse_loss(logits, labels.to(logits.dtype))
    if config.problem_type == "single_label_classification":
        return nn.functional.cross_entropy(logits.view(-1, num_labels), labels.view(-1))
    return nn.functional.binary_cross_entropy_with_logits(logits, labels.to(logits.dtype))


def masked_lm_loss(logits, labels, vocab_size):
    """Cross-entropy of logits against labels aligned with them (-100 ignored): masked LMs, and
    encoder-decoders, whose decoder inputs are the labels already shifted right."""
    return nn.functional.cross_entropy(logits.view(-1, vocab_size).float(), labels.to(logits.device).reshape(-1),
                                       ignore_index=-100)


def causal_lm_loss(logits, labels, vocab_size, num_items_in_batch=None, ignore_index=-100, shift_labels=None):
    """Predict token t+1 from position t: shift labels left and pad the end with ignore_index."""
    logits = logits.float()
    if shift_labels is None:
        pad = core.full((labels.shape[0], 1), ignore_index, dtype=labels.dtype, device=labels.device)
        shift_labels = core.cat([labels[:, 1:], pad], dim=1)
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = nn.functional.cross_entropy(logits.view(-1, vocab_size), shift_labels.reshape(-1),
                                       ignore_index=ignore_index, reduction=reduction)
    if num_items_in_batch is not None:
        loss = loss / num_items_in_batch
    return loss


def question_answering_loss(start_logits, end_logits, start_positions, end_positions):
    """Mean of start and end cross-entropies; out-of-range positions are ignored."""
    if start_positions.ndim > 1:
        start_positions = start_positions.squeeze(-1)
    if end_positions.ndim > 1:
        end_positions = end_positions.squeeze(-1)
    ignored_index = start_logits.shape[1]
    start_positions = start_positions.clamp(0, ignored_index)
    end_positions = end_positions.clamp(0, ignored_index)
    start_loss = nn.functional.cross_entropy(start_logits, start_positions, ignore_index=ignored_index)
    end_loss = nn.functional.cross_entropy(end_logits, end_positions, ignore_index=ignored_index)
    return (start_loss + end_loss) / 2
