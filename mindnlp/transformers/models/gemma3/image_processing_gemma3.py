# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma 3's image processor: SigLIP's, with bilinear filtering, and pan-and-scan: an image much
wider than tall (or taller than wide) is also cut into 2 to `pan_and_scan_max_num_crops` side by
side crops, each processed as an image of its own after the whole image; `num_crops` counts them
per image, for the processor to give each crop its own run of image tokens."""
import math

from ...feature_extraction_utils import BatchFeature
from ..siglip.image_processing_siglip import SiglipImageProcessor

BILINEAR = 2  # PIL.Image.Resampling.BILINEAR


def pan_and_scan(image, min_crop_size, max_num_crops, min_ratio_to_activate):
    """The crops of a channels-first image: along its long side, as many as its aspect ratio
    rounded half up, at least 2 and at most `max_num_crops`, none narrower than `min_crop_size`
    (no crops when that cannot be, or when the aspect ratio is under `min_ratio_to_activate`)."""
    height, width = image.shape[-2:]
    long, short = max(height, width), min(height, width)
    if long / short < min_ratio_to_activate:
        return []
    count = min(int(math.floor(long / short + 0.5)), int(math.floor(long / min_crop_size)))
    count = min(max_num_crops, max(2, count))
    rows, columns = (1, count) if width >= height else (count, 1)
    crop_height, crop_width = math.ceil(height / rows), math.ceil(width / columns)
    if min(crop_height, crop_width) < min_crop_size:
        return []
    return [image[:, row * crop_height:(row + 1) * crop_height, column * crop_width:(column + 1) * crop_width]
            for row in range(rows) for column in range(columns)]


class Gemma3ImageProcessor(SiglipImageProcessor):
    model_input_names = ["pixel_values", "num_crops"]
    settings = SiglipImageProcessor.settings + ("do_pan_and_scan", "pan_and_scan_min_crop_size",
                                                "pan_and_scan_max_num_crops", "pan_and_scan_min_ratio_to_activate")
    default_to_square = True
    resample = BILINEAR
    do_pan_and_scan = None
    pan_and_scan_min_crop_size = None
    pan_and_scan_max_num_crops = None
    pan_and_scan_min_ratio_to_activate = None

    def _preprocess(self, images, **options):
        pixel_values, num_crops = [], []
        for image in images:
            crops = self._crops(image, **options) if options["do_pan_and_scan"] else []
            pixel_values += [self.transform(view, **options) for view in [image, *crops]]
            num_crops.append(len(crops))
        return BatchFeature({"pixel_values": pixel_values, "num_crops": num_crops})

    @staticmethod
    def _crops(image, pan_and_scan_min_crop_size, pan_and_scan_max_num_crops, pan_and_scan_min_ratio_to_activate,
               **_):
        settings = dict(min_crop_size=pan_and_scan_min_crop_size, max_num_crops=pan_and_scan_max_num_crops,
                        min_ratio_to_activate=pan_and_scan_min_ratio_to_activate)
        missing = [f"pan_and_scan_{name}" for name, value in settings.items() if value is None]
        if missing:
            raise ValueError(f"do_pan_and_scan needs {missing}")
        return pan_and_scan(image, **settings)


__all__ = ["Gemma3ImageProcessor"]
