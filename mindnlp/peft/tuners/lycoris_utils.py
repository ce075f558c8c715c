# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""What LoHa and LoKr (the LyCORIS family) share: a config with rank/alpha patterns, a layer that
adds `F.linear`/`F.conv` with a reconstructed weight delta, and a tuner that picks the layer class
for the targeted module's type.

Both methods build a full-size delta weight from small factors (a Hadamard product of low-rank
matrices for LoHa, a Kronecker product for LoKr), so merging is just adding that delta to the
base weight, and forward is base(x) + op(x, delta) with the base layer's stride/padding.
"""
from dataclasses import dataclass, field
from typing import Optional

from ... import core
from ...core import nn
from ..config import PeftConfig
from ..utils.other import get_pattern_key
from .tuners_utils import BaseTuner, BaseTunerLayer


@dataclass
class LycorisConfig(PeftConfig):
    """Per-layer overrides of the rank `r` and of `alpha`, keyed by (the end of) a module path or a regex."""

    rank_pattern: Optional[dict] = field(default_factory=dict, metadata={"help": "Per-layer ranks"})
    alpha_pattern: Optional[dict] = field(default_factory=dict, metadata={"help": "Per-layer alphas"})


def _in_out_features(module):
    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, (nn.Conv1d, nn.Conv2d)):
        return module.in_channels, module.out_channels
    raise TypeError(f"LyCORIS adapters support Linear, Conv1d and Conv2d layers, not {type(module).__name__}")


class LycorisLayer(BaseTunerLayer):
    """Per-adapter rank, alpha, scaling (alpha / r) and dropouts; merge = base weight + delta.

    Subclasses create their factors in `update_layer` and rebuild the delta in `get_delta_weight`.
    `rank_dropout` zeroes whole output rows of the delta while training; `module_dropout` skips
    the whole adapter for a step with that probability.
    """

    other_param_names = ("r", "alpha", "scaling", "rank_dropout", "rank_dropout_scale", "module_dropout")

    def _init_lycoris_state(self, base_layer):
        self.base_layer = base_layer
        self.r = {}
        self.alpha = {}
        self.scaling = {}
        self.rank_dropout = {}
        self.rank_dropout_scale = {}
        self.module_dropout = {}
        self._disable_adapters = False
        self.merged_adapters = []
        self.in_features, self.out_features = _in_out_features(self.get_base_layer())

    @property
    def _available_adapters(self):
        names = set()
        for layer_name in self.adapter_layer_names:
            names.update(getattr(self, layer_name).keys())
        return names

    def _set_rank(self, adapter_name, r, alpha, config):
        if r <= 0:
            raise ValueError(f"`r` should be a positive integer value but the value passed is {r}")
        self.r[adapter_name] = r
        self.alpha[adapter_name] = alpha
        self.scaling[adapter_name] = alpha / r
        self.rank_dropout[adapter_name] = config.rank_dropout
        self.module_dropout[adapter_name] = config.module_dropout

    def _new_parameter(self, *shape):
        weight = self.get_base_layer().weight
        return nn.Parameter(core.empty(*shape, dtype=core.float32, device=weight.device))

    def set_scale(self, adapter, scale):
        if adapter in self._available_adapters:
            self.scaling[adapter] = scale * self.alpha[adapter] / self.r[adapter]

    def _rank_dropout_mask(self, weight, adapter_name, rescale):
        """A 0/1 mask over the delta's output rows (kept with probability 1 - rank_dropout), with
        `rescale` divided by the kept fraction. When every row is dropped the mask stays zero (HF peft
        divides by the zero mean and gets NaN)."""
        keep = (core.rand(weight.shape[0]) > self.rank_dropout[adapter_name]).to(weight.dtype)
        if rescale:
            keep = keep * (keep.numel() / max(float(keep.sum()), 1.0))
        return keep.view(-1, *([1] * (weight.dim() - 1)))

    def _holds_adapter(self, adapter):
        return adapter in self._available_adapters

    def merge(self, safe_merge=False, adapter_names=None):
        """Add the adapters' delta weights to the base weight (safe_merge: check for NaN/inf first)."""
        self._merge_into_base_weight(safe_merge, adapter_names, self._weight_plus_delta)

    def unmerge(self):
        self._unmerge_from_base_weight(self._weight_minus_delta)

    def _delta_activations(self, adapter_name, x):
        """op(x, delta) with the base layer's own linear/convolution settings."""
        apply_rank_dropout = self.training and bool(self.rank_dropout[adapter_name])
        delta = self.get_delta_weight(adapter_name, apply_rank_dropout=apply_rank_dropout)
        x = x if x.dtype == delta.dtype else x.to(delta.dtype)
        base = self.get_base_layer()
        functional = nn.functional
        if isinstance(base, nn.Linear):
            return functional.linear(x, delta)
        conv = functional.conv2d if isinstance(base, nn.Conv2d) else functional.conv1d
        return conv(x, delta, stride=base.stride, padding=base.padding, dilation=base.dilation, groups=base.groups)

    def forward(self, x, *args, **kwargs):
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        previous_dtype = x.dtype
        result = self.base_layer(x, *args, **kwargs)
        for adapter in self.active_adapters:
            if adapter not in self._available_adapters:
                continue
            module_dropout = self.module_dropout[adapter]
            if not self.training or float(core.rand(1)) > module_dropout:
                result = result + self._delta_activations(adapter, x)
        return result.to(previous_dtype)


class LycorisTuner(BaseTuner):
    """Replaces each targeted Linear/Conv1d/Conv2d by the method's layer (`layers_mapping`)."""

    layers_mapping = {}
    target_module_mapping = {}

    def _prepare_adapter_config(self, peft_config, model_config):
        if peft_config.target_modules is None:
            targets = self.target_module_mapping.get(model_config.get("model_type"))
            if targets is None:
                raise ValueError("Please specify `target_modules` in `peft_config`")
            peft_config.target_modules = set(targets)
        return peft_config

    def _create_and_replace(self, config, adapter_name, target, target_name, parent, current_key):
        r = config.rank_pattern.get(get_pattern_key(config.rank_pattern.keys(), current_key), config.r)
        alpha = config.alpha_pattern.get(get_pattern_key(config.alpha_pattern.keys(), current_key), config.alpha)
        if isinstance(target, self.tuner_layer_cls):
            target.update_layer(adapter_name, r, alpha, config)
            return
        base = target.get_base_layer() if isinstance(target, BaseTunerLayer) else target
        layer_cls = next((cls for module_type, cls in self.layers_mapping.items() if isinstance(base, module_type)),
                         None)
        if layer_cls is None:
            supported = ", ".join(module_type.__name__ for module_type in self.layers_mapping)
            raise TypeError(f"Target module of type {type(target)} not supported, currently only adapters for "
                            f"{supported} are supported")
        new_module = layer_cls(target, adapter_name, config, r=r, alpha=alpha)
        if adapter_name not in self.active_adapters:
            new_module.set_adapter(self.active_adapters)
        self._replace_module(parent, target_name, new_module, target)
