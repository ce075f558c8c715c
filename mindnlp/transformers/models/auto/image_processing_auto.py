# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AutoImageProcessor: the image processor a checkpoint's preprocessor_config.json (or
processor_config.json) names (`image_processor_type`), or the one of its config's model type."""
from ...image_processing_utils import BaseImageProcessor
from ..gemma3.image_processing_gemma3 import Gemma3ImageProcessor
from ..siglip.image_processing_siglip import SiglipImageProcessor
from .auto_factory import preprocessor_class_for

IMAGE_PROCESSOR_MAPPING = {"gemma3": Gemma3ImageProcessor, "siglip": SiglipImageProcessor,
                           "siglip_vision_model": SiglipImageProcessor}


def image_processor_class_for(settings, pretrained_model_name_or_path, **kwargs):
    """The class for saved settings: by `image_processor_type` (HF's "Fast" and "Pil" variants
    name the same processor), else by the config's model type."""
    return preprocessor_class_for(settings, pretrained_model_name_or_path, "image_processor_type",
                                  IMAGE_PROCESSOR_MAPPING, "image processor", name_suffixes=("Fast", "Pil"), **kwargs)


class AutoImageProcessor:
    def __init__(self):
        raise OSError("AutoImageProcessor is not instantiated directly: use "
                      "AutoImageProcessor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        settings, kwargs = BaseImageProcessor.get_feature_extractor_dict(pretrained_model_name_or_path, **kwargs)
        kwargs.pop("use_fast", None)
        processor_class = image_processor_class_for(settings, pretrained_model_name_or_path)
        return processor_class.from_dict(settings, **kwargs)
