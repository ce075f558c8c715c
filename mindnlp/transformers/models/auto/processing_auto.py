# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AutoProcessor: the object that prepares a checkpoint's inputs.

The processor class comes from processor_config.json's or preprocessor_config.json's
`processor_class`, else from the feature extractor the latter names (speech models). A
checkpoint with an image processor and no processor gets its image processor; a text-only
checkpoint gets its tokenizer, as in Hugging Face. Video processors are not in mindnlp.
"""
import json

from ...utils.hub import cached_file
from .tokenization_auto import AutoTokenizer

_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")


def _processor_classes():
    """{class name: processor class}, and {feature extractor name: the processor that pairs it
    with a tokenizer}."""
    from ..gemma3.processing_gemma3 import Gemma3Processor
    from ..whisper.processing_whisper import WhisperProcessor

    processors = (Gemma3Processor, WhisperProcessor)
    return ({cls.__name__: cls for cls in processors},
            {cls.feature_extractor_class: cls for cls in processors if cls.feature_extractor_class})


class AutoProcessor:
    def __init__(self):
        raise OSError("AutoProcessor is not instantiated directly: use AutoProcessor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        location = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}

        def read(filename):
            path = cached_file(pretrained_model_name_or_path, filename, raise_if_missing=False, **location)
            if path is None:
                return None
            with open(path, encoding="utf-8") as reader:
                return json.load(reader)

        processor_settings = read("processor_config.json") or {}
        preprocessor = read("preprocessor_config.json") or {}
        by_name, by_feature_extractor = _processor_classes()
        name = processor_settings.get("processor_class") or preprocessor.get("processor_class")
        if name is None and preprocessor.get("feature_extractor_type") in by_feature_extractor:
            name = by_feature_extractor[preprocessor["feature_extractor_type"]].__name__
        if name is not None:
            if name not in by_name:
                raise NotImplementedError(f"{pretrained_model_name_or_path} uses the processor {name}, which mindnlp "
                                          f"does not have; known: {sorted(by_name)}")
            return by_name[name].from_pretrained(pretrained_model_name_or_path, **kwargs)
        if "image_processor_type" in preprocessor or "image_processor" in processor_settings:
            from .image_processing_auto import AutoImageProcessor

            return AutoImageProcessor.from_pretrained(pretrained_model_name_or_path, **kwargs)
        if preprocessor or processor_settings:
            raise NotImplementedError(f"{pretrained_model_name_or_path} declares a processor mindnlp does not have "
                                      f"({preprocessor.get('feature_extractor_type')}); mindnlp has tokenizers, "
                                      "speech feature extractors and image processors, not video processors.")
        if cached_file(pretrained_model_name_or_path, "video_preprocessor_config.json", raise_if_missing=False,
                       **location) is not None:
            raise NotImplementedError(f"{pretrained_model_name_or_path} declares a video processor; mindnlp has "
                                      "tokenizers, speech feature extractors and image processors only.")
        return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, **kwargs)
