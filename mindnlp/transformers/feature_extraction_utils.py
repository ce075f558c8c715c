# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Feature extractors: what turns raw audio into a model's input arrays, with Hugging Face's
names and files.

`BatchFeature` is their output, a dict that also reads as attributes and converts its fields
to NumPy arrays or mindnlp tensors (`return_tensors="np" | "pt"`). `FeatureExtractionMixin`
holds a feature extractor's settings and saves / loads them as `preprocessor_config.json`,
the file HF writes, so either library reads the other's.
"""
import copy
import json
import os
from collections import UserDict

import numpy as np

from .tokenization_utils_base import TensorType
from .utils.hub import cached_file

FEATURE_EXTRACTOR_NAME = "preprocessor_config.json"
_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")


class BatchFeature(UserDict):
    """A feature extractor's output: `input_features`, `attention_mask`, ... by key or attribute."""

    def __init__(self, data=None, tensor_type=None):
        super().__init__(data)
        self.convert_to_tensors(tensor_type)

    def __getattr__(self, name):
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getstate__(self):
        return {"data": self.data}

    def __setstate__(self, state):
        self.data = state["data"]

    def convert_to_tensors(self, tensor_type=None):
        """Every field as a NumPy array ("np") or a mindnlp core tensor ("pt", "ms"). Rows of
        different lengths (an unpadded batch) make a NumPy array of objects, one array per row,
        as in HF; they cannot make a tensor, which is an error naming the field."""
        if tensor_type is None:
            return self
        tensor_type = TensorType(tensor_type)
        from mindnlp import core

        for key, value in self.items():
            if isinstance(value, core.Tensor):
                array = value.numpy() if tensor_type == TensorType.NUMPY else value
            else:
                if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, np.ndarray)):
                    shapes = {np.shape(item) for item in value}
                    if len(shapes) > 1:
                        if tensor_type != TensorType.NUMPY:
                            raise ValueError(f"cannot make a tensor of `{key}`: its rows have different shapes "
                                             f"{sorted(shapes)}; pass padding=True to make them equal")
                        ragged = np.empty(len(value), dtype=object)
                        ragged[:] = [np.asarray(item) for item in value]
                        self[key] = ragged
                        continue
                array = np.asarray(value)
                if tensor_type != TensorType.NUMPY:
                    array = core.tensor(array)
            self[key] = array
        return self

    def to(self, device):
        """Move every tensor field to `device`; returns self."""
        self.data = {key: value.to(device) if hasattr(value, "to") else value for key, value in self.data.items()}
        return self


class FeatureExtractionMixin:
    """Settings held as attributes, built from keyword arguments; saved to and loaded from
    `preprocessor_config.json` (with `feature_extractor_type`, the class name)."""

    # derived from the settings at construction, so never written to the file
    _derived_attributes = ()
    # the key that names the class in the file (image processors write `image_processor_type`)
    _type_key = "feature_extractor_type"

    def __init__(self, **kwargs):
        kwargs.pop(self._type_key, None)
        kwargs.pop("processor_class", None)
        for key, value in kwargs.items():
            setattr(self, key, value)

    def to_dict(self):
        output = {key: copy.deepcopy(value) for key, value in self.__dict__.items()
                  if not key.startswith("_") and key not in self._derived_attributes}
        output[self._type_key] = type(self).__name__
        return output

    def to_json_string(self):
        def plain(value):
            if isinstance(value, np.ndarray):
                return value.tolist()
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            return value

        return json.dumps({k: plain(v) for k, v in self.to_dict().items()}, indent=2, sort_keys=True) + "\n"

    def to_json_file(self, json_file_path):
        with open(json_file_path, "w", encoding="utf-8") as writer:
            writer.write(self.to_json_string())

    def __repr__(self):
        return f"{type(self).__name__} {self.to_json_string()}"

    def save_pretrained(self, save_directory, **kwargs):
        """Write `save_directory`/preprocessor_config.json; returns [its path]."""
        if os.path.isfile(save_directory):
            raise AssertionError(f"Provided path ({save_directory}) should be a directory, not a file")
        os.makedirs(save_directory, exist_ok=True)
        path = os.path.join(save_directory, FEATURE_EXTRACTOR_NAME)
        self.to_json_file(path)
        return [path]

    @classmethod
    def get_feature_extractor_dict(cls, pretrained_model_name_or_path, **kwargs):
        """(the settings in a folder's or repo's preprocessor_config.json, the other kwargs)."""
        location = {k: kwargs.pop(k) for k in _HUB_KWARGS if k in kwargs}
        if os.path.isfile(str(pretrained_model_name_or_path)):
            path = str(pretrained_model_name_or_path)
        else:
            path = cached_file(pretrained_model_name_or_path, FEATURE_EXTRACTOR_NAME, **location)
        with open(path, encoding="utf-8") as reader:
            return json.load(reader), kwargs

    @classmethod
    def from_dict(cls, feature_extractor_dict, **kwargs):
        """Built from saved settings; keyword arguments override them. With
        `return_unused_kwargs=True`, returns (the extractor, the kwargs it does not know)."""
        return_unused_kwargs = kwargs.pop("return_unused_kwargs", False)
        settings = dict(feature_extractor_dict)
        unused = {}
        for key, value in kwargs.items():
            if key in settings or key in cls._init_parameters():
                settings[key] = value
            else:
                unused[key] = value
        extractor = cls(**settings)
        return (extractor, unused) if return_unused_kwargs else extractor

    @classmethod
    def _init_parameters(cls):
        import inspect

        return set(inspect.signature(cls.__init__).parameters) - {"self", "kwargs"}

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        settings, kwargs = cls.get_feature_extractor_dict(pretrained_model_name_or_path, **kwargs)
        return cls.from_dict(settings, **kwargs)

    @classmethod
    def from_json_file(cls, json_file):
        with open(json_file, encoding="utf-8") as reader:
            return cls(**json.load(reader))


__all__ = ["BatchFeature", "FeatureExtractionMixin"]
