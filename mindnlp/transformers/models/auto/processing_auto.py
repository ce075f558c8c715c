"""AutoProcessor: the object that prepares a checkpoint's inputs.

For a text-only checkpoint that is its tokenizer, as in Hugging Face. A checkpoint whose
preprocessor_config.json names a feature extractor (speech models) gets its processor (the
feature extractor and the tokenizer); image and video processors are not in mindnlp yet.
"""
import json

from ...utils.hub import cached_file
from .tokenization_auto import AutoTokenizer

_UNSUPPORTED_PROCESSOR_FILES = ("processor_config.json", "video_preprocessor_config.json")
_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")


def _processor_class(feature_extractor_type):
    """The processor that pairs this feature extractor with a tokenizer."""
    from ..whisper.processing_whisper import WhisperProcessor

    processors = {WhisperProcessor.feature_extractor_class: WhisperProcessor}
    return processors.get(feature_extractor_type)


class AutoProcessor:
    def __init__(self):
        raise OSError("AutoProcessor is not instantiated directly: use AutoProcessor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        location = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}
        preprocessor = cached_file(pretrained_model_name_or_path, "preprocessor_config.json", raise_if_missing=False,
                                   **location)
        if preprocessor is not None:
            with open(preprocessor, encoding="utf-8") as reader:
                settings = json.load(reader)
            processor_class = _processor_class(settings.get("feature_extractor_type"))
            if processor_class is None:
                raise NotImplementedError(
                    f"{pretrained_model_name_or_path} declares a processor mindnlp does not have "
                    f"({settings.get('feature_extractor_type') or settings.get('image_processor_type')}); mindnlp "
                    "has tokenizers and speech feature extractors, not image or video processors.")
            return processor_class.from_pretrained(pretrained_model_name_or_path, **kwargs)
        for name in _UNSUPPORTED_PROCESSOR_FILES:
            if cached_file(pretrained_model_name_or_path, name, raise_if_missing=False, **location) is not None:
                raise NotImplementedError(
                    f"{pretrained_model_name_or_path} declares a multimodal processor ({name}); mindnlp has "
                    "tokenizers and speech feature extractors only, not image or video processors."
                )
        return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, **kwargs)
