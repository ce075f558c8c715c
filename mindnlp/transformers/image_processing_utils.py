# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BaseImageProcessor: what turns images into a vision model's `pixel_values`, with Hugging
Face's names, settings and files.

A processor's settings (`do_resize`, `size`, `resample`, `do_rescale`, `rescale_factor`,
`do_normalize`, `image_mean`, `image_std`, `do_convert_rgb`, and a subclass's own) default to
its class attributes, are overridden at construction and again per call, and are saved to and
loaded from `preprocessor_config.json` (or the `image_processor` entry of a
`processor_config.json`, where transformers 5 writes them). Each image becomes a channels-first
float32 array: converted to RGB, resized by Pillow, rescaled, normalized, the order and the
arithmetic of HF's PIL-backed processors.
"""
import copy
import json
import os

import numpy as np

from .feature_extraction_utils import BatchFeature, FeatureExtractionMixin
from .image_utils import (fetch_images, make_flat_list_of_images, normalize, rescale, resize,
                          to_channels_first)
from .utils.hub import cached_file

IMAGE_PROCESSOR_NAME = "preprocessor_config.json"
PROCESSOR_NAME = "processor_config.json"
_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")
_DATA_FORMATS = {None: None, "channels_first": True, "channels_last": False}


def get_size_dict(size, default_to_square=True, param_name="size"):
    """`size` as a dict: an int is a square ({"height", "width"}) or, when not `default_to_square`,
    the shortest edge; a (height, width) pair is that; a dict is checked."""
    if size is None or isinstance(size, dict):
        if size is not None and set(size) not in ({"height", "width"}, {"shortest_edge"}):
            raise ValueError(f"{param_name} must have the keys height and width, or shortest_edge; got {size}")
        return size
    if isinstance(size, int):
        return {"height": size, "width": size} if default_to_square else {"shortest_edge": size}
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return {"height": size[0], "width": size[1]}
    raise ValueError(f"{param_name} must be an int, a (height, width) pair or a dict, got {size!r}")


def resized_shape(image, size):
    """(height, width) after resizing a channels-first image to `size`; the shortest edge keeps
    the aspect ratio, the long side rounded down."""
    if "height" in size:
        return size["height"], size["width"]
    height, width = image.shape[-2:]
    short, long = sorted((height, width))
    new_short, new_long = size["shortest_edge"], int(size["shortest_edge"] * long / short)
    return (new_long, new_short) if width <= height else (new_short, new_long)


class BaseImageProcessor(FeatureExtractionMixin):
    _type_key = "image_processor_type"
    model_input_names = ["pixel_values"]
    settings = ("do_resize", "size", "resample", "do_rescale", "rescale_factor", "do_normalize", "image_mean",
                "image_std", "do_convert_rgb")
    do_resize = True
    size = None
    default_to_square = True  # how an int `size` reads
    resample = None
    do_rescale = True
    rescale_factor = 1 / 255
    do_normalize = True
    image_mean = None
    image_std = None
    do_convert_rgb = None

    def __init__(self, **kwargs):
        kwargs.pop("use_fast", None)
        for name in self.settings:
            value = kwargs.pop(name, None)
            setattr(self, name, copy.deepcopy(getattr(type(self), name)) if value is None else value)
        self.size = get_size_dict(self.size, self.default_to_square)
        super().__init__(**kwargs)

    @classmethod
    def _init_parameters(cls):
        return set(cls.settings)

    def to_dict(self):
        """The settings, without those left at a None default (as HF writes them)."""
        return {key: value for key, value in super().to_dict().items() if value is not None}

    def __call__(self, images, **kwargs):
        return self.preprocess(images, **kwargs)

    def preprocess(self, images, return_tensors=None, input_data_format=None, data_format="channels_first",
                   **kwargs):
        """`pixel_values` (and a subclass's other fields) for an image or a (nested) list of them.
        Keyword arguments override the settings for this call; `input_data_format`
        ("channels_first" / "channels_last") says where NumPy arrays keep their channels when
        their shape cannot tell, `data_format` where the pixel values keep them."""
        unknown = sorted(set(kwargs) - set(self.settings))
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {unknown}; its settings are "
                            f"{list(self.settings)}")
        for name, value in (("input_data_format", input_data_format), ("data_format", data_format)):
            if value not in _DATA_FORMATS or (value is None and name == "data_format"):
                raise ValueError(f"{name} must be 'channels_first' or 'channels_last', got {value!r}")
        options = {name: getattr(self, name) if kwargs.get(name) is None else kwargs[name] for name in self.settings}
        options["size"] = get_size_dict(options["size"], self.default_to_square)
        self._check(options)
        images = make_flat_list_of_images(fetch_images(images))
        images = [to_channels_first(image, options["do_convert_rgb"], _DATA_FORMATS[input_data_format])
                  for image in images]
        out = self._preprocess(images, **options)
        if data_format == "channels_last":
            out["pixel_values"] = [np.moveaxis(image, 0, -1) for image in out["pixel_values"]]
        return out.convert_to_tensors(return_tensors)

    @staticmethod
    def _check(options):
        if options["do_rescale"] and options["rescale_factor"] is None:
            raise ValueError("rescale_factor must be set when do_rescale is True")
        if options["do_normalize"] and (options["image_mean"] is None or options["image_std"] is None):
            raise ValueError("image_mean and image_std must both be set when do_normalize is True")
        if options["do_resize"] and (options["size"] is None or options["resample"] is None):
            raise ValueError("size and resample must be set when do_resize is True")

    def _preprocess(self, images, **options):
        """The outputs for channels-first images, as lists (one entry per image)."""
        return BatchFeature({"pixel_values": [self.transform(image, **options) for image in images]})

    def transform(self, image, do_resize, size, resample, do_rescale, rescale_factor, do_normalize, image_mean,
                  image_std, **_):
        """One channels-first image resized, rescaled and normalized as the options say."""
        if do_resize:
            image = resize(image, *resized_shape(image, size), resample=resample)
        if do_rescale:
            image = rescale(image, rescale_factor)
        if do_normalize:
            image = normalize(image, image_mean, image_std)
        return image

    @classmethod
    def get_feature_extractor_dict(cls, pretrained_model_name_or_path, **kwargs):
        """(the settings, the other kwargs): from preprocessor_config.json, else from the
        `image_processor` entry of processor_config.json."""
        location = {k: kwargs.pop(k) for k in _HUB_KWARGS if k in kwargs}
        path = str(pretrained_model_name_or_path)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as reader:
                return json.load(reader), kwargs
        found = cached_file(path, IMAGE_PROCESSOR_NAME, raise_if_missing=False, **location)
        if found is not None:
            with open(found, encoding="utf-8") as reader:
                return json.load(reader), kwargs
        found = cached_file(path, PROCESSOR_NAME, raise_if_missing=False, **location)
        if found is not None:
            with open(found, encoding="utf-8") as reader:
                settings = json.load(reader).get("image_processor")
            if settings is not None:
                return settings, kwargs
        raise OSError(f"{path} has no image processor settings: neither {IMAGE_PROCESSOR_NAME} nor an "
                      f"`image_processor` entry in {PROCESSOR_NAME}")


__all__ = ["BaseImageProcessor", "BatchFeature", "get_size_dict"]
