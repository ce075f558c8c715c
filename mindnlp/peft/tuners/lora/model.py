# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoraModel`: puts LoRA layers into a model, and combines adapters (`add_weighted_adapter`)."""
import dataclasses
import functools
import math
import operator

from .... import core
from ..tuners_utils import BaseTuner
from ...utils.other import ModulesToSaveWrapper, get_pattern_key, get_submodules
from .layer import Conv2d, LoraLayer, dispatch_default

# Default target_modules per model_type when the config names none (HF peft's table, for the
# architectures mindnlp.transformers has).
TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING = {
    "bert": ["query", "value"],
    "roberta": ["query", "value"],
    "xlm-roberta": ["query", "value"],
    "distilbert": ["q_lin", "v_lin"],
    "gpt2": ["c_attn"],
    "llama": ["q_proj", "v_proj"],
    "mistral": ["q_proj", "v_proj"],
    "qwen2": ["q_proj", "v_proj"],
    "gemma": ["q_proj", "v_proj"],
    "t5": ["q", "v"],
    "mt5": ["q", "v"],
    "bart": ["q_proj", "v_proj"],
}


class LoraModel(BaseTuner):
    """The tuner behind `get_peft_model(model, LoraConfig(...))`; `self.model` is the base model."""

    prefix = "lora_"
    tuner_layer_cls = LoraLayer

    def _prepare_adapter_config(self, peft_config, model_config):
        if peft_config.target_modules is None:
            targets = TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING.get(model_config.get("model_type"))
            if targets is None:
                raise ValueError("Please specify `target_modules` in `peft_config`")
            peft_config.target_modules = set(targets)
        return peft_config

    def _create_and_replace(self, lora_config, adapter_name, target, target_name, parent, current_key):
        """Extend an existing LoRA layer with the adapter, or replace the module by a new one."""
        r = lora_config.rank_pattern.get(get_pattern_key(lora_config.rank_pattern.keys(), current_key),
                                         lora_config.r)
        alpha = lora_config.alpha_pattern.get(get_pattern_key(lora_config.alpha_pattern.keys(), current_key),
                                              lora_config.lora_alpha)
        if isinstance(target, LoraLayer):
            target.update_layer(adapter_name, r, alpha, lora_config)
            return
        new_module = dispatch_default(target, adapter_name, lora_config, r=r, lora_alpha=alpha)
        if new_module is None:
            raise ValueError(
                f"Target module {target} is not supported. Currently, only the following modules are supported: "
                "`torch.nn.Linear`, `torch.nn.Embedding`, `torch.nn.Conv1d`, `torch.nn.Conv2d`, "
                "`transformers.pytorch_utils.Conv1D`.")
        if adapter_name not in self.active_adapters:
            new_module.set_adapter(self.active_adapters)  # a new, inactive adapter starts frozen
        self._replace_module(parent, target_name, new_module, target)

    # --- saving and loading: DoRA's magnitude is saved as "...lora_magnitude_vector" -------

    @classmethod
    def _get_adapter_state_dict(cls, model, config, adapter_name, state_dict):
        entries = super()._get_adapter_state_dict(model, config, adapter_name, state_dict)
        if not config.use_dora:
            return entries
        suffix = f"lora_magnitude_vector.{adapter_name}.weight"
        return {(k[: -len(".weight")] if k.endswith(suffix) else k): v for k, v in entries.items()}

    @classmethod
    def _remap_adapter_state_dict_for_load(cls, model, config, adapter_name, state_dict):
        state_dict = {(k + ".weight" if k.endswith("lora_magnitude_vector") else k): v for k, v in state_dict.items()}
        return super()._remap_adapter_state_dict_for_load(model, config, adapter_name, state_dict)

    # --- combining adapters ---------------------------------------------------------------

    def _check_add_weighted_adapter(self, adapters, combination_type, svd_rank):
        for adapter in adapters:
            if adapter not in self.peft_config:
                raise ValueError(f"Adapter {adapter} does not exist")
        wrappers = [m for m in self.modules() if isinstance(m, ModulesToSaveWrapper)]
        if any(sum(adapter in w.modules_to_save for adapter in adapters) > 1 for w in wrappers):
            raise ValueError("Cannot add weighted adapters if they target the same module with modules_to_save.")
        combination_type = "linear" if len(adapters) == 1 else combination_type
        ranks = [config.r if not config.rank_pattern else max(config.r, *config.rank_pattern.values())
                 for config in (self.peft_config[adapter] for adapter in adapters)]
        if combination_type == "linear":
            if len(set(ranks)) != 1:
                raise ValueError("All adapters must have the same r value when using combination_type linear, ties, "
                                 "dare_ties or dare_linear.")
            new_rank = ranks[0]
        elif combination_type == "cat":
            new_rank = sum(ranks)
        elif combination_type == "svd":
            new_rank = svd_rank or max(ranks)
        else:
            raise ValueError(f"Invalid combination_type: {combination_type}")
        target_types = {type(self.peft_config[adapter].target_modules) for adapter in adapters}
        if len(target_types) > 1:
            raise ValueError("all adapter configs should follow the same target modules type. Combining adapters "
                             "with `target_modules` type being a mix of list/set and string is not supported.")
        if target_types == {str}:
            new_targets = "|".join(f"({self.peft_config[adapter].target_modules})" for adapter in adapters)
        else:
            new_targets = functools.reduce(operator.or_, (self.peft_config[a].target_modules for a in adapters))
        return combination_type, new_rank, new_targets

    def add_weighted_adapter(self, adapters, weights, adapter_name, combination_type="svd", svd_rank=None):
        """Add `adapter_name`, a weighted combination of `adapters` (HF peft's semantics).

        - "linear": A = sum sqrt(w_i s_i) A_i, B = sum sqrt(w_i s_i) B_i (needs equal ranks; only an
          approximation of sum w_i s_i B_i A_i).
        - "cat": A, B are the stacked w_i s_i A_i and B_i, so B A = sum w_i s_i B_i A_i exactly
          (rank = sum of ranks).
        - "svd": the rank-`svd_rank` truncated SVD of sum w_i delta_i (best approximation).
        The new adapter has lora_alpha = r, i.e. scaling 1.
        """
        if adapter_name in self.peft_config:
            return
        combination_type, new_rank, new_targets = self._check_add_weighted_adapter(adapters, combination_type,
                                                                                    svd_rank)
        self.peft_config[adapter_name] = dataclasses.replace(
            self.peft_config[adapters[0]], r=new_rank, lora_alpha=new_rank, target_modules=new_targets,
            alpha_pattern={}, rank_pattern={})
        self.inject_adapter(self.model, adapter_name)
        for module in self.model.modules():
            if isinstance(module, LoraLayer):
                for layer_name in module.adapter_layer_names:
                    container = getattr(module, layer_name)
                    if adapter_name in container:
                        container[adapter_name].requires_grad_(False)
        for key, _ in list(self.model.named_modules()):
            if self.prefix in key:
                continue
            _, target, _ = get_submodules(self.model, key)
            if not isinstance(target, LoraLayer):
                continue
            if adapter_name in target.lora_A:
                target_A, target_B = target.lora_A[adapter_name].weight, target.lora_B[adapter_name].weight
            elif adapter_name in target.lora_embedding_A:
                target_A, target_B = target.lora_embedding_A[adapter_name], target.lora_embedding_B[adapter_name]
            else:
                continue
            if combination_type == "cat":
                new_A, new_B = self._cat_combination(target, adapters, weights, target_A, target_B)
            elif combination_type == "svd":
                new_A, new_B = self._svd_combination(target, adapters, weights, new_rank, target_A, target_B)
            else:
                new_A, new_B = self._linear_combination(target, adapters, weights)
            with core.no_grad():
                target_A.copy_(new_A.to(target_A.dtype))
                target_B.copy_(new_B.to(target_B.dtype))

    @staticmethod
    def _factors(target, adapter):
        if adapter in target.lora_A:
            return target.lora_A[adapter].weight.detach(), target.lora_B[adapter].weight.detach()
        if adapter in target.lora_embedding_A:
            return target.lora_embedding_A[adapter].detach(), target.lora_embedding_B[adapter].detach()
        return None

    def _cat_combination(self, target, adapters, weights, target_A, target_B):
        loras_A, loras_B = [], []
        for adapter, weight in zip(adapters, weights):
            factors = self._factors(target, adapter)
            if factors is None:
                continue
            loras_A.append(factors[0] * (weight * target.scaling[adapter]))
            loras_B.append(factors[1])
        if not loras_A:
            raise ValueError("No matching LoRAs found. Please raise an issue on GitHub.")
        new_A = core.zeros_like(target_A.detach())
        new_B = core.zeros_like(target_B.detach())
        stacked_A, stacked_B = core.cat(loras_A, dim=0), core.cat(loras_B, dim=1)
        new_A[: stacked_A.shape[0]] = stacked_A
        new_B[:, : stacked_B.shape[1]] = stacked_B
        return new_A, new_B

    def _linear_combination(self, target, adapters, weights):
        sum_A, sum_B = 0, 0
        for adapter, weight in zip(adapters, weights):
            factors = self._factors(target, adapter)
            if factors is None:
                continue
            weight_with_scaling = weight * target.scaling[adapter]
            sign = 1 if weight_with_scaling >= 0 else -1
            root = math.sqrt(abs(weight_with_scaling))
            sum_A = sum_A + factors[0] * (root * sign)
            sum_B = sum_B + factors[1] * root
        if isinstance(sum_A, int):
            raise ValueError("No matching LoRAs found. Please raise an issue on GitHub.")
        return sum_A, sum_B

    def _svd_combination(self, target, adapters, weights, new_rank, target_A, target_B):
        present = [(a, w) for a, w in zip(adapters, weights) if self._factors(target, a) is not None]
        if not present:
            raise ValueError("No matching LoRAs found. Please raise an issue on GitHub.")
        is_embedding = any(adapter in target.lora_embedding_A for adapter in adapters)
        with core.no_grad():
            delta = sum(target.get_delta_weight(a) * w for a, w in present)
        conv2d = isinstance(target, Conv2d)
        if conv2d:
            delta = delta.squeeze() if tuple(target.weight.shape[2:4]) == (1, 1) else delta.flatten(start_dim=1)
        if getattr(target, "fan_in_fan_out", False) or is_embedding:
            delta = delta.T
        if new_rank > min(delta.shape):
            raise ValueError(f"svd_rank={new_rank} is larger than the rank a {tuple(delta.shape)} weight update can "
                             f"have; pass svd_rank <= {min(delta.shape)}.")
        U, S, Vh = core.linalg.svd(delta, full_matrices=False)
        U = U[:, :new_rank] * S[:new_rank][None, :]
        Vh = Vh[:new_rank, :]
        if conv2d:
            U, Vh = U.reshape(target_B.shape), Vh.reshape(target_A.shape)
        return Vh, U
