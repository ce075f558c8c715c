# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""(IA)^3 layers: the base layer's output (or, for feed-forward layers, its input) times `ia3_l`.

Because the scaling is linear it folds into the weights: merging multiplies the weight rows
(output scaling, and the bias with them) or columns (input scaling). Unmerging divides again
(with HF peft's 1e-8 guard), so it is exact only up to rounding.
"""
import warnings

from .... import core
from ....core import nn
from ..tuners_utils import BaseTunerLayer, check_adapters_to_merge
from ...utils.other import transpose


def _in_out_features(module):
    from ....transformers.pytorch_utils import Conv1D

    if isinstance(module, nn.Linear):
        return module.in_features, module.out_features
    if isinstance(module, nn.Conv2d):
        return module.in_channels, module.out_channels
    if isinstance(module, Conv1D):
        return tuple(module.weight.shape)
    raise TypeError(f"Unsupported layer type {type(module)}")


class IA3Layer(BaseTunerLayer):
    adapter_layer_names = ("ia3_l",)

    def _init_ia3_state(self, base_layer, is_feedforward):
        self.base_layer = base_layer
        self.ia3_l = nn.ParameterDict({})
        self._disable_adapters = False
        self.merged_adapters = []
        self.is_feedforward = is_feedforward
        self.in_features, self.out_features = _in_out_features(self.get_base_layer())

    def _vector_shape(self):
        raise NotImplementedError

    def update_layer(self, adapter_name, config):
        weight = self.get_base_layer().weight
        self.ia3_l[adapter_name] = nn.Parameter(core.randn(*self._vector_shape(), device=weight.device))
        if config.init_ia3_weights:
            self.reset_ia3_parameters(adapter_name)
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def reset_ia3_parameters(self, adapter_name):
        if adapter_name in self.ia3_l:
            nn.init.constant_(self.ia3_l[adapter_name], 1.0)

    def _weight_scaling(self, vector):
        """The vector shaped to multiply the base weight."""
        raise NotImplementedError

    def _rescale(self, adapter, operation, safe_merge=False):
        """weight (and, for output scaling, bias) <- operation(tensor, scaling) for one adapter."""
        base = self.get_base_layer()
        vector = self.ia3_l[adapter].detach()
        with core.no_grad():
            weight = operation(base.weight.detach(), self._weight_scaling(vector))
            bias = None
            if not self.is_feedforward and base.bias is not None:
                bias = operation(base.bias.detach(), vector.reshape(tuple(base.bias.shape)))
            if safe_merge and not (bool(core.isfinite(weight).all())
                                   and (bias is None or bool(core.isfinite(bias).all()))):
                raise ValueError(f"NaNs detected in the merged weights. The adapter {adapter} seems to be broken")
            base.weight.copy_(weight.to(base.weight.dtype))
            if bias is not None:
                base.bias.copy_(bias.to(base.bias.dtype))

    def merge(self, safe_merge=False, adapter_names=None):
        for adapter in check_adapters_to_merge(self, adapter_names):
            if adapter in self.ia3_l:
                self._rescale(adapter, lambda tensor, scale: tensor * scale, safe_merge)
                self.merged_adapters.append(adapter)

    def unmerge(self):
        if not self.merged:
            warnings.warn("Already unmerged. Nothing to do.")
            return
        warnings.warn("Unmerge result can be inaccurate for (IA)^3.")
        while self.merged_adapters:
            adapter = self.merged_adapters.pop()
            if adapter in self.ia3_l:
                self._rescale(adapter, lambda tensor, scale: tensor / (scale + 1e-8))

    def _active_scaling(self):
        scaling = 1
        for adapter in self.active_adapters:
            if adapter in self.ia3_l:
                scaling = scaling * self.ia3_l[adapter]
        return scaling


class Linear(nn.Module, IA3Layer):
    """(IA)^3 on nn.Linear, or on GPT-2's Conv1D (`fan_in_fan_out`)."""

    def __init__(self, base_layer, adapter_name, config, is_feedforward=False, is_target_conv_1d_layer=False):
        super().__init__()
        self._init_ia3_state(base_layer, is_feedforward)
        self.fan_in_fan_out = config.fan_in_fan_out
        self.is_target_conv_1d_layer = is_target_conv_1d_layer
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, config)

    def _vector_shape(self):
        return (1, self.in_features) if self.is_feedforward else (self.out_features, 1)

    def _weight_scaling(self, vector):
        return transpose(vector, self.fan_in_fan_out)

    def forward(self, x, *args, **kwargs):
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        scaling = self._active_scaling()
        if isinstance(scaling, int):
            return self.base_layer(x, *args, **kwargs)
        scaling = scaling.flatten()
        if self.is_feedforward:
            return self.base_layer((x.to(scaling.dtype) * scaling).to(x.dtype), *args, **kwargs)
        result = self.base_layer(x, *args, **kwargs)
        return (result * scaling).to(result.dtype)

    def __repr__(self):
        return "ia3." + super().__repr__()


class Conv2d(nn.Module, IA3Layer):
    """(IA)^3 on nn.Conv2d: one value per output channel (or per input channel, feed-forward)."""

    def __init__(self, base_layer, adapter_name, config, is_feedforward=False):
        super().__init__()
        self._init_ia3_state(base_layer, is_feedforward)
        if base_layer.weight.dim() != 4:
            raise ValueError(f"Conv2d layer kernel must have 4 dimensions, not {base_layer.weight.dim()}")
        self.fan_in_fan_out = config.fan_in_fan_out
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, config)

    def _vector_shape(self):
        return (1, self.in_features if self.is_feedforward else self.out_features, 1, 1)

    def _weight_scaling(self, vector):
        if not self.is_feedforward:
            return vector.transpose(0, 1)
        base = self.get_base_layer()
        if base.groups == 1:
            return vector
        in_per_group = base.in_channels // base.groups
        out_per_group = base.out_channels // base.groups
        vector = vector.reshape(base.groups, 1, in_per_group, 1, 1)
        vector = vector.expand(base.groups, out_per_group, in_per_group, 1, 1)
        return vector.reshape(base.out_channels, in_per_group, 1, 1)

    def forward(self, x, *args, **kwargs):
        result = self._forward_base_when_disabled_or_merged(x, args, kwargs)
        if result is not None:
            return result
        previous_dtype = x.dtype
        scaling = self._active_scaling()
        if isinstance(scaling, int):
            return self.base_layer(x, *args, **kwargs)
        if self.is_feedforward:
            result = self.base_layer((x.to(scaling.dtype) * scaling).to(self.get_base_layer().weight.dtype),
                                     *args, **kwargs)
        else:
            result = self.base_layer(x, *args, **kwargs).to(scaling.dtype) * scaling
        return result.to(previous_dtype)

    def __repr__(self):
        return "ia3." + super().__repr__()
