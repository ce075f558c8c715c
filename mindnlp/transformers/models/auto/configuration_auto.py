# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`AutoConfig`: pick the config class from config.json's `model_type`.

`CONFIG_MAPPING` maps each model_type to the module and class name of its config; a module is
imported the first time its model_type is looked up, so importing the auto classes does not
import every model.
"""
import importlib
from collections.abc import Mapping

from ....hub import CheckpointError
from ...configuration_utils import PretrainedConfig

# model_type -> (module under mindnlp.transformers.models, config class name)
CONFIG_MAPPING_NAMES = {
    "albert": ("albert", "AlbertConfig"),
    "bart": ("bart", "BartConfig"),
    "bert": ("bert", "BertConfig"),
    "camembert": ("camembert", "CamembertConfig"),
    "deberta-v2": ("deberta_v2", "DebertaV2Config"),
    "deepseek_v3": ("deepseek_v3", "DeepseekV3Config"),
    "distilbert": ("distilbert", "DistilBertConfig"),
    "electra": ("electra", "ElectraConfig"),
    "gemma": ("gemma", "GemmaConfig"),
    "gemma2": ("gemma2", "Gemma2Config"),
    "gemma3": ("gemma3", "Gemma3Config"),
    "gemma3_text": ("gemma3", "Gemma3TextConfig"),
    "gpt2": ("gpt2", "GPT2Config"),
    "gpt_neox": ("gpt_neox", "GPTNeoXConfig"),
    "gpt_oss": ("gpt_oss", "GptOssConfig"),
    "opt": ("opt", "OPTConfig"),
    "falcon": ("falcon", "FalconConfig"),
    "llama": ("llama", "LlamaConfig"),
    "marian": ("marian", "MarianConfig"),
    "mbart": ("mbart", "MBartConfig"),
    "mistral": ("mistral", "MistralConfig"),
    "mixtral": ("mixtral", "MixtralConfig"),
    "modernbert": ("modernbert", "ModernBertConfig"),
    "mpnet": ("mpnet", "MPNetConfig"),
    "mt5": ("mt5", "MT5Config"),
    "olmo2": ("olmo2", "Olmo2Config"),
    "phi": ("phi", "PhiConfig"),
    "phi3": ("phi3", "Phi3Config"),
    "qwen2": ("qwen2", "Qwen2Config"),
    "qwen2_moe": ("qwen2_moe", "Qwen2MoeConfig"),
    "qwen3": ("qwen3", "Qwen3Config"),
    "qwen3_moe": ("qwen3_moe", "Qwen3MoeConfig"),
    "roberta": ("roberta", "RobertaConfig"),
    "whisper": ("whisper", "WhisperConfig"),
    "siglip_vision_model": ("siglip", "SiglipVisionConfig"),
    "smollm3": ("smollm3", "SmolLM3Config"),
    "starcoder2": ("starcoder2", "Starcoder2Config"),
    "t5": ("t5", "T5Config"),
    "xlm-roberta": ("xlm_roberta", "XLMRobertaConfig"),
}


class _LazyConfigMapping(Mapping):
    """model_type -> config class, importing the class's module on first access."""

    def __init__(self, names):
        self._names = names
        self._loaded = {}
        self._registered = {}

    def __getitem__(self, model_type):
        if model_type in self._registered:
            return self._registered[model_type]
        if model_type not in self._names:
            raise KeyError(model_type)
        if model_type not in self._loaded:
            module_name, class_name = self._names[model_type]
            module = importlib.import_module(f"mindnlp.transformers.models.{module_name}.configuration_{module_name}")
            self._loaded[model_type] = getattr(module, class_name)
        return self._loaded[model_type]

    def __iter__(self):
        return iter(list(self._names) + [key for key in self._registered if key not in self._names])

    def __len__(self):
        return len(set(self._names) | set(self._registered))

    def __contains__(self, model_type):
        return model_type in self._names or model_type in self._registered

    def register(self, model_type, config_class, exist_ok=False):
        if model_type in self._names and not exist_ok:
            raise ValueError(f"model_type {model_type!r} is already used by a built-in config class")
        self._registered[model_type] = config_class


CONFIG_MAPPING = _LazyConfigMapping(CONFIG_MAPPING_NAMES)


def _unknown_model_type(model_type):
    known = ", ".join(sorted(CONFIG_MAPPING))
    return CheckpointError(f"unknown model_type {model_type!r}; known model types: {known}")


class AutoConfig:
    """Factory for the config class a checkpoint needs; not instantiable itself."""

    def __init__(self):
        raise OSError("AutoConfig is a factory: use AutoConfig.from_pretrained(...) or AutoConfig.for_model(...)")

    @classmethod
    def for_model(cls, model_type, *args, **kwargs):
        """A fresh config of `model_type` built from `kwargs`."""
        if model_type not in CONFIG_MAPPING:
            raise _unknown_model_type(model_type)
        return CONFIG_MAPPING[model_type](*args, **kwargs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, **kwargs):
        """Read config.json (folder, JSON file, HF cache or hub id) and build the matching class.

        Takes the same keywords as `PretrainedConfig.from_pretrained`. A config.json without
        `model_type` (very old checkpoints) is matched by the longest model_type that appears in
        the name or path, as transformers does.
        """
        kwargs.pop("trust_remote_code", None)  # no remote code here; configs are built in
        kwargs.setdefault("name_or_path", str(pretrained_model_name_or_path))
        config_dict, unused_kwargs = PretrainedConfig.get_config_dict(pretrained_model_name_or_path, **kwargs)
        model_type = config_dict.get("model_type")
        if model_type is not None:
            if model_type not in CONFIG_MAPPING:
                raise _unknown_model_type(model_type)
            return CONFIG_MAPPING[model_type].from_dict(config_dict, **unused_kwargs)
        name = str(pretrained_model_name_or_path)
        for candidate in sorted(CONFIG_MAPPING, key=len, reverse=True):
            if candidate in name:
                return CONFIG_MAPPING[candidate].from_dict(config_dict, **unused_kwargs)
        known = ", ".join(sorted(CONFIG_MAPPING))
        raise ValueError(
            f"the config.json of {name} has no model_type and its name contains none of the known model types: {known}"
        )

    @staticmethod
    def register(model_type, config, exist_ok=False):
        """Make `AutoConfig` build `config` (a PretrainedConfig subclass) for `model_type`."""
        if not (isinstance(config, type) and issubclass(config, PretrainedConfig)):
            raise TypeError(f"AutoConfig.register needs a PretrainedConfig subclass, got {config!r}")
        if config.model_type != model_type:
            raise ValueError(
                f"{config.__name__}.model_type is {config.model_type!r}, but it is being registered as {model_type!r}"
            )
        CONFIG_MAPPING.register(model_type, config, exist_ok=exist_ok)
