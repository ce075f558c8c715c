# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`AdaLoraModel`: LoRA in SVD form with a rank budget reallocated during training.

Training loop (as in HF peft): after `loss.backward()` and `optimizer.step()`, before
`optimizer.zero_grad()`, call `model.base_model.update_and_allocate(global_step)`.
"""
import warnings

from .... import core
from ....core import nn
from ..lora.model import LoraModel
from ..tuners_utils import BaseTunerLayer
from ...utils.other import get_submodules
from .layer import AdaLoraLayer, RankAllocator, SVDConv2d, SVDLinear

# HF peft's defaults per model_type, for the architectures mindnlp has.
TRANSFORMERS_MODELS_TO_ADALORA_TARGET_MODULES_MAPPING = {
    "gpt2": ["c_attn"], "llama": ["q_proj", "v_proj"], "bert": ["query", "value"],
    "roberta": ["query", "key", "value", "dense"], "gemma": ["q_proj", "v_proj"], "qwen2": ["q_proj", "v_proj"],
}


class AdaLoraModel(LoraModel):
    """At most one adapter trains (the others must be in inference mode); it owns the RankAllocator."""

    tuner_layer_cls = AdaLoraLayer

    def __init__(self, model, peft_config, adapter_name):
        super().__init__(model, peft_config, adapter_name)
        if sum(not config.inference_mode for config in self.peft_config.values()) > 1:
            raise ValueError("AdaLoraModel supports only 1 trainable adapter. When using multiple adapters, set "
                             "inference_mode to True for all adapters except the one you want to train.")
        self.trainable_adapter_name = None
        if self.peft_config[adapter_name].inference_mode:
            for name, parameter in self.model.named_parameters():
                if f".{adapter_name}" in name:
                    parameter.requires_grad_(False)
        else:
            self.trainable_adapter_name = adapter_name
            self.rankallocator = RankAllocator(self.model, self.peft_config[adapter_name], adapter_name)

    def _check_new_adapter_config(self, config):
        super()._check_new_adapter_config(config)
        if sum(not c.inference_mode for c in self.peft_config.values()) > 1:
            raise ValueError(f"{type(self).__name__} supports only 1 trainable adapter. When using multiple adapters, "
                             "set inference_mode to True for all adapters except the one you want to train.")

    def _prepare_adapter_config(self, peft_config, model_config):
        if peft_config.target_modules is None:
            targets = TRANSFORMERS_MODELS_TO_ADALORA_TARGET_MODULES_MAPPING.get(model_config.get("model_type"))
            if targets is None:
                raise ValueError("Please specify `target_modules` in `peft_config`")
            peft_config.target_modules = set(targets)
        return peft_config

    def _create_and_replace(self, lora_config, adapter_name, target, target_name, parent, current_key):
        if isinstance(target, AdaLoraLayer):
            target.update_layer(adapter_name, lora_config.init_r, lora_config.lora_alpha, lora_config)
            return
        new_module = self._create_new_module(lora_config, adapter_name, target)
        if adapter_name not in self.active_adapters:
            new_module.requires_grad_(False)
        self._replace_module(parent, target_name, new_module, target)

    @staticmethod
    def _create_new_module(config, adapter_name, target):
        from ....transformers.pytorch_utils import Conv1D

        base = target.get_base_layer() if isinstance(target, BaseTunerLayer) else target
        kwargs = dict(r=config.init_r, lora_alpha=config.lora_alpha)
        if isinstance(base, nn.Conv2d):
            return SVDConv2d(target, adapter_name, config, **kwargs)
        if isinstance(base, nn.Linear):
            if config.fan_in_fan_out:
                warnings.warn("fan_in_fan_out is set to True but the target module is `torch.nn.Linear`. Setting "
                              "fan_in_fan_out to False.")
                config.fan_in_fan_out = False
            return SVDLinear(target, adapter_name, config, **kwargs)
        if isinstance(base, Conv1D):
            if not config.fan_in_fan_out:
                warnings.warn("fan_in_fan_out is set to False but the target module is `Conv1D`. Setting "
                              "fan_in_fan_out to True.")
                config.fan_in_fan_out = True
            return SVDLinear(target, adapter_name, config, **kwargs)
        raise ValueError(f"Target module {target} is not supported. Currently, only `torch.nn.Linear`, `Conv1D`, "
                         "and `torch.nn.Conv2d` are supported.")

    def forward(self, *args, **kwargs):
        """The model's output, with orth_reg_weight * mean ||P^T P - I||_F (over A and B) added to its loss."""
        outputs = self.model(*args, **kwargs)
        loss = getattr(outputs, "loss", None)
        if loss is None or not isinstance(loss, core.Tensor) or self.trainable_adapter_name is None:
            return outputs
        orth_reg_weight = self.peft_config[self.trainable_adapter_name].orth_reg_weight
        if orth_reg_weight < 0:
            raise ValueError("orth_reg_weight should be greater than or equal to 0. ")
        penalties = []
        for name, parameter in self.model.named_parameters():
            if ("lora_A" in name or "lora_B" in name) and self.trainable_adapter_name in name:
                covariance = parameter @ parameter.T if "lora_A" in name else parameter.T @ parameter
                identity = core.eye(*covariance.shape, dtype=covariance.dtype)
                penalties.append(core.norm(covariance - identity, p="fro"))
        if penalties:
            outputs.loss = loss + orth_reg_weight * (sum(penalties) / len(penalties))
        return outputs

    # --- the rank budget -----------------------------------------------------------------

    def update_and_allocate(self, global_step):
        """Update importance scores and prune to the step's budget; fix the final pattern at total_step - tfinal."""
        config = self.peft_config[self.trainable_adapter_name]
        final_step = config.total_step - config.tfinal
        if global_step < final_step:
            _, rank_pattern = self.rankallocator.update_and_allocate(self.model, global_step)
            if rank_pattern:
                config.rank_pattern = rank_pattern
        elif global_step == final_step:
            _, rank_pattern = self.rankallocator.update_and_allocate(self.model, global_step, force_mask=True)
            config.rank_pattern = rank_pattern
            self.rankallocator.reset_ipt()
        else:
            self.rankallocator.mask_using_rank_pattern(self.model, config.rank_pattern)

    @staticmethod
    def _layer_key(name, adapter_name):
        """'...query.lora_E.default' or '...query.lora_E' → '...query'."""
        parts = name.split(".")
        return ".".join(parts[:-2] if adapter_name in name else parts[:-1])

    def resize_modules_by_rank_pattern(self, rank_pattern, adapter_name):
        """Shrink each layer's A, E, B to the kept triplets (before loading a pruned checkpoint)."""
        config = self.peft_config[adapter_name]
        for name, kept in rank_pattern.items():
            rank = sum(kept)
            _, target, _ = get_submodules(self.model, self._layer_key(name, adapter_name))
            index = core.tensor([i for i, keep in enumerate(kept) if keep], dtype=core.int64)
            lora_E = target.lora_E[adapter_name].detach()[index]
            lora_A = target.lora_A[adapter_name].detach()[index]
            lora_B = target.lora_B[adapter_name].detach()[:, index]
            ranknum = target.ranknum[adapter_name].detach().clone()
            target.update_layer(adapter_name, rank, config.lora_alpha, config)
            if rank > 0:
                with core.no_grad():
                    target.lora_E[adapter_name].copy_(lora_E)
                    target.lora_A[adapter_name].copy_(lora_A)
                    target.lora_B[adapter_name].copy_(lora_B)
                    target.ranknum[adapter_name].copy_(ranknum)

    @staticmethod
    def resize_state_dict_by_rank_pattern(rank_pattern, state_dict, adapter_name):
        """Keep only the kept triplets' rows of A and E and columns of B in a state dict to save."""
        for name, kept in rank_pattern.items():
            rank = sum(kept)
            index = core.tensor([i for i, keep in enumerate(kept) if keep], dtype=core.int64)
            prefix = AdaLoraModel._layer_key(name, adapter_name)
            for layer in ("lora_E", "lora_A", "lora_B"):
                key = f"base_model.model.{prefix}.{layer}.{adapter_name}"
                tensor = state_dict[key]
                if layer != "lora_B" and rank != tensor.shape[0]:
                    state_dict[key] = tensor[index]
                elif layer == "lora_B" and rank != tensor.shape[1]:
                    state_dict[key] = tensor[:, index]
        return state_dict

    # --- the on-disk format: no ranknum, tensors pruned to the rank pattern -------------------

    @classmethod
    def _get_adapter_state_dict(cls, model, config, adapter_name, state_dict):
        entries = super()._get_adapter_state_dict(model, config, adapter_name, state_dict)
        entries = {k: v for k, v in entries.items() if not k.endswith(f".ranknum.{adapter_name}")}
        if config.rank_pattern is not None:
            config.rank_pattern = {k.replace(f".{adapter_name}", ""): v for k, v in config.rank_pattern.items()}
            entries = cls.resize_state_dict_by_rank_pattern(config.rank_pattern, entries, adapter_name)
        return entries

    @classmethod
    def _remap_adapter_state_dict_for_load(cls, model, config, adapter_name, state_dict):
        if config.rank_pattern is not None:
            model.base_model.resize_modules_by_rank_pattern(config.rank_pattern, adapter_name)
        return super()._remap_adapter_state_dict_for_load(model, config, adapter_name, state_dict)

    def add_weighted_adapter(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} does not support add_weighted_adapter method.")
