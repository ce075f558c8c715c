# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The machinery behind the Auto classes: lazy model_type → class mappings and the shared
from_config / from_pretrained dispatch (HF's auto_factory)."""
import importlib

from ...configuration_utils import PretrainedConfig
from .configuration_auto import CONFIG_MAPPING_NAMES, AutoConfig


def getattribute_from_module(module, attr):
    """`attr` (a name or a tuple of names) from `module`, else from mindnlp.transformers itself."""
    if attr is None:
        return None
    if isinstance(attr, tuple):
        return tuple(getattribute_from_module(module, a) for a in attr)
    if hasattr(module, attr):
        return getattr(module, attr)
    transformers_module = importlib.import_module("mindnlp.transformers")
    if module is transformers_module:
        raise ValueError(f"Could not find {attr} in {transformers_module}!")
    try:
        return getattribute_from_module(transformers_module, attr)
    except ValueError:
        raise ValueError(f"Could not find {attr} neither in {module} nor in {transformers_module}!") from None


def preprocessor_class_for(settings, pretrained_model_name_or_path, type_key, mapping, what, name_suffixes=(),
                           **kwargs):
    """The preprocessing class (feature extractor, image processor) for settings a checkpoint
    saved: by the class name under `type_key` (less any of `name_suffixes`, HF's variants of one
    class), else by the model type of the checkpoint's config; `mapping` is model_type → class,
    and `what` names the kind in the error raised where mindnlp has no such class."""
    classes_by_name = {cls.__name__: cls for cls in mapping.values()}
    name = settings.get(type_key)
    if name is not None:
        for suffix in name_suffixes:
            name = name[: -len(suffix)] if name.endswith(suffix) else name
        if name not in classes_by_name:
            raise ValueError(f"{pretrained_model_name_or_path} uses the {what} {name}, which mindnlp does not have; "
                             f"known: {sorted(classes_by_name)}")
        return classes_by_name[name]
    model_type = AutoConfig.from_pretrained(pretrained_model_name_or_path, **kwargs).model_type
    if model_type not in mapping:
        raise ValueError(f"mindnlp has no {what} for model type {model_type!r}; known: {sorted(mapping)}")
    return mapping[model_type]


class _LazyModelMapping:
    """config class / model_type → model class, importing modeling modules on demand.

    Entries whose class does not exist in the module (a head an architecture does not
    have yet) are treated as absent rather than failing the import of the others.
    """

    def __init__(self, names):
        self._names = names
        self._registered = {}

    def _load(self, model_type):
        if model_type not in CONFIG_MAPPING_NAMES:
            return None  # a model type mindnlp has no config (and so no model) for
        module_name = CONFIG_MAPPING_NAMES[model_type][0]
        module = importlib.import_module(f"mindnlp.transformers.models.{module_name}.modeling_{module_name}")
        return getattr(module, self._names[model_type], None)

    def get(self, config_class, default=None):
        if config_class in self._registered:
            return self._registered[config_class]
        model_type = getattr(config_class, "model_type", None)
        if model_type in self._names:
            found = self._load(model_type)
            if found is not None:
                return found
        return default

    def __getitem__(self, config_class):
        found = self.get(config_class)
        if found is None:
            raise KeyError(config_class)
        return found

    def __contains__(self, config_class):
        return self.get(config_class) is not None

    def keys(self):
        return list(self._names)

    def values(self):
        """The model classes available now (architectures whose modeling module exists)."""
        found = []
        for model_type in self._names:
            try:
                model_class = self._load(model_type)
            except ModuleNotFoundError as err:
                if not (err.name or "").startswith("mindnlp.transformers.models."):
                    raise
                continue
            if model_class is not None:
                found.append(model_class)
        return found + list(self._registered.values())

    def register(self, config_class, model_class, exist_ok=False):
        if config_class in self._registered and not exist_ok:
            raise ValueError(f"{config_class.__name__} is already registered with {self._registered[config_class]}")
        self._registered[config_class] = model_class


def get_values(model_mapping):
    """Every value of a mapping, flattening tuples (HF's helper for tests)."""
    values = []
    for value in model_mapping.values():
        values.extend(value if isinstance(value, (list, tuple)) else [value])
    return values


# where the files come from: read by AutoConfig and passed on to the model class as well
_HUB_KWARGS = ("cache_dir", "force_download", "local_files_only", "token", "revision", "subfolder", "mirror",
               "endpoint", "gguf_file")
_LOADING_KWARGS = ("dtype", "torch_dtype", "ignore_mismatched_sizes", "output_loading_info", "state_dict",
                   "use_safetensors", "attn_implementation", "device_map", "low_cpu_mem_usage", "quantization_config",
                   "dequantize")


class _BaseAutoModelClass:
    _model_mapping = None

    def __init__(self, *args, **kwargs):
        raise OSError(
            f"{self.__class__.__name__} is designed to be instantiated using the "
            f"`{self.__class__.__name__}.from_pretrained(pretrained_model_name_or_path)` or "
            f"`{self.__class__.__name__}.from_config(config)` methods."
        )

    @classmethod
    def _model_class(cls, config):
        model_class = cls._model_mapping.get(type(config))
        if model_class is None and not cls._model_mapping.keys():
            raise NotImplementedError(
                f"{cls.__name__}: mindnlp implements no model for this task yet (config {type(config).__name__})."
            )
        if model_class is None:
            supported = ", ".join(cls._model_mapping.keys())
            raise ValueError(
                f"Unrecognized configuration class {type(config).__name__} for this kind of AutoModel: {cls.__name__}."
                f"\nModel type should be one of {supported}."
            )
        return model_class

    @classmethod
    def from_config(cls, config, **kwargs):
        return cls._model_class(config)._from_config(config, **kwargs)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *model_args, **kwargs):
        config = kwargs.pop("config", None)
        kwargs.pop("trust_remote_code", None)
        if not isinstance(config, PretrainedConfig):
            hub = {k: kwargs[k] for k in _HUB_KWARGS if k in kwargs}
            loading = {k: kwargs.pop(k) for k in list(kwargs) if k in _LOADING_KWARGS}
            config, kwargs = AutoConfig.from_pretrained(
                pretrained_model_name_or_path, return_unused_kwargs=True, **kwargs)
            kwargs.update(hub)
            kwargs.update(loading)
        return cls._model_class(config).from_pretrained(pretrained_model_name_or_path, *model_args, config=config,
                                                        **kwargs)

    @classmethod
    def register(cls, config_class, model_class, exist_ok=False):
        cls._model_mapping.register(config_class, model_class, exist_ok=exist_ok)


