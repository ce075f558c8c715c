# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AutoFeatureExtractor: the feature extractor a checkpoint's preprocessor_config.json names
(`feature_extractor_type`), or the one of its config's model type."""
from ...feature_extraction_utils import FeatureExtractionMixin
from ..whisper.feature_extraction_whisper import WhisperFeatureExtractor
from .auto_factory import preprocessor_class_for

FEATURE_EXTRACTOR_MAPPING = {"whisper": WhisperFeatureExtractor}


def feature_extractor_class_for(settings, pretrained_model_name_or_path, **kwargs):
    """The class for saved settings: by `feature_extractor_type`, else by the config's model type."""
    return preprocessor_class_for(settings, pretrained_model_name_or_path, "feature_extractor_type",
                                  FEATURE_EXTRACTOR_MAPPING, "feature extractor", **kwargs)


class AutoFeatureExtractor:
    def __init__(self):
        raise OSError("AutoFeatureExtractor is not instantiated directly: use "
                      "AutoFeatureExtractor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        settings, kwargs = FeatureExtractionMixin.get_feature_extractor_dict(pretrained_model_name_or_path, **kwargs)
        extractor_class = feature_extractor_class_for(settings, pretrained_model_name_or_path)
        return extractor_class.from_dict(settings, **kwargs)
