# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PeftConfig`: the adapter configuration, stored as HF peft's adapter_config.json.

Configs are dataclasses. `to_dict`/`save_pretrained` write the same JSON HF peft writes, and
`from_pretrained` reads files saved by any HF peft version: keys from a newer version that this
implementation does not know are dropped with a warning, as HF peft does.
"""
import dataclasses
import inspect
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Optional, Union

from ..core.serialization import write_text_atomic
from .utils.constants import CONFIG_NAME
from .utils.peft_types import PeftType, TaskType

# The HF peft release whose adapter format (file names, keys, config fields) this package writes.
PEFT_FORMAT_VERSION = "0.21.2"
# A config file without these keys cannot be an adapter config.
MIN_EXPECTED_CONFIG_KEYS = {"peft_type"}


def _json_ready(value):
    if isinstance(value, (set, frozenset)):
        return sorted(value) if all(isinstance(v, str) for v in value) else list(value)
    return value


@dataclass
class PeftConfigMixin:
    """Fields and file I/O common to every adapter config."""

    task_type: Optional[Union[str, TaskType]] = field(default=None, metadata={"help": "The type of task."})
    peft_type: Optional[Union[str, PeftType]] = field(default=None, metadata={"help": "The type of PEFT model."})
    auto_mapping: Optional[dict] = field(default=None, metadata={"help": "Base model class, for AutoPeftModel."})
    peft_version: Optional[str] = field(default=None, metadata={"help": "Version of the adapter format."})

    def __post_init__(self):
        if self.task_type is not None and self.task_type not in list(TaskType):
            raise ValueError(f"Invalid task type: '{self.task_type}'. Must be one of the following task types: "
                             f"{', '.join(TaskType)}.")
        if self.peft_version is None:
            self.peft_version = PEFT_FORMAT_VERSION

    def to_dict(self):
        return dataclasses.asdict(self)

    def save_pretrained(self, save_directory, **kwargs):
        """Write adapter_config.json into save_directory (created if needed)."""
        if os.path.isfile(save_directory):
            raise AssertionError(f"Provided path ({save_directory}) should be a directory, not a file")
        os.makedirs(save_directory, exist_ok=True)
        output = {key: _json_ready(value) for key, value in self.to_dict().items()}
        auto_mapping_dict = kwargs.pop("auto_mapping_dict", None)
        if auto_mapping_dict is not None:
            output["auto_mapping"] = auto_mapping_dict
        write_text_atomic(os.path.join(save_directory, CONFIG_NAME), json.dumps(output, indent=2, sort_keys=True))

    @classmethod
    def from_peft_type(cls, **kwargs):
        """The config class registered for kwargs["peft_type"] (or cls), built from kwargs."""
        from .mapping import PEFT_TYPE_TO_CONFIG_MAPPING

        if "peft_type" in kwargs:
            peft_type = kwargs["peft_type"]
            if peft_type not in PEFT_TYPE_TO_CONFIG_MAPPING:
                raise ValueError(f"PEFT method {peft_type!r} is not available in mindnlp.peft; available: "
                                 f"{sorted(PEFT_TYPE_TO_CONFIG_MAPPING)}")
            config_cls = PEFT_TYPE_TO_CONFIG_MAPPING[peft_type]
        else:
            config_cls = cls
        kwargs = config_cls._drop_unsupported_defaults(kwargs)
        accepted = set(inspect.signature(config_cls.__init__).parameters)
        unexpected = sorted(set(kwargs) - accepted)
        if unexpected:
            kwargs = {k: v for k, v in kwargs.items() if k in accepted}
            if not MIN_EXPECTED_CONFIG_KEYS.issubset(kwargs):
                raise TypeError(f"The {cls.__name__} config that is trying to be loaded is missing required keys: "
                                f"{MIN_EXPECTED_CONFIG_KEYS}.")
            warnings.warn(
                f"Unexpected keyword arguments {unexpected} for class {config_cls.__name__}, these are ignored. This "
                "probably means that you're loading a configuration file that was saved using a higher version of "
                "the library and additional parameters have been introduced since. It is highly recommended to "
                "upgrade the PEFT version before continuing.")
        return config_cls(**kwargs)

    @classmethod
    def _drop_unsupported_defaults(cls, kwargs):
        """Hook for configs that know HF peft fields they do not implement (see LoraConfig)."""
        return kwargs

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, subfolder=None, revision=None, cache_dir=None,
                        token=None, local_files_only=False, mirror=None, endpoint=None, **kwargs):
        """Read adapter_config.json from a folder or a hub repo; kwargs override loaded fields."""
        config_file = cls._config_file(pretrained_model_name_or_path, subfolder=subfolder, revision=revision,
                                       cache_dir=cache_dir, token=token, local_files_only=local_files_only,
                                       mirror=mirror, endpoint=endpoint)
        loaded = cls.from_json_file(config_file)
        class_kwargs = {k: v for k, v in kwargs.items() if k in {f.name for f in dataclasses.fields(cls)}}
        return cls.from_peft_type(**{**class_kwargs, **loaded})

    @staticmethod
    def _config_file(path_or_id, **location):
        from ..hub import FileNotFoundOnHubError
        from ..transformers.utils.hub import cached_file

        subfolder = location.pop("subfolder", None) or ""
        local = os.path.join(str(path_or_id), subfolder, CONFIG_NAME)
        if os.path.isfile(local):
            return local
        try:
            return cached_file(path_or_id, CONFIG_NAME, subfolder=subfolder, **location)
        except FileNotFoundOnHubError as err:
            raise ValueError(f"Can't find '{CONFIG_NAME}' at '{path_or_id}'") from err

    @classmethod
    def from_json_file(cls, path_json_file):
        with open(path_json_file, encoding="utf-8") as file:
            loaded = json.load(file)
        if "runtime_config" in loaded:
            warnings.warn("The configuration file contains a `runtime_config` key. This is ignored. Runtime "
                          "configurations are only valid at runtime.")
            del loaded["runtime_config"]
        return loaded

    @classmethod
    def _get_peft_type(cls, model_id, **location):
        return cls.from_json_file(cls._config_file(model_id, **location))["peft_type"]

    @property
    def is_prompt_learning(self):
        """Prompt-learning methods (prompt/prefix/P-tuning) add virtual tokens instead of wrapping layers."""
        return False

    @property
    def is_adaption_prompt(self):
        return False


@dataclass
class PeftConfig(PeftConfigMixin):
    """Base of every adapter config: which base model it belongs to and whether it is frozen."""

    base_model_name_or_path: Optional[str] = field(default=None, metadata={"help": "The name of the base model."})
    revision: Optional[str] = field(default=None, metadata={"help": "The specific base model version to use."})
    peft_type: Optional[Union[str, PeftType]] = field(default=None, metadata={"help": "Peft type"})
    task_type: Optional[Union[str, TaskType]] = field(default=None, metadata={"help": "Task type"})
    inference_mode: bool = field(default=False, metadata={"help": "Whether to use inference mode"})

    def _normalise_module_selection(self):
        """For the configs that target layers (LoRA, LoHa, LoKr): module-name lists become sets,
        as HF peft stores them, and `layers_pattern` needs `layers_to_transform`."""
        if isinstance(self.target_modules, list):
            self.target_modules = set(self.target_modules)
        if isinstance(self.exclude_modules, list):
            self.exclude_modules = set(self.exclude_modules)
        if self.layers_pattern and self.layers_to_transform is None:
            raise ValueError("When `layers_pattern` is specified, `layers_to_transform` must also be specified. ")


@dataclass
class PromptLearningConfig(PeftConfig):
    """Base config of the methods that learn virtual tokens (prompt tuning, prefix tuning, P-tuning).

    `PeftModel` treats a config with `is_prompt_learning` differently: it does not wrap layers but
    keeps a prompt encoder per adapter and injects its output at the model's inputs (see
    `PeftModel.get_prompt` and `PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING`).
    """

    num_virtual_tokens: int = field(default=None, metadata={"help": "Number of virtual tokens"})
    token_dim: int = field(default=None, metadata={"help": "The hidden embedding dimension of the base model"})
    num_transformer_submodules: Optional[int] = field(default=None, metadata={"help": "Number of transformer "
                                                                                      "submodules"})
    num_attention_heads: Optional[int] = field(default=None, metadata={"help": "Number of attention heads"})
    num_layers: Optional[int] = field(default=None, metadata={"help": "Number of transformer layers"})
    modules_to_save: Optional[list] = field(default=None, metadata={"help": "Extra modules trained in full"})

    @property
    def is_prompt_learning(self):
        return True
