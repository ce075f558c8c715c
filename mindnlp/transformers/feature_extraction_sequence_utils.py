# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SequenceFeatureExtractor: the padding and truncation of audio (or any sequence of feature
vectors) shared by speech feature extractors, as Hugging Face's.

A batch is a list of sequences of different lengths; `pad` cuts them to `max_length`
(`truncation=True`) and pads them with `padding_value` on `padding_side` to the longest, to
`max_length`, or not at all, rounding the target up to `pad_to_multiple_of`, and returns the
attention mask (1 on real samples) when asked.
"""
import numpy as np

from .feature_extraction_utils import BatchFeature, FeatureExtractionMixin
from .tokenization_utils_base import PaddingStrategy


class SequenceFeatureExtractor(FeatureExtractionMixin):
    """`feature_size` values per step, sampled at `sampling_rate`, padded with `padding_value`."""

    model_input_names = ["input_values", "attention_mask"]

    def __init__(self, feature_size, sampling_rate, padding_value, **kwargs):
        self.feature_size = feature_size
        self.sampling_rate = sampling_rate
        self.padding_value = padding_value
        self.padding_side = kwargs.pop("padding_side", "right")
        self.return_attention_mask = kwargs.pop("return_attention_mask", True)
        super().__init__(**kwargs)

    def pad(self, processed_features, padding=True, max_length=None, truncation=False, pad_to_multiple_of=None,
            return_attention_mask=None, return_tensors=None):
        """The batch truncated and padded (see the module docstring). `processed_features` is a
        BatchFeature or dict of lists (or a list of dicts); the result has NumPy rows unless
        `return_tensors` asks otherwise, or the inputs were tensors."""
        if isinstance(processed_features, (list, tuple)) and processed_features \
                and isinstance(processed_features[0], (dict, BatchFeature)):
            processed_features = {key: [example[key] for example in processed_features]
                                  for key in processed_features[0].keys()}
        input_name = self.model_input_names[0]
        if input_name not in processed_features:
            raise ValueError("You should supply an instance of `transformers.BatchFeature` or list of "
                             f"`transformers.BatchFeature` to this method that includes {input_name}, but you "
                             f"provided {list(processed_features.keys())}")
        return_attention_mask = self.return_attention_mask if return_attention_mask is None else return_attention_mask
        rows = processed_features[input_name]
        if len(rows) == 0:
            if return_attention_mask:
                processed_features["attention_mask"] = []
            return processed_features
        if return_tensors is None:
            first = rows[0]
            return_tensors = "pt" if hasattr(first, "numpy") and not isinstance(first, np.ndarray) else "np"
        features = {key: [np.asarray(item.numpy() if hasattr(item, "numpy") else item) for item in value]
                    if not isinstance(value[0], (int, float)) else np.asarray(value)
                    for key, value in processed_features.items()}
        strategy = self._get_padding_strategies(padding, max_length)
        batch_size = len(features[input_name])
        if any(len(value) != batch_size for value in features.values()):
            raise ValueError("Some items in the output dictionary have a different batch size than others.")
        examples = [self._truncate({key: value[i] for key, value in features.items()}, max_length,
                                   pad_to_multiple_of, truncation) for i in range(batch_size)]
        if strategy == PaddingStrategy.LONGEST:
            max_length = max(len(example[input_name]) for example in examples)
            strategy = PaddingStrategy.MAX_LENGTH
        batch = {}
        for example in examples:
            padded = self._pad(example, max_length, strategy, pad_to_multiple_of, return_attention_mask)
            for key, value in padded.items():
                if value.dtype is np.dtype(np.float64):
                    value = value.astype(np.float32)
                batch.setdefault(key, []).append(value)
        return BatchFeature(batch, tensor_type=return_tensors)

    def _pad(self, features, max_length=None, padding_strategy=PaddingStrategy.DO_NOT_PAD, pad_to_multiple_of=None,
             return_attention_mask=None):
        """One example padded to `max_length` (rounded up to `pad_to_multiple_of`)."""
        values = features[self.model_input_names[0]]
        if padding_strategy == PaddingStrategy.LONGEST:
            max_length = len(values)
        if max_length is not None and pad_to_multiple_of is not None and max_length % pad_to_multiple_of:
            max_length = (max_length // pad_to_multiple_of + 1) * pad_to_multiple_of
        if return_attention_mask and "attention_mask" not in features:
            features["attention_mask"] = np.ones(len(values), dtype=np.int32)
        if padding_strategy != PaddingStrategy.DO_NOT_PAD and len(values) < max_length:
            missing = max_length - len(values)
            if self.padding_side not in ("left", "right"):
                raise ValueError(f"Invalid padding strategy:{self.padding_side}")
            before, after = (0, missing) if self.padding_side == "right" else (missing, 0)
            if return_attention_mask:
                features["attention_mask"] = np.pad(features["attention_mask"], (before, after))
            width = ((before, after), (0, 0)) if self.feature_size > 1 else (before, after)
            features[self.model_input_names[0]] = np.pad(values, width, "constant",
                                                         constant_values=self.padding_value)
        return features

    def _truncate(self, features, max_length=None, pad_to_multiple_of=None, truncation=None):
        """One example cut to `max_length` (rounded up to `pad_to_multiple_of`) when truncating."""
        if not truncation:
            return features
        if max_length is None:
            raise ValueError("When setting ``truncation=True``, make sure that ``max_length`` is defined.")
        if pad_to_multiple_of is not None and max_length % pad_to_multiple_of:
            max_length = (max_length // pad_to_multiple_of + 1) * pad_to_multiple_of
        name = self.model_input_names[0]
        if len(features[name]) > max_length:
            features[name] = features[name][:max_length]
            if "attention_mask" in features:
                features["attention_mask"] = features["attention_mask"][:max_length]
        return features

    def _get_padding_strategies(self, padding=False, max_length=None):
        if padding is False:
            strategy = PaddingStrategy.DO_NOT_PAD
        elif padding is True:
            strategy = PaddingStrategy.LONGEST
        else:
            strategy = PaddingStrategy(padding)
        if max_length is None and strategy == PaddingStrategy.MAX_LENGTH:
            raise ValueError(f"When setting ``padding={PaddingStrategy.MAX_LENGTH}``, make sure that max_length is "
                             "defined")
        if strategy != PaddingStrategy.DO_NOT_PAD and self.padding_value is None:
            raise ValueError("Asking to pad but the feature_extractor does not have a padding value. Please select a "
                             "value to use as `padding_value`. For example: `feature_extractor.padding_value = 0.0`.")
        return strategy


__all__ = ["SequenceFeatureExtractor"]
