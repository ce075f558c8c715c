# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Helpers shared by the tuners: key matching, module surgery and `ModulesToSaveWrapper`."""
import copy
import re

from ...core import nn


def transpose(weight, fan_in_fan_out):
    """The weight as (out, in): layers like GPT-2's Conv1D store it (in, out) ("fan_in_fan_out")."""
    return weight.T if fan_in_fan_out else weight


def get_pattern_key(pattern_keys, key_to_match):
    """The first key of `rank_pattern`/`alpha_pattern` that matches the end of a module path.

    A pattern matches a whole trailing part of the dotted path ("value" matches
    "encoder.layer.0.attention.self.value") and may be a regular expression.
    """
    for key in pattern_keys:
        if re.match(rf"(.*\.)?({key})$", key_to_match):
            return key
    return key_to_match


def get_submodules(model, key):
    """(parent, target, target_name) for the dotted module path `key`."""
    parent_name, _, target_name = key.rpartition(".")
    parent = model.get_submodule(parent_name)
    return parent, model.get_submodule(key), target_name


def set_layer_requires_grad(layer, requires_grad):
    """requires_grad on a module's parameters, or on a bare Parameter kept in a ParameterDict."""
    if isinstance(layer, nn.Parameter):
        layer.requires_grad_(requires_grad)
    else:
        for parameter in layer.parameters():
            parameter.requires_grad_(requires_grad)


class AdapterState:
    """The read side of which adapters run, shared by the tuner layers and ModulesToSaveWrapper:
    `_active_adapter` (a name or a list of names) and `_disable_adapters`."""

    @property
    def disable_adapters(self):
        return self._disable_adapters

    @property
    def active_adapter(self):
        return self._active_adapter

    @property
    def active_adapters(self):
        if isinstance(self.active_adapter, str):
            return [self.active_adapter]
        return self.active_adapter


class ModulesToSaveWrapper(AdapterState, nn.Module):
    """Trains and saves a full copy of a module per adapter (e.g. a new classification head).

    The original module stays frozen under `original_module`; each adapter gets its own deep
    copy under `modules_to_save[adapter_name]`, which is what runs while that adapter is active
    and the adapters are enabled.
    """

    adapter_layer_names = ("modules_to_save",)

    def __init__(self, module_to_save, adapter_name):
        super().__init__()
        if isinstance(module_to_save, (nn.ModuleDict, nn.ModuleList, nn.ParameterDict, nn.ParameterList)):
            raise TypeError(f"modules_to_save cannot be applied to modules of type {type(module_to_save)}")
        from ..tuners.tuners_utils import BaseTunerLayer

        if isinstance(module_to_save, BaseTunerLayer):
            raise TypeError(f"modules_to_save cannot be applied to modules of type {type(module_to_save)}")
        self.original_module = module_to_save
        self.modules_to_save = nn.ModuleDict({})
        self._active_adapter = [adapter_name]
        self._disable_adapters = False
        self._adapters = set()
        self.update(adapter_name)

    def __getattr__(self, name):
        # Attributes of the wrapped module (e.g. `weight`, `out_features`) read through to the
        # copy that currently runs, so model code that inspects its head keeps working.
        try:
            return super().__getattr__(name)
        except AttributeError:
            pass
        if "_modules" not in self.__dict__:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        modules = self.__dict__["_modules"]
        if self.disable_adapters or not self.active_adapters:
            return getattr(modules["original_module"], name)
        if self.active_adapters[0] in modules["modules_to_save"]:
            return getattr(modules["modules_to_save"][self.active_adapters[0]], name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def update(self, adapter_name):
        """Add a trainable copy for `adapter_name` (if it has none yet); the original stays frozen."""
        self._adapters.add(adapter_name)
        if adapter_name not in self.modules_to_save:
            self.modules_to_save[adapter_name] = copy.deepcopy(self.original_module)
        self.original_module.requires_grad_(False)
        if adapter_name == self.active_adapter:
            set_layer_requires_grad(self.modules_to_save[adapter_name], True)

    def forward(self, *args, **kwargs):
        if self.disable_adapters or not self.active_adapters or any(
                adapter not in self._adapters for adapter in self.active_adapters):
            return self.original_module(*args, **kwargs)
        return self.modules_to_save[self.active_adapters[0]](*args, **kwargs)

    def enable_adapters(self, enabled):
        """Disabled: the original module runs and the copies get no gradient."""
        self._disable_adapters = not enabled
        if enabled:
            for adapter_name in self.active_adapters:
                set_layer_requires_grad(self.modules_to_save[adapter_name], True)
        else:
            for module in self.modules_to_save.values():
                set_layer_requires_grad(module, False)

    def set_adapter(self, adapter_names, inference_mode=False):
        """Activate one adapter's copy (trainable unless inference_mode); [] activates none."""
        if isinstance(adapter_names, str):
            adapter_names = [adapter_names]
        if len(adapter_names) > 1:
            raise ValueError(f"Attempted to set multiple ({adapter_names}) adapters at once for modules_to_save.")
        for active in self.active_adapters:
            if active in self.modules_to_save:
                set_layer_requires_grad(self.modules_to_save[active], False)
        if not adapter_names:
            self._active_adapter = []
            return
        adapter_name = adapter_names[0]
        if adapter_name not in self._adapters:
            raise ValueError(f"Adapter {adapter_name} not found in {self._adapters}")
        set_layer_requires_grad(self.modules_to_save[adapter_name], not inference_mode)
        self._active_adapter = adapter_name

    def delete_adapter(self, adapter_name, new_active_adapters):
        """Drop an adapter's copy; when it was active, `new_active_adapters[0]` (if it has one) takes over."""
        if adapter_name not in self.modules_to_save:
            return
        if isinstance(new_active_adapters, (list, tuple)) and len(new_active_adapters) > 1:
            raise ValueError(f"Attempted to set multiple ({new_active_adapters}) adapters at once for "
                             f"{type(self).__name__}, which is not allowed.")
        self._adapters.discard(adapter_name)
        if not new_active_adapters or new_active_adapters[0] not in self.modules_to_save:
            del self.modules_to_save[adapter_name]
            self._active_adapter = []
            return
        if new_active_adapters[0] != self.active_adapters[0]:
            self.set_adapter(new_active_adapters[0])
        del self.modules_to_save[adapter_name]

    def adapter_state_dict(self, adapter_name, state_dict):
        """The copy's entries of `state_dict` (keys relative to this wrapper), named as in the module itself."""
        if adapter_name not in self._adapters:
            return {}
        return {k: state_dict[f"modules_to_save.{adapter_name}.{k}"]
                for k in self.modules_to_save[adapter_name].state_dict()}

    def adapter_state_dict_load_map(self, adapter_name):
        """{checkpoint key: model key} for the copy, both relative to this wrapper."""
        if adapter_name not in self._adapters:
            return {}
        return {k: f"modules_to_save.{adapter_name}.{k}" for k in self.modules_to_save[adapter_name].state_dict()}

    def unload_and_optionally_merge_module(self, merge, safe_merge, adapter_names):
        """The module to put back when unloading: the active adapter's copy, or the original."""
        if not self.active_adapters:
            return self.original_module
        new_module = self.modules_to_save[self.active_adapters[0]]
        if hasattr(new_module, "base_layer"):
            if merge:
                new_module.merge(safe_merge=safe_merge, adapter_names=adapter_names)
            new_module = new_module.get_base_layer()
        return new_module


def set_trainable(model, adapter_name, module_names, inference_mode=False, activate_adapter=True):
    """Wrap every module whose path ends with one of `module_names` in a ModulesToSaveWrapper.

    Matching is a plain suffix test on the dotted path, as in HF peft. A module that is already
    wrapped gets a copy for the new adapter instead.
    """
    from ..tuners.tuners_utils import BaseTunerLayer

    if not module_names:
        return []
    wrapped = []
    for key in [key for key, _ in model.named_modules(remove_duplicate=False)]:
        if not any(key.endswith(target_key) for target_key in module_names):
            continue
        parent, target, target_name = get_submodules(model, key)
        parent_path = key.rpartition(".")[0]
        grandparent = model.get_submodule(parent_path.rpartition(".")[0]) if parent_path else None
        if isinstance(grandparent, BaseTunerLayer):
            raise ValueError(
                f"You are trying to target a module with {ModulesToSaveWrapper} that is a child of "
                f"{type(grandparent)}. This is almost certainly not the intended behavior. Please ensure that the "
                f"adapter name, '{adapter_name}', does not conflict with any of the targeted modules.")
        if isinstance(grandparent, ModulesToSaveWrapper):
            grandparent.update(adapter_name)
            grandparent.set_adapter(grandparent.active_adapter, inference_mode=inference_mode)
        elif isinstance(target, ModulesToSaveWrapper):
            target.update(adapter_name)
            target.set_adapter(target.active_adapter, inference_mode=inference_mode)
        else:
            new_module = ModulesToSaveWrapper(target, adapter_name)
            new_module.set_adapter(adapter_name if activate_adapter else [], inference_mode=inference_mode)
            setattr(parent, target_name, new_module)
            wrapped.append(new_module)
    return wrapped


def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, gradient_checkpointing_kwargs=None):
    """Ready a quantized (or any) model for training adapters on it, as HF peft's function does.

    Every parameter is frozen; float16/bfloat16 parameters (norms, embeddings, biases: the
    quantized weights are not parameters) are upcast to float32 for stable training. For a
    model loaded in 8 or 4 bits with `use_gradient_checkpointing`, the input embeddings'
    output is made to require grad (with checkpointing and a frozen base nothing else would)
    and gradient checkpointing is switched on with `gradient_checkpointing_kwargs`.
    """
    from ... import core

    loaded_in_kbit = getattr(model, "is_loaded_in_8bit", False) or getattr(model, "is_loaded_in_4bit", False)
    for param in model.parameters():
        param.requires_grad_(False)
    with core.no_grad():
        for param in model.parameters():
            if param.dtype in (core.float16, core.bfloat16):
                param.data = param.data.to(core.float32)
    if loaded_in_kbit and use_gradient_checkpointing:
        kwargs = {} if gradient_checkpointing_kwargs is None else dict(gradient_checkpointing_kwargs)
        # Non-reentrant checkpointing passes gradients through without an input that needs them.
        if kwargs.get("use_reentrant", True):
            model.enable_input_require_grads()
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs or None)
    return model
