# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AutoFeatureExtractor: the feature extractor a checkpoint's preprocessor_config.json names
(`feature_extractor_type`), or the one of its config's model type."""
from ...feature_extraction_utils import FeatureExtractionMixin
from ..whisper.feature_extraction_whisper import WhisperFeatureExtractor

FEATURE_EXTRACTOR_MAPPING = {"whisper": WhisperFeatureExtractor}
FEATURE_EXTRACTOR_CLASSES = {cls.__name__: cls for cls in FEATURE_EXTRACTOR_MAPPING.values()}


def feature_extractor_class_for(settings, pretrained_model_name_or_path, **kwargs):
    """The class for saved settings: by `feature_extractor_type`, else by the config's model type."""
    name = settings.get("feature_extractor_type")
    if name is not None:
        if name not in FEATURE_EXTRACTOR_CLASSES:
            raise ValueError(f"{pretrained_model_name_or_path} uses the feature extractor {name}, which mindnlp "
                             f"does not have; known: {sorted(FEATURE_EXTRACTOR_CLASSES)}")
        return FEATURE_EXTRACTOR_CLASSES[name]
    from .configuration_auto import AutoConfig

    model_type = AutoConfig.from_pretrained(pretrained_model_name_or_path, **kwargs).model_type
    if model_type not in FEATURE_EXTRACTOR_MAPPING:
        raise ValueError(f"mindnlp has no feature extractor for model type {model_type!r}; known: "
                         f"{sorted(FEATURE_EXTRACTOR_MAPPING)}")
    return FEATURE_EXTRACTOR_MAPPING[model_type]


class AutoFeatureExtractor:
    def __init__(self):
        raise OSError("AutoFeatureExtractor is not instantiated directly: use "
                      "AutoFeatureExtractor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        settings, kwargs = FeatureExtractionMixin.get_feature_extractor_dict(pretrained_model_name_or_path, **kwargs)
        extractor_class = feature_extractor_class_for(settings, pretrained_model_name_or_path)
        return extractor_class.from_dict(settings, **kwargs)
