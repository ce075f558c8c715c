# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`IA3Model`: puts (IA)^3 layers into a model, and combines adapters (`add_weighted_adapter`)."""
import dataclasses
import re
import warnings

from .... import core
from ....core import nn
from ..tuners_utils import BaseTuner, BaseTunerLayer
from ...utils.other import ModulesToSaveWrapper, get_submodules
from .layer import Conv2d, IA3Layer, Linear

# HF peft's defaults per model_type (target and feed-forward modules), for mindnlp's architectures.
TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING = {
    "gpt2": ["c_attn", "mlp.c_proj"], "bert": ["key", "value", "output.dense"],
    "roberta": ["key", "value", "output.dense"], "llama": ["k_proj", "v_proj", "down_proj"],
    "mistral": ["k_proj", "v_proj", "down_proj"], "gemma": ["q_proj", "v_proj", "down_proj"],
    "qwen2": ["q_proj", "v_proj", "down_proj"],
}
TRANSFORMERS_MODELS_TO_IA3_FEEDFORWARD_MODULES_MAPPING = {
    "gpt2": ["mlp.c_proj"], "bert": ["output.dense"], "roberta": ["output.dense"], "llama": ["down_proj"],
    "mistral": ["down_proj"], "gemma": ["down_proj"], "qwen2": ["down_proj"],
}


class IA3Model(BaseTuner):
    prefix = "ia3_"
    tuner_layer_cls = IA3Layer

    def _prepare_adapter_config(self, peft_config, model_config):
        model_type = model_config.get("model_type")
        if peft_config.target_modules is None:
            if model_type not in TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING:
                raise ValueError("Please specify `target_modules` in `peft_config`")
            peft_config.target_modules = set(TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING[model_type])
        if peft_config.feedforward_modules is None:
            if model_type not in TRANSFORMERS_MODELS_TO_IA3_FEEDFORWARD_MODULES_MAPPING:
                raise ValueError("Please specify `feedforward_modules` in `peft_config`")
            peft_config.feedforward_modules = set(TRANSFORMERS_MODELS_TO_IA3_FEEDFORWARD_MODULES_MAPPING[model_type])
        return peft_config

    @staticmethod
    def _is_feedforward(config, key):
        if isinstance(config.feedforward_modules, str):
            return re.fullmatch(config.feedforward_modules, key) is not None
        return any(key.endswith(name) for name in config.feedforward_modules)

    def _create_and_replace(self, ia3_config, adapter_name, target, target_name, parent, current_key):
        if isinstance(target, IA3Layer):
            target.update_layer(adapter_name, ia3_config)
            return
        new_module = self._create_new_module(ia3_config, adapter_name, target,
                                             is_feedforward=self._is_feedforward(ia3_config, current_key))
        if adapter_name not in self.active_adapters:
            new_module.set_adapter(self.active_adapters)  # a new, inactive adapter starts frozen
        self._replace_module(parent, target_name, new_module, target)

    @staticmethod
    def _create_new_module(config, adapter_name, target, is_feedforward):
        from ....transformers.pytorch_utils import Conv1D

        base = target.get_base_layer() if isinstance(target, BaseTunerLayer) else target
        if isinstance(base, nn.Conv2d):
            return Conv2d(target, adapter_name, config, is_feedforward=is_feedforward)
        if isinstance(base, nn.Linear):
            if config.fan_in_fan_out:
                warnings.warn("fan_in_fan_out is set to True but the target module is `torch.nn.Linear`. Setting "
                              "fan_in_fan_out to False.")
                config.fan_in_fan_out = False
            return Linear(target, adapter_name, config, is_feedforward=is_feedforward)
        if isinstance(base, Conv1D):
            if not config.fan_in_fan_out:
                warnings.warn("fan_in_fan_out is set to False but the target module is `Conv1D`. Setting "
                              "fan_in_fan_out to True.")
                config.fan_in_fan_out = True
            return Linear(target, adapter_name, config, is_feedforward=is_feedforward, is_target_conv_1d_layer=True)
        raise ValueError(f"Target module {target} is not supported. Currently, only `torch.nn.Linear`, "
                         "`torch.nn.Conv2d`, and `Conv1D` are supported.")

    def add_weighted_adapter(self, adapters, weights, adapter_name):
        """Add `adapter_name` whose vectors are sum_i weights[i] * ia3_l of adapters[i] (HF peft's rule)."""
        if adapter_name in self.peft_config:
            return
        for adapter in adapters:
            if adapter not in self.peft_config:
                raise ValueError(f"Adapter {adapter} does not exist")
        wrappers = [m for m in self.modules() if isinstance(m, ModulesToSaveWrapper)]
        if any(sum(adapter in w.modules_to_save for adapter in adapters) > 1 for w in wrappers):
            raise ValueError("Cannot add weighted adapters targeting the same module with modules_to_save.")
        configs = [self.peft_config[adapter] for adapter in adapters]
        if len({type(c.target_modules) for c in configs}) > 1 or len({type(c.feedforward_modules)
                                                                      for c in configs}) > 1:
            raise ValueError("All adapter configs should have the same type for target and feedforward modules.")

        def union(field_name):
            values = [getattr(c, field_name) for c in configs]
            if isinstance(values[0], str):
                return "|".join(f"({value})" for value in values)
            return set().union(*values)

        self.peft_config[adapter_name] = dataclasses.replace(
            configs[0], target_modules=union("target_modules"), feedforward_modules=union("feedforward_modules"))
        self.inject_adapter(self.model, adapter_name)
        for key, _ in list(self.model.named_modules()):
            _, target, _ = get_submodules(self.model, key) if key else (None, self.model, None)
            if not isinstance(target, IA3Layer) or adapter_name not in target.ia3_l:
                continue
            combined = target.ia3_l[adapter_name]
            combined.requires_grad_(False)
            total = core.zeros_like(combined.detach())
            for adapter, weight in zip(adapters, weights):
                if adapter in target.ia3_l:
                    total = total + target.ia3_l[adapter].detach() * weight
            with core.no_grad():
                combined.copy_(total)
