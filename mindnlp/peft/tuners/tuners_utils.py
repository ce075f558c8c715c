# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Base classes every tuner builds on: `BaseTuner` (the model-level injector) and
`BaseTunerLayer` (the mixin of the layers it puts in place of the targeted modules).

A tuner walks the base model's modules, matches their dotted paths against the config
(`check_target_module_exists`), and replaces each match by a tuner layer that wraps the
original module as `base_layer`. Adapter weights live in dicts keyed by adapter name on those
layers (`adapter_layer_names`), so several adapters can sit side by side; which ones run is
`active_adapters`. The same structure defines what is saved: every parameter of a tuner layer
except its `base_layer` belongs to the adapter.
"""
import re
import warnings

from ... import core
from ...core import nn
from ..config import PeftConfig
from ..utils.constants import INCLUDE_LINEAR_LAYERS_SHORTHAND, SEQ_CLS_HEAD_NAMES
from ..utils.other import AdapterState, ModulesToSaveWrapper, get_submodules, set_layer_requires_grad, set_trainable
from ..utils.peft_types import TaskType


class BaseTunerLayer(AdapterState):
    """Mixin of adapter layers: active adapters, enabling/disabling, merging bookkeeping.

    Subclasses list in `adapter_layer_names` the ModuleDict/ParameterDict attributes holding
    trainable adapter weights and in `other_param_names` the per-adapter plain dicts (ranks,
    scalings), and implement `merge`/`unmerge`. Methods that merge by rewriting the base weight
    build them on `_merge_into_base_weight`/`_unmerge_from_base_weight`, defining
    `_holds_adapter(adapter)` (whether this layer has weights for `adapter`).
    """

    adapter_layer_names = ()
    other_param_names = ()
    _disable_adapters = False
    _active_adapter = "default"
    merged_adapters = []

    def get_base_layer(self):
        """The wrapped original module (following nested tuner layers down)."""
        base_layer = self
        while hasattr(base_layer, "base_layer"):
            base_layer = base_layer.base_layer
        return base_layer

    @property
    def weight(self):
        return self.get_base_layer().weight

    @property
    def bias(self):
        return self.get_base_layer().bias

    def merge(self, safe_merge=False, adapter_names=None):
        raise NotImplementedError(f"{type(self).__name__} does not support merging")

    def unmerge(self):
        raise NotImplementedError(f"{type(self).__name__} does not support unmerging")

    def _merge_into_base_weight(self, safe_merge, adapter_names, merged_weight):
        """For each adapter to merge that this layer holds: base weight <- merged_weight(adapter, weight).

        safe_merge refuses (before writing) a merged weight holding NaN or inf."""
        for adapter in check_adapters_to_merge(self, adapter_names):
            if not self._holds_adapter(adapter):
                continue
            with core.no_grad():
                merged = merged_weight(adapter, self._base_weight())
                if safe_merge and not bool(core.isfinite(merged).all()):
                    raise ValueError(f"NaNs detected in the merged weights. The adapter {adapter} seems to be broken")
                self._set_base_weight(merged)
            self.merged_adapters.append(adapter)

    def _unmerge_from_base_weight(self, unmerged_weight):
        """Undo the merges, last merged first: base weight <- unmerged_weight(adapter, weight)."""
        if not self.merged:
            warnings.warn("Already unmerged. Nothing to do.")
            return
        while self.merged_adapters:
            adapter = self.merged_adapters.pop()
            if not self._holds_adapter(adapter):
                continue
            with core.no_grad():
                self._set_base_weight(unmerged_weight(adapter, self._base_weight()))

    def _base_weight(self):
        """The base layer's weight as a float tensor: a quantized base's dequantized."""
        base = self.get_base_layer()
        return base.dequantized_weight() if isinstance(base, nn.QuantizedLinear) else base.weight.detach()

    def _set_base_weight(self, weight):
        """Write a merged weight into the base layer; a quantized base is requantized in its own
        format (as HF peft does for bitsandbytes layers), so the merge costs one more rounding."""
        base = self.get_base_layer()
        if isinstance(base, nn.QuantizedLinear):
            base.requantize_(weight)
        else:
            base.weight.copy_(weight.to(base.weight.dtype))

    def _weight_plus_delta(self, adapter, weight):
        """The additive merge: the adapter's `get_delta_weight` added to the base weight."""
        return weight + self.get_delta_weight(adapter).to(weight.dtype)

    def _weight_minus_delta(self, adapter, weight):
        return weight - self.get_delta_weight(adapter).to(weight.dtype)

    def _forward_base_when_disabled_or_merged(self, x, args, kwargs):
        """The base layer's output when no adapter has to be added (None otherwise)."""
        if self.disable_adapters:
            if self.merged:
                self.unmerge()
            return self.base_layer(x, *args, **kwargs)
        if self.merged:
            return self.base_layer(x, *args, **kwargs)
        return None

    @property
    def merged(self):
        return bool(self.merged_adapters)

    def enable_adapters(self, enabled):
        """Disabled adapters are skipped in forward and get no gradient."""
        if enabled:
            self.set_adapter(self.active_adapters)
            self._disable_adapters = False
        else:
            for layer_name in self.adapter_layer_names:
                for layer in getattr(self, layer_name).values():
                    set_layer_requires_grad(layer, False)
            self._disable_adapters = True

    def set_adapter(self, adapter_names, inference_mode=False):
        """Make `adapter_names` the active adapters: trainable (unless inference_mode), others frozen."""
        if isinstance(adapter_names, str):
            adapter_names = [adapter_names]
        for layer_name in self.adapter_layer_names:
            for key, layer in getattr(self, layer_name).items():
                set_layer_requires_grad(layer, key in adapter_names and not inference_mode)
        self._active_adapter = adapter_names

    def _all_available_adapter_names(self):
        names = set()
        for attribute in self.adapter_layer_names + self.other_param_names:
            value = getattr(self, attribute)
            if hasattr(value, "keys"):
                names.update(value.keys())
        return sorted(names)

    def delete_adapter(self, adapter_name):
        """Remove an adapter's weights; if it was active, the first remaining adapter (by name) takes over."""
        for attribute in self.adapter_layer_names + self.other_param_names:
            container = getattr(self, attribute)
            if adapter_name in container:
                del container[adapter_name]
        if adapter_name in self.active_adapters:
            active_adapters = [name for name in self.active_adapters if name != adapter_name]
            if active_adapters:
                self.set_adapter(active_adapters)
            else:
                remaining = self._all_available_adapter_names()
                if not remaining:
                    self.set_adapter([])
                else:
                    warnings.warn(f"Adapter {adapter_name} was active which is now deleted. Setting active adapter "
                                  f"to {remaining[0]}.")
                    self.set_adapter(remaining[0])


def check_adapters_to_merge(module, adapter_names=None):
    """The adapters of `adapter_names` (default: the active ones) not merged yet, warning about the others."""
    if adapter_names is None:
        adapter_names = module.active_adapters
    if isinstance(adapter_names, str):
        raise ValueError(f"adapter_names should be a list of strings, got {adapter_names!r}.")
    if module.merged:
        merged = set(module.merged_adapters)
        already = [name for name in adapter_names if name in merged]
        adapter_names = [name for name in adapter_names if name not in merged]
        if already:
            warnings.warn(f"Already following adapters were merged {','.join(already)}. You are now additionally "
                          f"merging {','.join(adapter_names)}.")
    return adapter_names


def _is_key_under_prefixes(key, prefixes):
    """Whether `key` equals one of `prefixes` or lies under one, on "." boundaries."""
    parts = key.split(".")
    return any(".".join(parts[:i]) in prefixes for i in range(1, len(parts) + 1))


def tuner_state_dict_key_prefixes(model, adapter_name=None):
    """The state-dict key prefixes of everything a PEFT method added to `model`.

    Every child, parameter and buffer of a tuner layer belongs to the method except the wrapped
    `base_layer` (and the `model` of a BaseTuner). Tuner layers inside a ModulesToSaveWrapper
    are left out: the wrapper saves its own copy. With `adapter_name`, per-adapter containers
    are narrowed to that adapter's entry.
    """
    prefixes, wrapper_names = set(), set()
    for module_name, module in model.named_modules():
        if isinstance(module, ModulesToSaveWrapper):
            wrapper_names.add(module_name)
            continue
        if not (isinstance(module, BaseTuner) or (isinstance(module, BaseTunerLayer)
                                                  and not _is_key_under_prefixes(module_name, wrapper_names))):
            continue
        attribute_names = ([name for name, _ in module.named_children()]
                           + [name for name, _ in module.named_parameters(recurse=False)]
                           + [name for name, _ in module.named_buffers(recurse=False)])
        for attribute in attribute_names:
            if attribute in ("base_layer", "model"):
                continue
            prefix = f"{module_name}.{attribute}" if module_name else attribute
            child = getattr(module, attribute)
            if adapter_name is not None and isinstance(child, (nn.ModuleDict, nn.ParameterDict)):
                if adapter_name in child:
                    prefixes.add(f"{prefix}.{adapter_name}")
            else:
                prefixes.add(prefix)
    return prefixes


def filter_state_dict_by_key_prefixes(state_dict, prefixes):
    return {key: value for key, value in state_dict.items() if _is_key_under_prefixes(key, prefixes)}


def remove_adapter_name_from_key(key, adapter_name):
    """'q.lora_A.default.weight' → 'q.lora_A.weight'; 'emb.lora_embedding_A.default' → 'emb.lora_embedding_A'.

    Only the second-to-last component (or the last, for bare parameters) is removed, so a module
    that happens to share the adapter's name elsewhere in the path is left alone.
    """
    if "." not in key:
        return key
    if key.endswith(f".{adapter_name}"):
        return key[: -len(adapter_name) - 1]
    head, _, suffix = key.rpartition(".")
    head = re.sub(re.escape(f".{adapter_name}") + r"$", "", head)
    return f"{head}.{suffix}"


def check_target_module_exists(config, key):
    """Whether the module at dotted path `key` is targeted by `config` (HF peft's rules).

    Excluded first: `exclude_modules` (regex full match, or exact/suffix names) and anything in
    `modules_to_save`. Then `target_modules` as a regex (full match) or as names matching the
    path exactly or as its last components; `layers_to_transform` keeps only the given layer
    indices, found after `layers_pattern` (or after the first "<name>.<index>." in the path).
    """
    exclude = getattr(config, "exclude_modules", None)
    if exclude:
        if isinstance(exclude, str):
            if re.fullmatch(exclude, key):
                return False
        elif key in exclude or any(key.endswith(f".{name}") for name in exclude):
            return False
    modules_to_save = getattr(config, "modules_to_save", None)
    if modules_to_save and any(re.match(rf"(^|.*\.){name}($|\..*)", key) for name in modules_to_save):
        return False
    if isinstance(config.target_modules, str):
        return re.fullmatch(config.target_modules, key) is not None
    if key in config.target_modules:
        return True
    found = any(key.endswith(f".{target}") for target in config.target_modules)
    layer_indexes = getattr(config, "layers_to_transform", None)
    uses_layer_indexes = layer_indexes is not None and (not isinstance(layer_indexes, list) or len(layer_indexes) > 0)
    if not (found and uses_layer_indexes):
        return found
    layers_pattern = getattr(config, "layers_pattern", None)
    match = None
    if not layers_pattern:
        match = re.match(r".*?\.[^.]*\.(?P<idx>\d+)\.", key)
    else:
        for pattern in [layers_pattern] if isinstance(layers_pattern, str) else layers_pattern:
            match = re.match(rf"(?:^|.*?\.){pattern}\.(?P<idx>\d+)\.", key)
            if match is not None:
                break
    if match is None:
        return False
    index = int(match.group("idx"))
    return index == layer_indexes if isinstance(layer_indexes, int) else index in layer_indexes


def _linear_layer_classes():
    from ...transformers.pytorch_utils import Conv1D

    return (nn.Linear, Conv1D)


def maybe_include_all_linear_layers(peft_config, model):
    """Resolve target_modules="all-linear": every Linear/Conv1D except the output layer (or the
    classification head of a SEQ_CLS model)."""
    if not (isinstance(getattr(peft_config, "target_modules", None), str)
            and peft_config.target_modules.lower() == INCLUDE_LINEAR_LAYERS_SHORTHAND):
        return peft_config
    from ...transformers.modeling_utils import PreTrainedModel

    names = set()
    for name, module in model.named_modules():
        if isinstance(module, _linear_layer_classes()) or (
                isinstance(module, BaseTunerLayer) and "Linear" in type(module).__name__):
            names.add(name)
    excluded = set()
    if isinstance(model, PreTrainedModel):
        output_embeddings = model.get_output_embeddings()
        if output_embeddings is not None:
            excluded.add(next(n for n, m in model.named_modules() if m is output_embeddings))
        elif peft_config.task_type == TaskType.SEQ_CLS:
            for head_name in SEQ_CLS_HEAD_NAMES:
                head = getattr(model, head_name, None)
                if head is not None:
                    excluded.add(next(n for n, m in model.named_modules() if m is head))
                    break
    for prefix, module in model.named_modules():
        if isinstance(module, BaseTunerLayer):
            excluded.update(f"{prefix}.{suffix}" for suffix, _ in module.named_modules() if suffix)
    peft_config.target_modules = names - excluded
    return peft_config


class BaseTuner(nn.Module):
    """Injects a PEFT method's layers into `self.model` and manages its adapters.

    Subclasses set `prefix` (the start of their parameter names, e.g. "lora_"),
    `tuner_layer_cls`, and implement `_create_and_replace` (build or extend the tuner layer for
    one targeted module) and `_prepare_adapter_config` (defaults for target_modules).
    """

    prefix = ""
    tuner_layer_cls = BaseTunerLayer

    def __init__(self, model, peft_config, adapter_name):
        super().__init__()
        self.model = model
        self.targeted_module_names = []
        self.peft_config = {adapter_name: peft_config} if isinstance(peft_config, PeftConfig) else dict(peft_config)
        self.active_adapter = adapter_name
        self.inject_adapter(self.model, adapter_name)
        self.model.peft_config = self.peft_config

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "model":
                raise
            return getattr(self.model, name)

    @property
    def active_adapters(self):
        if isinstance(self.active_adapter, str):
            return [self.active_adapter]
        return self.active_adapter

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)

    @staticmethod
    def get_model_config(model):
        config = getattr(model, "config", None)
        if config is None:
            return {"model_type": "custom"}
        return config.to_dict() if hasattr(config, "to_dict") else dict(config)

    def _prepare_adapter_config(self, peft_config, model_config):
        return peft_config

    def _check_new_adapter_config(self, config):
        """Several adapters may coexist, but at most one of them may train biases."""
        if len(self.peft_config) <= 1:
            return
        bias_values = [getattr(conf, "bias", "none") for conf in self.peft_config.values()]
        if sum(value != "none" for value in bias_values) > 1:
            raise ValueError(f"{type(self).__name__} supports only 1 adapter with bias. When using multiple "
                             "adapters, set bias to 'none' for all adapters.")

    def _create_and_replace(self, peft_config, adapter_name, target, target_name, parent, current_key):
        raise NotImplementedError

    def inject_adapter(self, model, adapter_name):
        """Replace every module the adapter's config targets by (or extend it with) a tuner layer."""
        config = self.peft_config[adapter_name]
        self._check_new_adapter_config(config)
        config = self._prepare_adapter_config(config, self.get_model_config(model))
        config = maybe_include_all_linear_layers(config, model)
        self.peft_config[adapter_name] = config
        skipped = {name for name, module in model.named_modules()
                   if isinstance(module, (BaseTunerLayer, ModulesToSaveWrapper))}
        matched = False
        for key, _ in list(model.named_modules()):
            if not key or any(key.startswith(f"{name}.") for name in skipped):
                continue
            if not check_target_module_exists(config, key):
                continue
            matched = True
            if key not in self.targeted_module_names:
                self.targeted_module_names.append(key)
            parent, target, target_name = get_submodules(model, key)
            self._create_and_replace(config, adapter_name, target, target_name, parent, current_key=key)
        if not matched:
            raise ValueError(f"Target modules {config.target_modules} not found in the base model. Please check the "
                             "target modules and try again.")
        self._mark_only_adapters_as_trainable(model)
        if config.inference_mode:
            for name, parameter in model.named_parameters():
                if adapter_name in name:
                    parameter.requires_grad_(False)
        set_trainable(model, adapter_name, getattr(config, "modules_to_save", None),
                      inference_mode=config.inference_mode, activate_adapter=adapter_name in self.active_adapters)

    def _replace_module(self, parent, child_name, new_module, child):
        setattr(parent, child_name, new_module)

    def _mark_only_adapters_as_trainable(self, model):
        """Freeze everything but adapter weights (and modules_to_save copies), then apply `bias`."""
        adapter_parameters = set(filter_state_dict_by_key_prefixes(dict(model.named_parameters()),
                                                                   tuner_state_dict_key_prefixes(model)))
        wrapper_names = {n for n, m in model.named_modules() if isinstance(m, ModulesToSaveWrapper)}
        for name, parameter in model.named_parameters():
            if name not in adapter_parameters and not _is_key_under_prefixes(name, wrapper_names):
                parameter.requires_grad_(False)
        for active_adapter in self.active_adapters:
            bias = getattr(self.peft_config[active_adapter], "bias", "none")
            if bias == "all":
                for name, parameter in model.named_parameters():
                    if name == "bias" or name.endswith(".bias"):
                        parameter.requires_grad_(True)
            elif bias.endswith("_only"):
                for module in model.modules():
                    if isinstance(module, self.tuner_layer_cls) and getattr(module, "bias", None) is not None:
                        module.bias.requires_grad_(True)
            elif bias != "none":
                raise NotImplementedError(f"Requested bias: {bias}, is not implemented.")

    # --- adapters ----------------------------------------------------------------------

    def _layers(self):
        return [m for m in self.model.modules() if isinstance(m, (BaseTunerLayer, ModulesToSaveWrapper))]

    def set_adapter(self, adapter_name, inference_mode=False):
        """Activate adapter(s) on every layer; `inference_mode` keeps them frozen."""
        names = [adapter_name] if isinstance(adapter_name, str) else list(adapter_name)
        for module in self._layers():
            if isinstance(module, ModulesToSaveWrapper):
                present = [name for name in names if name in module.modules_to_save]
                if len(present) > 1:
                    raise ValueError(f"Only one adapter can be set at a time for modules_to_save, got {present}")
                module.set_adapter(present, inference_mode=inference_mode)
                continue
            if module.merged:
                warnings.warn("Adapter cannot be set when the model is merged. Unmerging the model first.")
                module.unmerge()
            module.set_adapter(names, inference_mode=inference_mode)
        self.active_adapter = adapter_name

    def _enable_adapter_layers(self, enabled):
        for module in self._layers():
            module.enable_adapters(enabled)

    def enable_adapter_layers(self):
        self._enable_adapter_layers(True)

    def disable_adapter_layers(self):
        """Run the base model alone (a trained bias="all"/"lora_only" stays in, as in HF peft)."""
        for active_adapter in self.active_adapters:
            bias = getattr(self.peft_config[active_adapter], "bias", "none")
            if bias != "none":
                warnings.warn(f"Careful, disabling adapter layers with bias configured to be '{bias}' does not "
                              "produce the same output as the base model would without adaption.")
        self._enable_adapter_layers(False)

    def delete_adapter(self, adapter_name):
        if adapter_name not in self.peft_config:
            raise ValueError(f"Adapter {adapter_name} does not exist")
        for module in self.model.modules():
            if isinstance(module, BaseTunerLayer) and adapter_name in module.merged_adapters:
                raise ValueError(f"Cannot delete adapter {adapter_name!r} while it is merged; unmerge it first.")
        del self.peft_config[adapter_name]
        new_adapters = None
        for module in self.model.modules():
            if isinstance(module, BaseTunerLayer):
                module.delete_adapter(adapter_name)
                if new_adapters is None:
                    new_adapters = module.active_adapters[:]
        for module in self.model.modules():
            if isinstance(module, ModulesToSaveWrapper):
                module.delete_adapter(adapter_name, new_adapters)
        self.active_adapter = new_adapters or []

    def merge_adapter(self, adapter_names=None, safe_merge=False):
        """Merge adapters into the base weights in place (reversible with `unmerge_adapter`)."""
        for module in self.model.modules():
            if isinstance(module, BaseTunerLayer):
                module.merge(safe_merge=safe_merge, adapter_names=adapter_names)

    def unmerge_adapter(self):
        for module in self.model.modules():
            if isinstance(module, BaseTunerLayer):
                module.unmerge()

    def _unload_and_optionally_merge(self, merge=True, safe_merge=False, adapter_names=None):
        tuner_names = {key for key, m in self.model.named_modules() if isinstance(m, BaseTunerLayer)}
        keys = [key for key, _ in self.model.named_modules()
                if not _is_key_under_prefixes(key.rpartition(".")[0], tuner_names)]
        for key in keys:
            if not key:
                continue
            try:
                parent, target, target_name = get_submodules(self.model, key)
            except AttributeError:
                continue
            if isinstance(target, ModulesToSaveWrapper):
                self._replace_module(parent, target_name, target.unload_and_optionally_merge_module(
                    merge=merge, safe_merge=safe_merge, adapter_names=adapter_names), target)
            elif isinstance(target, BaseTunerLayer):
                if merge:
                    target.merge(safe_merge=safe_merge, adapter_names=adapter_names)
                self._replace_module(parent, target_name, target.get_base_layer(), target)
        if "peft_config" in self.model.__dict__:
            del self.model.peft_config
        return self.model

    def merge_and_unload(self, progressbar=False, safe_merge=False, adapter_names=None):
        """The base model with the active adapters merged into its weights and the tuner layers removed."""
        return self._unload_and_optionally_merge(merge=True, safe_merge=safe_merge, adapter_names=adapter_names)

    def unload(self):
        """The base model with the tuner layers removed and nothing merged."""
        return self._unload_and_optionally_merge(merge=False)

    # --- state dicts (the on-disk key format) ---------------------------------------------

    @classmethod
    def _get_adapter_state_dict(cls, model, config, adapter_name, state_dict):
        """This method's entries of `state_dict` (keys still holding the adapter name), plus biases."""
        entries = filter_state_dict_by_key_prefixes(state_dict, tuner_state_dict_key_prefixes(model))
        bias = getattr(config, "bias", "none")
        if bias == "all":
            entries.update({k: v for k, v in state_dict.items() if k == "bias" or k.endswith(".bias")})
        elif bias.endswith("_only"):
            for module_name, module in model.named_modules():
                if isinstance(module, BaseTunerLayer):
                    bias_name = f"{module_name}.base_layer.bias" if module_name else "base_layer.bias"
                    if bias_name in state_dict:
                        entries[bias_name] = state_dict[bias_name]
        return entries

    @classmethod
    def _remove_adapter_name_from_key(cls, key, adapter_name):
        return remove_adapter_name_from_key(key, adapter_name)

    @classmethod
    def _remap_adapter_state_dict_for_load(cls, model, config, adapter_name, state_dict):
        """Checkpoint keys (no adapter name) → model keys (with it); other entries pass unchanged."""
        prefixes = tuner_state_dict_key_prefixes(model, adapter_name=adapter_name)
        checkpoint_to_model = {}
        for model_key in filter_state_dict_by_key_prefixes(model.state_dict(), prefixes):
            checkpoint_key = cls._remove_adapter_name_from_key(model_key, adapter_name)
            checkpoint_to_model[checkpoint_key] = model_key
            if not model_key.startswith("base_model.model."):
                checkpoint_to_model["base_model.model." + checkpoint_key] = model_key
        return {checkpoint_to_model.get(k, k): v for k, v in state_dict.items()}
