# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Checks of what a user passes to a model, shared by every family through `PreTrainedModel`.

Two kinds, split by cost:

- `check_model_inputs` runs before every forward and looks only at types and shapes (a few
  attribute reads), so it costs nothing measurable even at one token per decoding step:
  arrays and lists instead of tensors, `input_ids` without a batch dimension, a padding mask
  made for other ids.
- `explain_failure` runs only after a forward failed, and reads values: token ids outside
  the vocabulary and inputs longer than the position table surface deep inside as an
  embedding's "index out of range in self" or a broadcasting error between position and
  token embeddings, which say nothing about the cause.
"""
from .. import core

TENSOR_ARGUMENTS = ("attention_mask", "token_type_ids", "position_ids", "inputs_embeds")


class InputOutOfRangeError(IndexError):
    """Token ids or positions beyond what the model's embedding tables hold. An IndexError, as
    torch's embedding lookup raises."""


def not_a_tensor_error(name, value):
    kind = type(value)
    return TypeError(
        f"{name} must be a mindnlp.core Tensor, not {kind.__module__}.{kind.__qualname__}: convert it with "
        f"core.tensor({name}), or call the tokenizer with return_tensors=\"pt\"")


def check_model_inputs(model, args, kwargs):
    """Refuse non-tensor inputs, input_ids without a batch dimension (multiple-choice heads take
    (batch, choices, sequence)), and a padding mask of input_ids' rank but another shape when
    the caller manages no cache. Returns the input_ids (or None) for `explain_failure`."""
    ids = None
    if model.main_input_name == "input_ids":
        ids = args[0] if args else kwargs.get("input_ids")
        if ids is not None:
            if not isinstance(ids, core.Tensor):
                raise not_a_tensor_error("input_ids", ids)
            if ids.ndim < 2:
                raise ValueError(
                    f"input_ids should have 2 dimensions (batch_size, sequence_length), got shape {tuple(ids.shape)}"
                    + (": add the batch dimension with input_ids.unsqueeze(0)" if ids.ndim == 1 else ""))
    for name in TENSOR_ARGUMENTS:
        value = kwargs.get(name)
        if isinstance(value, dict) and name == "attention_mask":
            # masks prepared per layer type, as a multimodal model hands its language model
            value = next((mask for mask in value.values() if not isinstance(mask, core.Tensor)), None)
        if value is not None and not isinstance(value, core.Tensor):
            raise not_a_tensor_error(name, value)
    mask = kwargs.get("attention_mask")
    mask = None if isinstance(mask, dict) else mask
    # A caller that passes past_key_values (even None, as generation loops do) manages positions
    # itself; the attention layers then check the mask against the keys.
    if (mask is not None and ids is not None and mask.ndim == ids.ndim and "past_key_values" not in kwargs
            and mask.shape != ids.shape):
        raise ValueError(
            f"attention_mask has shape {tuple(mask.shape)} but input_ids has shape {tuple(ids.shape)}: the mask "
            "needs one entry per token; pass the attention_mask the tokenizer returned with these input_ids")
    return ids


def _past_length(kwargs):
    cache = kwargs.get("past_key_values")
    return cache.get_seq_length() if hasattr(cache, "get_seq_length") else 0


def _position_table(model):
    """(config attribute, size) of a learned or fixed position table, None for rotary models,
    which have no table to run past."""
    for attribute in ("max_position_embeddings", "n_positions"):
        size = getattr(model.config, attribute, None)
        if size is None:
            continue
        for module in model.modules():
            if isinstance(module, core.nn.Embedding) and module.num_embeddings == size:
                return attribute, size
    return None


def explain_failure(model, err, ids, kwargs):
    """The InputOutOfRangeError that explains why a forward over `ids` failed with `err`, or
    None when the ids are not the cause."""
    if isinstance(err, InputOutOfRangeError) or ids is None or ids.numel() == 0 or ids.is_meta:
        return None
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    vocab = getattr(embeddings, "num_embeddings", None) or getattr(model.config, "vocab_size", None)
    low, high = int(ids.min()), int(ids.max())
    if vocab is not None and (low < 0 or high >= vocab):
        return InputOutOfRangeError(
            f"input_ids holds the token id {low if low < 0 else high}, outside the model's vocabulary (ids 0 to "
            f"{vocab - 1}): were the ids made by the tokenizer of another model?")
    table = _position_table(model)
    past = _past_length(kwargs)
    length = ids.shape[-1] + past
    # Some families (RoBERTa) start counting positions after the padding index, so the table
    # runs out a little before its size; the failure itself says it did.
    if table is not None and length > table[1] - 2:
        cached = f" ({past} of them cached)" if past else ""
        return InputOutOfRangeError(
            f"the input is {length} tokens long{cached}, but the model's position table holds {table[1]} positions "
            f"(config.{table[0]}): truncate it, e.g. tokenizer(..., truncation=True, max_length={table[1]})")
    return None
