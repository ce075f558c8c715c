# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Adapter state dicts in HF peft's key format, and reading adapter weight files.

Saved keys are the PeftModel's state-dict keys with the adapter name removed
("base_model.model.<path>.lora_A.weight"), so a file does not depend on the name the adapter
had; loading inserts the name of the adapter being loaded.
"""
import os
import warnings

from ...core import serialization
from .constants import EMBEDDING_LAYER_NAMES, INCLUDE_LINEAR_LAYERS_SHORTHAND, SAFETENSORS_WEIGHTS_NAME, WEIGHTS_NAME
from .other import ModulesToSaveWrapper


def _filter_out_other_adapters(state_dict, unwanted_adapter_names):
    return {k: v for k, v in state_dict.items()
            if not any(f".{name}." in k or k.endswith(f".{name}") for name in unwanted_adapter_names)}


def _embedding_is_targeted(model, config):
    import re

    target_modules = getattr(config, "target_modules", None)
    if isinstance(target_modules, str) and target_modules != INCLUDE_LINEAR_LAYERS_SHORTHAND:
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        return any(re.fullmatch(target_modules, name) for name, _ in base.named_modules()
                   if any(re.match(rf"(.*\.)?{e}$", name) for e in EMBEDDING_LAYER_NAMES))
    if target_modules:
        return any(name in target_modules for name in EMBEDDING_LAYER_NAMES)
    return False


def _method_class(peft_type):
    """The class holding a method's state-dict hooks: its tuner, or for prompt learning its prompt encoder."""
    from ..mapping import PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING, PEFT_TYPE_TO_TUNER_MAPPING

    method_cls = PEFT_TYPE_TO_TUNER_MAPPING.get(peft_type) or PEFT_TYPE_TO_PROMPT_ENCODER_MAPPING.get(peft_type)
    if method_cls is None:
        raise ValueError(f"Unknown PEFT type passed: {peft_type}")
    return method_cls


def get_peft_model_state_dict(model, state_dict=None, adapter_name="default", save_embedding_layers="auto"):
    """The adapter's tensors, keyed as HF peft saves them (no adapter name in the keys).

    Includes the adapter factors, trained biases (bias="all"/"lora_only"), modules_to_save
    copies, and, when an "embed_tokens"/"lm_head" layer is targeted (save_embedding_layers
    "auto") or asked for, the embedding layers' full weights, as HF peft does.
    """
    config = model.peft_config[adapter_name]
    if state_dict is None:
        state_dict = model.state_dict()
    unwanted = [name for name in model.peft_config if name != adapter_name]
    filtered = _filter_out_other_adapters(state_dict, unwanted)
    if filtered:
        state_dict = filtered
    tuner_cls = _method_class(config.peft_type)
    to_return = tuner_cls._get_adapter_state_dict(model, config, adapter_name, state_dict)
    for name, module in model.named_modules():
        if isinstance(module, ModulesToSaveWrapper):
            local = {k[len(name) + 1:]: v for k, v in state_dict.items() if k.startswith(f"{name}.")}
            to_return.update({f"{name}.{k}": v for k, v in module.adapter_state_dict(adapter_name, local).items()})
    embedding_targeted = _embedding_is_targeted(model, config)
    if save_embedding_layers == "auto":
        if embedding_targeted:
            warnings.warn("Setting `save_embedding_layers` to `True` as embedding layers found in `target_modules`.")
        save_embedding_layers = embedding_targeted
    if save_embedding_layers and hasattr(model, "get_input_embeddings"):
        for layer in (model.get_input_embeddings(), model.get_output_embeddings()):
            if layer is None:
                continue
            if embedding_targeted and not hasattr(layer, "base_layer"):
                continue
            wanted = layer.base_layer if embedding_targeted else layer
            for module_name, module in model.named_modules():
                if module is wanted:
                    to_return.update({k: v for k, v in state_dict.items() if k.startswith(f"{module_name}.")})
                    break
    return {tuner_cls._remove_adapter_name_from_key(k, adapter_name): v for k, v in to_return.items()}


def set_peft_model_state_dict(model, peft_model_state_dict, adapter_name="default"):
    """Load a checkpoint's adapter tensors into the model's adapter `adapter_name`.

    Returns torch's (missing_keys, unexpected_keys) of a non-strict load; missing keys are
    limited to the adapter's own tensors.
    """
    config = model.peft_config[adapter_name]
    state_dict = dict(peft_model_state_dict)
    for name, module in model.named_modules():
        if isinstance(module, ModulesToSaveWrapper):
            for checkpoint_key, model_key in module.adapter_state_dict_load_map(adapter_name).items():
                full = f"{name}.{checkpoint_key}"
                if full in state_dict:
                    state_dict[f"{name}.{model_key}"] = state_dict.pop(full)
    tuner_cls = _method_class(config.peft_type)
    state_dict = tuner_cls._remap_adapter_state_dict_for_load(model, config, adapter_name, state_dict)
    result = model.load_state_dict(state_dict, strict=False)
    if config.is_prompt_learning:  # the encoder's state is the one "prompt_embeddings" tensor
        model.prompt_encoder[adapter_name]._load_adapter_state_dict(peft_model_state_dict)
        return type(result)([], result.unexpected_keys)
    missing = [k for k in result.missing_keys if tuner_cls.prefix in k and adapter_name in k]
    return type(result)(missing, result.unexpected_keys)


def load_peft_weights(model_id, device="cpu", subfolder=None, revision=None, cache_dir=None, token=None,
                      local_files_only=False, mirror=None, endpoint=None):
    """The tensors of adapter_model.safetensors (or adapter_model.bin) in a folder or hub repo."""
    from ...transformers.utils.hub import cached_file

    location = dict(subfolder=subfolder or "", revision=revision, cache_dir=cache_dir, token=token,
                    local_files_only=local_files_only, mirror=mirror, endpoint=endpoint)
    path = cached_file(model_id, SAFETENSORS_WEIGHTS_NAME, raise_if_missing=False, **location)
    if path is not None:
        return serialization.load_safetensors(path, device=device)
    path = cached_file(model_id, WEIGHTS_NAME, raise_if_missing=False, **location)
    if path is None:
        raise ValueError(f"Can't find weights for {model_id} in {model_id} or in the Hugging Face Hub. Please check "
                         f"that the file {WEIGHTS_NAME} or {SAFETENSORS_WEIGHTS_NAME} is present at {model_id}.")
    return serialization.load_torch_file(os.fspath(path))
