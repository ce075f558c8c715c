# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""AdaLoRA layers and the rank allocator.

A layer adds scaling / ranknum * B diag(E) A x: A (r, in) and B (out, r) play the singular
vectors, E (r, 1) the singular values. Pruning a triplet just zeroes its entry of E, so shapes
stay fixed during training; `ranknum` (init_r, not trained) keeps the normalisation constant.
"""
from .... import core
from ....core import nn
from ....core.nn import functional as F
from ..tuners_utils import BaseTunerLayer
from ...utils.other import transpose


def _in_out_features(module):
    from ....transformers.pytorch_utils import Conv1D

    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, Conv1D):
        return tuple(module.weight.shape)
    if isinstance(module, nn.Conv2d):
        return module.in_channels, module.out_channels
    raise TypeError(f"AdaLoRA does not support layers of type {type(module).__name__}")


class AdaLoraLayer(BaseTunerLayer):
    adapter_layer_names = ("lora_A", "lora_B", "lora_E", "lora_embedding_A", "lora_embedding_B")
    other_param_names = ("r", "lora_alpha", "scaling", "lora_dropout", "ranknum")

    def _init_adalora_state(self, base_layer):
        self.base_layer = base_layer
        self.r = {}
        self.lora_alpha = {}
        self.scaling = {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ParameterDict({})
        self.lora_B = nn.ParameterDict({})
        self.lora_E = nn.ParameterDict({})
        self.lora_embedding_A = nn.ParameterDict({})
        self.lora_embedding_B = nn.ParameterDict({})
        self.ranknum = nn.ParameterDict({})
        self._disable_adapters = False
        self.merged_adapters = []
        self.in_features, self.out_features = _in_out_features(self.get_base_layer())
        self.get_base_layer().weight.requires_grad_(False)

    def _a_columns(self):
        """Columns of A: the input features (times the kernel size for convolutions)."""
        return self.in_features

    def update_layer(self, adapter_name, r, lora_alpha, config):
        if r < 0:
            raise ValueError(f"`r` should be a positive integer or 0, but the value passed is {r}")
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout[adapter_name] = nn.Dropout(p=config.lora_dropout) if config.lora_dropout > 0 \
            else nn.Identity()
        device = self.get_base_layer().weight.device
        self.lora_A[adapter_name] = nn.Parameter(core.randn(r, self._a_columns(), device=device))
        self.lora_E[adapter_name] = nn.Parameter(core.randn(r, 1, device=device))
        self.lora_B[adapter_name] = nn.Parameter(core.randn(self.out_features, r, device=device))
        self.ranknum[adapter_name] = nn.Parameter(core.full((1,), float(r), device=device), requires_grad=False)
        self.scaling[adapter_name] = lora_alpha if lora_alpha > 0 else float(r)
        if config.init_lora_weights:
            self.reset_lora_parameters(adapter_name)
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def reset_lora_parameters(self, adapter_name):
        """E = 0 (the adapter starts as a no-op); A, B ~ N(0, 0.02^2)."""
        if adapter_name in self.lora_A:
            nn.init.zeros_(self.lora_E[adapter_name])
            nn.init.normal_(self.lora_A[adapter_name], mean=0.0, std=0.02)
            nn.init.normal_(self.lora_B[adapter_name], mean=0.0, std=0.02)

    def _svd_product(self, adapter):
        """scaling / (ranknum + 1e-5) * B diag(E) A, as an (out, in) matrix."""
        product = self.lora_B[adapter] @ (self.lora_A[adapter] * self.lora_E[adapter])
        return product * self.scaling[adapter] / (self.ranknum[adapter] + 1e-5)

    def _holds_adapter(self, adapter):
        return adapter in self.lora_A

    def merge(self, safe_merge=False, adapter_names=None):
        self._merge_into_base_weight(safe_merge, adapter_names, self._weight_plus_delta)

    def unmerge(self):
        self._unmerge_from_base_weight(self._weight_minus_delta)

    def _adapter_output(self, adapter, x):
        raise NotImplementedError

    def forward(self, x, *args, **kwargs):
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        result = self.base_layer(x, *args, **kwargs)
        for adapter in self.active_adapters:
            if adapter not in self.lora_A:
                continue
            x = x if x.dtype == self.lora_A[adapter].dtype else x.to(self.lora_A[adapter].dtype)
            result = result + self._adapter_output(adapter, self.lora_dropout[adapter](x))
        return result


class SVDLinear(AdaLoraLayer, nn.Module):
    """AdaLoRA on nn.Linear, or on GPT-2's Conv1D (`fan_in_fan_out`)."""

    def __init__(self, base_layer, adapter_name, config, r=0, lora_alpha=1):
        super().__init__()
        self._init_adalora_state(base_layer)
        self.fan_in_fan_out = config.fan_in_fan_out
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, config)

    def get_delta_weight(self, adapter):
        return transpose(self._svd_product(adapter), self.fan_in_fan_out)

    def _adapter_output(self, adapter, x):
        lora_A, lora_B, lora_E = self.lora_A[adapter], self.lora_B[adapter], self.lora_E[adapter]
        return x @ (lora_A * lora_E).T @ lora_B.T * self.scaling[adapter] / (self.ranknum[adapter] + 1e-5)

    def __repr__(self):
        return "adalora." + super().__repr__()


class SVDConv2d(AdaLoraLayer, nn.Module):
    """AdaLoRA on nn.Conv2d: A has in_channels * kh * kw columns; the product is the kernel delta."""

    def __init__(self, base_layer, adapter_name, config, r=0, lora_alpha=1):
        super().__init__()
        self._init_adalora_state(base_layer)
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, config)

    def _a_columns(self):
        kernel = self.get_base_layer().kernel_size
        return self.in_features * kernel[0] * kernel[1]

    def get_delta_weight(self, adapter):
        return self._svd_product(adapter).reshape(tuple(self.get_base_layer().weight.shape))

    def _adapter_output(self, adapter, x):
        base = self.get_base_layer()
        return F.conv2d(x, self.get_delta_weight(adapter), stride=base.stride, padding=base.padding,
                        dilation=base.dilation, groups=base.groups)

    def __repr__(self):
        return "adalora." + super().__repr__()


class RankAllocator:
    """AdaLoRA's budget schedule and importance-based pruning of the singular values E.

    Parameter names are those of `model` (the base model inside the tuner); a triplet's name is
    its lora_E name, and its score is the smoothed importance of its E entry plus the mean
    importance of its row of A and its column of B.
    """

    def __init__(self, model, peft_config, adapter_name):
        self.peft_config = peft_config
        self.adapter_name = adapter_name
        self.beta1 = peft_config.beta1
        self.beta2 = peft_config.beta2
        if not (0 < self.beta1 < 1 and 0 < self.beta2 < 1):
            raise ValueError(f"beta1 and beta2 must lie in (0, 1), got {self.beta1} and {self.beta2}")
        self.reset_ipt()
        self._set_budget_scheduler(model)

    def set_total_step(self, total_step):
        self.peft_config.total_step = total_step

    def reset_ipt(self):
        self.ipt = {}
        self.exp_avg_ipt = {}
        self.exp_avg_unc = {}

    def _set_budget_scheduler(self, model):
        self.init_bgt = 0
        names = set()
        for name, parameter in model.named_parameters():
            if f"lora_A.{self.adapter_name}" in name:
                self.init_bgt += parameter.shape[0]
                names.add(name.replace("lora_A", "%s"))
        self.name_set = sorted(names)
        self.target_bgt = self.peft_config.target_r * len(self.name_set)

    def budget_schedule(self, step):
        """(total rank budget at `step`, whether to prune now): constant, then a cubic decrease, then target."""
        config = self.peft_config
        if step <= config.tinit:
            return self.init_bgt, False
        if step > config.total_step - config.tfinal:
            return self.target_bgt, True
        remaining = 1 - (step - config.tinit) / (config.total_step - config.tfinal - config.tinit)
        budget = int((self.init_bgt - self.target_bgt) * remaining ** 3 + self.target_bgt)
        return budget, step % config.deltaT == 0

    def update_ipt(self, model):
        """Update the smoothed sensitivity |p * grad| and its uncertainty for every adapter weight."""
        with core.no_grad():
            for name, parameter in model.named_parameters():
                if "lora_" not in name or self.adapter_name not in name:
                    continue
                if name not in self.ipt:
                    self.exp_avg_ipt[name] = core.zeros_like(parameter.detach())
                    self.exp_avg_unc[name] = core.zeros_like(parameter.detach())
                if parameter.grad is None:
                    raise RuntimeError(f"AdaLoRA's update_and_allocate needs the gradient of {name}: call it after "
                                       "loss.backward() and before optimizer.zero_grad().")
                self.ipt[name] = (parameter.detach() * parameter.grad).abs()
                self.exp_avg_ipt[name] = self.beta1 * self.exp_avg_ipt[name] + (1 - self.beta1) * self.ipt[name]
                self.exp_avg_unc[name] = (self.beta2 * self.exp_avg_unc[name]
                                          + (1 - self.beta2) * (self.ipt[name] - self.exp_avg_ipt[name]).abs())

    def _element_score(self, name):
        return self.exp_avg_ipt[name] * self.exp_avg_unc[name]

    def mask_to_budget(self, model, budget):
        """Zero the E entries of the lowest-scoring triplets so that `budget` remain; returns the
        rank pattern {lora_E name: [kept?] * r}."""
        value_ipt, vector_ipt = {}, {}
        for name, _ in model.named_parameters():
            if f"lora_A.{self.adapter_name}" in name:
                score = self._element_score(name).mean(dim=1, keepdim=True)
                vector_ipt.setdefault(name.replace("lora_A", "%s"), []).append(score)
            if f"lora_B.{self.adapter_name}" in name:
                score = self._element_score(name).mean(dim=0).view(-1, 1)
                vector_ipt.setdefault(name.replace("lora_B", "%s"), []).append(score)
            if f"lora_E.{self.adapter_name}" in name:
                value_ipt[name.replace("lora_E", "%s")] = self._element_score(name)
        triplet_ipt, all_scores = {}, []
        for name_m, vectors in vector_ipt.items():
            combined = value_ipt[name_m].view(-1) + core.cat(vectors, dim=1).sum(dim=1).view(-1)
            triplet_ipt[name_m % "lora_E"] = combined.view(-1, 1)
            all_scores.append(combined.view(-1))
        threshold = float(core.kthvalue(core.cat(all_scores), k=self.init_bgt - budget)[0])
        rank_pattern = {}
        with core.no_grad():
            for name, parameter in model.named_parameters():
                if f"lora_E.{self.adapter_name}" in name:
                    pruned = triplet_ipt[name] <= threshold
                    parameter.masked_fill_(pruned, 0.0)
                    rank_pattern[name] = [not value for value in pruned.view(-1).tolist()]
        return rank_pattern

    def update_and_allocate(self, model, global_step, force_mask=False):
        if global_step < self.peft_config.total_step - self.peft_config.tfinal:
            self.update_ipt(model)
        budget, mask_now = self.budget_schedule(global_step)
        rank_pattern = self.mask_to_budget(model, budget) if (mask_now or force_mask) else None
        return budget, rank_pattern

    def mask_using_rank_pattern(self, model, rank_pattern):
        """Re-apply a final rank pattern (keys with or without the adapter name)."""
        truncated = self.adapter_name not in next(iter(rank_pattern))
        with core.no_grad():
            for name, parameter in model.named_parameters():
                if f"lora_E.{self.adapter_name}" in name:
                    key = name.replace(f".{self.adapter_name}", "") if truncated else name
                    keep = core.tensor(rank_pattern[key], dtype=core.bool).unsqueeze(-1)
                    parameter.masked_fill_(~keep, 0.0)
