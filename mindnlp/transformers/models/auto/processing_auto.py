"""AutoProcessor: the object that prepares a checkpoint's inputs.

For a text-only checkpoint that is its tokenizer, as in Hugging Face. Checkpoints whose
folder declares an image, video or audio processor need processors mindnlp does not have
yet, and say so.
"""
from ...utils.hub import cached_file
from .tokenization_auto import AutoTokenizer

_PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json")
_HUB_KWARGS = ("cache_dir", "local_files_only", "token", "revision", "subfolder", "mirror", "endpoint")


class AutoProcessor:
    def __init__(self):
        raise OSError("AutoProcessor is not instantiated directly: use AutoProcessor.from_pretrained(name_or_path)")

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        location = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}
        for name in _PROCESSOR_FILES:
            if cached_file(pretrained_model_name_or_path, name, raise_if_missing=False, **location) is not None:
                raise NotImplementedError(
                    f"{pretrained_model_name_or_path} declares a multimodal processor ({name}); mindnlp has "
                    "tokenizers only, not image, video or audio processors."
                )
        return AutoTokenizer.from_pretrained(pretrained_model_name_or_path, **kwargs)
