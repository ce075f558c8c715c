# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Data collators: turn a list of dataset examples into one batch of tensors, as HF's do.

`return_tensors="pt"` gives mindnlp core tensors (what models take), `"np"` NumPy arrays. Padding
goes through the tokenizer's `pad`, so the pad id, padding side and attention mask follow the
tokenizer. Masking for MLM draws from the core RNG (or a seeded generator): which tokens are
masked differs from torch's stream, the 80/10/10 rule and the labels' layout do not.
"""
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import core
from ..tokenization_utils_base import PaddingStrategy


def _check_return_tensors(return_tensors):
    if return_tensors not in ("pt", "np"):
        raise ValueError(f"Framework '{return_tensors}' not recognized!")


def _as_output(array, return_tensors):
    return core.tensor(array) if return_tensors == "pt" else array


def _to_numpy(value):
    if isinstance(value, core.Tensor):
        return value.cpu().numpy()
    return np.asarray(value)


def _is_integer(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def default_data_collator(features, return_tensors="pt"):
    """Stack same-shaped fields of dict-like examples.

    `label` (a number per example) and `label_ids` (a list per example) become `labels`, int64 for
    integers and float32 otherwise; string and None fields are dropped.
    """
    _check_return_tensors(return_tensors)
    if not isinstance(features[0], Mapping):
        features = [vars(f) for f in features]
    first = features[0]
    batch = {}
    if first.get("label") is not None:
        label = first["label"]
        label = label.item() if isinstance(label, (core.Tensor, np.ndarray)) else label
        dtype = np.int64 if _is_integer(label) else np.float32
        labels = np.array([_to_numpy(f["label"]) for f in features], dtype=dtype)
        batch["labels"] = _as_output(labels, return_tensors)
    elif first.get("label_ids") is not None:
        if isinstance(first["label_ids"], (core.Tensor, np.ndarray)):
            labels = np.stack([_to_numpy(f["label_ids"]) for f in features])
        else:
            dtype = np.int64 if _is_integer(first["label_ids"][0]) else np.float32
            labels = np.array([f["label_ids"] for f in features], dtype=dtype)
        batch["labels"] = _as_output(labels, return_tensors)
    for key, value in first.items():
        if key in ("label", "label_ids") or value is None or isinstance(value, str):
            continue
        if isinstance(value, core.Tensor) and return_tensors == "pt":
            batch[key] = core.stack([f[key] for f in features])
        elif isinstance(value, (core.Tensor, np.ndarray)):
            batch[key] = _as_output(np.stack([_to_numpy(f[key]) for f in features]), return_tensors)
        else:
            batch[key] = _as_output(np.array([f[key] for f in features]), return_tensors)
    return batch


@dataclass
class DefaultDataCollator:
    """`default_data_collator` as an object, with return_tensors fixed at construction."""

    return_tensors: str = "pt"

    def __call__(self, features, return_tensors=None):
        return default_data_collator(features, return_tensors or self.return_tensors)


class DataCollatorWithFlattening(DefaultDataCollator):
    """Padding-free batches: the examples joined into one row of shape (1, total_tokens).

    position_ids restart at 0 for each example (attention reads the boundaries from them),
    and each example's first label is `separator_id` so that no token is predicted across
    a boundary. With return_flash_attn_kwargs, the cumulative lengths (cu_seq_lens_q/k) and
    the longest length (max_length_q/k) are added; with return_seq_idx, each token's example index.
    """

    def __init__(self, *args, return_position_ids=True, separator_id=-100, return_flash_attn_kwargs=False,
                 return_seq_idx=False, **kwargs):
        if args:
            kwargs.setdefault("return_tensors", args[0])
        self.return_tensors = kwargs.pop("return_tensors", "pt")
        if kwargs:
            raise TypeError(f"DataCollatorWithFlattening got unexpected arguments {sorted(kwargs)}")
        self.return_position_ids = return_position_ids
        self.separator_id = separator_id
        self.return_flash_attn_kwargs = return_flash_attn_kwargs
        self.return_seq_idx = return_seq_idx

    _INT64_KEYS = ("input_ids", "labels", "position_ids")
    _ROW_KEYS = ("input_ids", "labels", "position_ids", "seq_idx")
    _PYTHON_INT_KEYS = ("max_length_q", "max_length_k")

    def __call__(self, features, return_tensors=None, separator_id=None):
        return_tensors = return_tensors or self.return_tensors
        separator_id = self.separator_id if separator_id is None else separator_id
        if return_tensors not in ("pt", "np"):
            raise ValueError(f'return_tensors must be one of ("pt", "np"), {return_tensors=} not supported')
        batch = {"input_ids": [], "labels": []}
        if self.return_position_ids:
            batch["position_ids"] = []
        if self.return_seq_idx:
            batch["seq_idx"] = []
        lengths = []
        for index, sample in enumerate(features):
            ids = _as_list(sample["input_ids"])
            labels = _as_list(sample["labels"]) if "labels" in sample else ids
            batch["input_ids"] += ids
            batch["labels"] += [separator_id] + labels[1:]
            if self.return_position_ids:
                batch["position_ids"] += list(range(len(ids)))
            if self.return_seq_idx:
                batch["seq_idx"] += [index] * len(ids)
            lengths.append(len(ids))
        if self.return_flash_attn_kwargs:
            batch["cu_seq_lens_q"] = batch["cu_seq_lens_k"] = [0] + np.cumsum(lengths).tolist()
            batch["max_length_q"] = batch["max_length_k"] = max(lengths, default=0)
        make = core.tensor if return_tensors == "pt" else np.array
        int64, int32 = (core.int64, core.int32) if return_tensors == "pt" else (np.int64, np.int32)
        for key, value in batch.items():
            if key in self._PYTHON_INT_KEYS:
                continue
            batch[key] = make([value] if key in self._ROW_KEYS else value,
                              dtype=int64 if key in self._INT64_KEYS else int32)
        return batch


def _as_list(values):
    return values.tolist() if hasattr(values, "tolist") else list(values)


def _rename_labels(batch):
    for name in ("label", "label_ids"):
        if name in batch:
            batch["labels"] = batch.pop(name)
    return batch


@dataclass
class DataCollatorWithPadding:
    """Pad every field to the longest example of the batch (or max_length) with the tokenizer."""

    tokenizer: Any
    padding: Any = True
    max_length: int = None
    pad_to_multiple_of: int = None
    return_tensors: str = "pt"

    def __call__(self, features):
        batch = self.tokenizer.pad(features, padding=self.padding, max_length=self.max_length,
                                   pad_to_multiple_of=self.pad_to_multiple_of, return_tensors=self.return_tensors)
        return _rename_labels(batch)


def _pad_labels(labels, length, pad_id, side):
    rows = [list(_to_numpy(label).tolist()) if not isinstance(label, list) else label for label in labels]
    if side == "right":
        return [row + [pad_id] * (length - len(row)) for row in rows]
    return [[pad_id] * (length - len(row)) + row for row in rows]


def _pad_all_but_labels(collator, features, return_tensors):
    """(batch, label key, labels): the features without their labels ("label" or "labels"),
    padded by the collator's tokenizer with its padding settings, and the labels apart (None
    when the features have none), which each collator pads its own way."""
    _check_return_tensors(return_tensors)
    label_name = "label" if "label" in features[0] else "labels"
    labels = [f[label_name] for f in features] if label_name in features[0] else None
    inputs = [{k: v for k, v in f.items() if k != label_name} for f in features]
    batch = collator.tokenizer.pad(inputs, padding=collator.padding, max_length=collator.max_length,
                                   pad_to_multiple_of=collator.pad_to_multiple_of, return_tensors=return_tensors)
    return batch, label_name, labels


@dataclass
class DataCollatorForTokenClassification:
    """Pad the inputs with the tokenizer and the per-token labels with label_pad_token_id (-100)."""

    tokenizer: Any
    padding: Any = True
    max_length: int = None
    pad_to_multiple_of: int = None
    label_pad_token_id: int = -100
    return_tensors: str = "pt"

    def __call__(self, features, return_tensors=None):
        return_tensors = return_tensors or self.return_tensors
        batch, label_name, labels = _pad_all_but_labels(self, features, return_tensors)
        if labels is None:
            return batch
        length = _to_numpy(batch["input_ids"]).shape[1]
        padded = _pad_labels(labels, length, self.label_pad_token_id, self.tokenizer.padding_side)
        batch[label_name] = _as_output(np.array(padded, dtype=np.int64), return_tensors)
        return batch


@dataclass
class DataCollatorForSeq2Seq:
    """Pad encoder inputs with the tokenizer and `labels` with label_pad_token_id; when the model has
    `prepare_decoder_input_ids_from_labels`, also build `decoder_input_ids` from the padded labels."""

    tokenizer: Any
    model: Any = None
    padding: Any = True
    max_length: int = None
    pad_to_multiple_of: int = None
    label_pad_token_id: int = -100
    return_tensors: str = "pt"

    def __call__(self, features, return_tensors=None):
        return_tensors = return_tensors or self.return_tensors
        batch, _, labels = _pad_all_but_labels(self, features, return_tensors)
        if labels is not None and all(label is None for label in labels):
            labels = None
        no_padding = self.padding is False or self.padding == PaddingStrategy.DO_NOT_PAD
        if labels is None:
            batch["labels"] = None
            return batch
        if no_padding:
            batch["labels"] = [list(_to_numpy(label).tolist()) for label in labels]
            return batch
        if self.padding == PaddingStrategy.MAX_LENGTH and self.max_length is not None:
            length = self.max_length
        else:
            length = max(len(label) for label in labels)
        if self.pad_to_multiple_of is not None:
            length = (length + self.pad_to_multiple_of - 1) // self.pad_to_multiple_of * self.pad_to_multiple_of
        padded = _pad_labels(labels, length, self.label_pad_token_id, self.tokenizer.padding_side)
        batch["labels"] = _as_output(np.array(padded, dtype=np.int64), return_tensors)
        if self.model is not None and hasattr(self.model, "prepare_decoder_input_ids_from_labels"):
            batch["decoder_input_ids"] = self.model.prepare_decoder_input_ids_from_labels(labels=batch["labels"])
        return batch


def _collate_token_lists(examples, tokenizer, pad_to_multiple_of):
    """Stack token-id sequences, padding with the tokenizer's pad id when lengths differ."""
    rows = [_to_numpy(e).astype(np.int64) for e in examples]
    length = len(rows[0])
    if all(len(r) == length for r in rows) and (pad_to_multiple_of is None or length % pad_to_multiple_of == 0):
        return np.stack(rows)
    if tokenizer.pad_token is None:
        raise ValueError("You are attempting to pad samples but the tokenizer you are using "
                         f"({type(tokenizer).__name__}) does not have a pad token.")
    length = max(len(r) for r in rows)
    if pad_to_multiple_of is not None and length % pad_to_multiple_of != 0:
        length = (length // pad_to_multiple_of + 1) * pad_to_multiple_of
    result = np.full((len(rows), length), tokenizer.pad_token_id, dtype=np.int64)
    for i, row in enumerate(rows):
        if tokenizer.padding_side == "right":
            result[i, :len(row)] = row
        else:
            result[i, length - len(row):] = row
    return result


@dataclass
class DataCollatorForLanguageModeling:
    """Batches for language modelling.

    mlm=True: each non-special token is selected with mlm_probability; labels keep the selected
    tokens (-100 elsewhere); of the selected inputs, mask_replace_prob become the mask token,
    random_replace_prob a random token, the rest stay (80/10/10 by default).
    mlm=False (causal LM): labels are the input ids with padding set to -100; the model shifts them.
    """

    tokenizer: Any
    mlm: bool = True
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    pad_to_multiple_of: int = None
    return_tensors: str = "pt"
    seed: int = None

    def __post_init__(self):
        if self.mlm:
            if self.tokenizer.mask_token is None:
                raise ValueError("This tokenizer does not have a mask token which is necessary for masked language "
                                 "modeling. You should pass `mlm=False` to train on causal language modeling instead.")
            if self.mlm_probability is None or not 0 <= self.mlm_probability <= 1:
                raise ValueError("mlm_probability should be between 0 and 1.")
        if self.mask_replace_prob + self.random_replace_prob > 1:
            raise ValueError("The sum of mask_replace_prob and random_replace_prob should not exceed 1")
        if not 0 <= self.mask_replace_prob <= 1:
            raise ValueError("mask_replace_prob should be between 0 and 1.")
        if not 0 <= self.random_replace_prob <= 1:
            raise ValueError("random_replace_prob should be between 0 and 1.")
        self.generator = core.Generator().manual_seed(self.seed) if self.seed is not None else None

    def __call__(self, examples, return_tensors=None):
        return_tensors = return_tensors or self.return_tensors
        _check_return_tensors(return_tensors)
        if isinstance(examples[0], Mapping):
            batch = self.tokenizer.pad(examples, return_tensors="np", pad_to_multiple_of=self.pad_to_multiple_of)
            batch = {key: np.asarray(value) for key, value in batch.items()}
        else:
            batch = {"input_ids": _collate_token_lists(examples, self.tokenizer, self.pad_to_multiple_of)}
        special_tokens_mask = batch.pop("special_tokens_mask", None)
        if self.mlm:
            batch["input_ids"], batch["labels"] = self.mask_tokens(batch["input_ids"], special_tokens_mask)
        else:
            labels = batch["input_ids"].copy()
            if self.tokenizer.pad_token_id is not None:
                labels[labels == self.tokenizer.pad_token_id] = -100
            batch["labels"] = labels
        return {key: _as_output(value, return_tensors) for key, value in batch.items()}

    def _bernoulli(self, probability, shape):
        draws = core.rand(*shape, dtype=core.float64, generator=self.generator).numpy()
        return draws < probability

    def mask_tokens(self, inputs, special_tokens_mask=None):
        """(masked inputs, labels) as int64 arrays, per the 80/10/10 rule."""
        inputs = np.array(inputs, dtype=np.int64)
        labels = inputs.copy()
        if special_tokens_mask is None:
            special_tokens_mask = [self.tokenizer.get_special_tokens_mask(row, already_has_special_tokens=True)
                                   for row in labels.tolist()]
        probability = np.full(labels.shape, self.mlm_probability)
        probability[np.asarray(special_tokens_mask, dtype=bool)] = 0.0
        masked = self._bernoulli(probability, labels.shape)
        labels[~masked] = -100
        replaced = self._bernoulli(self.mask_replace_prob, labels.shape) & masked
        inputs[replaced] = self.tokenizer.convert_tokens_to_ids(self.tokenizer.mask_token)
        if self.mask_replace_prob == 1 or self.random_replace_prob == 0:
            return inputs, labels
        scaled = self.random_replace_prob / (1 - self.mask_replace_prob)
        randomized = self._bernoulli(scaled, labels.shape) & masked & ~replaced
        words = core.randint(0, len(self.tokenizer), tuple(labels.shape), generator=self.generator).numpy()
        inputs[randomized] = words[randomized]
        return inputs, labels
