# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The registry of PEFT methods, and `get_peft_model`.

A method registers its config class, its tuner (the `BaseTuner` subclass that injects its
layers) and the prefix of its parameter names with `register_peft_method`; everything else
(`PeftConfig.from_pretrained`, `PeftModel`, saving and loading) finds it through these tables.
Prompt-learning methods register a prompt encoder instead of a tuner.
"""
import warnings

from .utils.peft_types import PeftType

PEFT_TYPE_TO_CONFIG_MAPPING = {}
PEFT_TYPE_TO_TUNER_MAPPING = {}
PEFT_TYPE_TO_PREFIX_MAPPING = {}
PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING = {}


def register_peft_method(*, name, config_cls, model_cls=None, prompt_encoder_cls=None, prefix=None):
    """Make a PEFT method known: `name` is its PeftType (e.g. "LORA")."""
    peft_type = PeftType(name.upper())
    if peft_type in PEFT_TYPE_TO_CONFIG_MAPPING:
        raise KeyError(f"There is already a PEFT method called '{name}', please choose a unique name.")
    if (model_cls is None) == (prompt_encoder_cls is None):
        raise ValueError("A PEFT method registers exactly one of model_cls (a tuner) or prompt_encoder_cls.")
    PEFT_TYPE_TO_CONFIG_MAPPING[peft_type] = config_cls
    if model_cls is not None:
        PEFT_TYPE_TO_TUNER_MAPPING[peft_type] = model_cls
        prefix = prefix or getattr(model_cls, "prefix", None)
        if prefix is not None:
            PEFT_TYPE_TO_PREFIX_MAPPING[peft_type] = prefix
    else:
        PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING[peft_type] = prompt_encoder_cls


def get_peft_config(config_dict):
    """A config object from a dict holding at least "peft_type"."""
    return PEFT_TYPE_TO_CONFIG_MAPPING[config_dict["peft_type"]](**config_dict)


def get_peft_model(model, peft_config, adapter_name="default", revision=None, autocast_adapter_dtype=True):
    """Wrap `model` with a new adapter described by `peft_config`, in the PeftModel of its task type."""
    from .peft_model import MODEL_TYPE_TO_PEFT_MODEL_MAPPING, PeftModel
    from .tuners.tuners_utils import BaseTunerLayer

    old_name = peft_config.base_model_name_or_path
    new_name = model.__dict__.get("name_or_path", None) or None
    peft_config.base_model_name_or_path = new_name
    if any(isinstance(module, BaseTunerLayer) for module in model.modules()):
        warnings.warn("You are trying to modify a model with PEFT for a second time. If you want to reload the model "
                      "with a different config, make sure to call `.unload()` before.")
    if old_name is not None and old_name != new_name:
        warnings.warn(f"The PEFT config's `base_model_name_or_path` was renamed from '{old_name}' to '{new_name}'. "
                      "Please ensure that the correct base model is loaded when loading this checkpoint.")
    if revision is not None:
        if peft_config.revision is not None and peft_config.revision != revision:
            warnings.warn(f"peft config has already set base model revision to {peft_config.revision}, overwriting "
                          f"with revision {revision}")
        peft_config.revision = revision
    prefix = PEFT_TYPE_TO_PREFIX_MAPPING.get(peft_config.peft_type)
    if prefix and adapter_name in prefix:
        warnings.warn(f"Adapter name '{adapter_name}' should not be contained in the prefix '{prefix}'. This may "
                      "lead to reinitialization of the adapter weights during loading.")
    model_cls = MODEL_TYPE_TO_PEFT_MODEL_MAPPING.get(peft_config.task_type, PeftModel)
    return model_cls(model, peft_config, adapter_name=adapter_name, autocast_adapter_dtype=autocast_adapter_dtype)
