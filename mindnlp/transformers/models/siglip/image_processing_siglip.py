# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SigLIP's image processor: every image resized to a fixed square (224 by default) with bicubic
filtering, scaled to [0, 1] and normalized to [-1, 1]."""
from ...image_processing_utils import BaseImageProcessor
from ...image_utils import IMAGENET_STANDARD_MEAN, IMAGENET_STANDARD_STD

BICUBIC = 3  # PIL.Image.Resampling.BICUBIC


class SiglipImageProcessor(BaseImageProcessor):
    size = {"height": 224, "width": 224}
    default_to_square = False
    resample = BICUBIC
    image_mean = IMAGENET_STANDARD_MEAN
    image_std = IMAGENET_STANDARD_STD
    do_convert_rgb = True


__all__ = ["SiglipImageProcessor"]
