# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""LoHa layers: delta W = (w1_a @ w1_b) * (w2_a @ w2_b) * scaling, reshaped to the base weight.

With `use_effective_conv2d` on a conv with a kernel larger than 1, each factor is a CP
decomposition t (r, r, kh, kw) x w_a (r, out) x w_b (r, in), giving a full (out, in, kh, kw) kernel.
Autograd differentiates the reconstruction directly; no hand-written backward is needed.
"""
import math

from .... import core
from ....core import nn
from ..lycoris_utils import LycorisLayer


def hadamard_weight(w1a, w1b, w2a, w2b, scale):
    return (w1a @ w1b) * (w2a @ w2b) * scale


def hadamard_weight_cp(t1, w1a, w1b, t2, w2a, w2b, scale):
    rebuild1 = core.einsum("ijkl,jr,ip->prkl", t1, w1b, w1a)
    rebuild2 = core.einsum("ijkl,jr,ip->prkl", t2, w2b, w2a)
    return rebuild1 * rebuild2 * scale


class LoHaLayer(LycorisLayer, nn.Module):
    adapter_layer_names = ("hada_w1_a", "hada_w1_b", "hada_w2_a", "hada_w2_b", "hada_t1", "hada_t2")

    def __init__(self, base_layer, adapter_name, config, r=0, alpha=0.0):
        super().__init__()
        self._init_lycoris_state(base_layer)
        for name in self.adapter_layer_names:
            setattr(self, name, nn.ParameterDict({}))
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, alpha, config)

    def _factor_shape(self, use_effective_conv2d):
        """(shape the factors reconstruct, whether conv kernels get the CP form)."""
        base = self.get_base_layer()
        if isinstance(base, nn.Linear):
            return tuple(base.weight.shape), False
        kernel = tuple(base.kernel_size)
        in_channels = base.in_channels // base.groups
        use_cp = use_effective_conv2d and any(k != 1 for k in kernel)
        if use_cp:
            return (base.out_channels, in_channels, *kernel), True
        return (base.out_channels, in_channels * math.prod(kernel)), False

    def update_layer(self, adapter_name, r, alpha, config):
        self._set_rank(adapter_name, r, alpha, config)
        shape, use_cp = self._factor_shape(config.use_effective_conv2d)
        new = self._new_parameter
        if use_cp:
            kernel = shape[2:] if len(shape) == 4 else (shape[2], 1)
            self.hada_t1[adapter_name] = new(r, r, *kernel)
            self.hada_t2[adapter_name] = new(r, r, *kernel)
            self.hada_w1_a[adapter_name] = new(r, shape[0])
            self.hada_w1_b[adapter_name] = new(r, shape[1])
            self.hada_w2_a[adapter_name] = new(r, shape[0])
            self.hada_w2_b[adapter_name] = new(r, shape[1])
        else:
            self.hada_w1_a[adapter_name] = new(shape[0], r)
            self.hada_w1_b[adapter_name] = new(r, shape[1])
            self.hada_w2_a[adapter_name] = new(shape[0], r)
            self.hada_w2_b[adapter_name] = new(r, shape[1])
        self.reset_adapter_parameters(adapter_name, zero_init=bool(config.init_weights))
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def reset_adapter_parameters(self, adapter_name, zero_init=True):
        """Kaiming-uniform factors; with zero_init, w2_b is zero so the adapter starts as a no-op."""
        for name in self.adapter_layer_names:
            container = getattr(self, name)
            if adapter_name in container:
                nn.init.kaiming_uniform_(container[adapter_name], a=math.sqrt(5))
        if zero_init:
            nn.init.zeros_(self.hada_w2_b[adapter_name])

    def get_delta_weight(self, adapter_name, apply_rank_dropout=False):
        scale = self.scaling[adapter_name]
        if adapter_name in self.hada_t1:
            weight = hadamard_weight_cp(self.hada_t1[adapter_name], self.hada_w1_a[adapter_name],
                                        self.hada_w1_b[adapter_name], self.hada_t2[adapter_name],
                                        self.hada_w2_a[adapter_name], self.hada_w2_b[adapter_name], scale)
        else:
            weight = hadamard_weight(self.hada_w1_a[adapter_name], self.hada_w1_b[adapter_name],
                                     self.hada_w2_a[adapter_name], self.hada_w2_b[adapter_name], scale)
        weight = weight.reshape(tuple(self.get_base_layer().weight.shape))
        if apply_rank_dropout:
            weight = weight * self._rank_dropout_mask(weight, adapter_name, rescale=True)
        return weight

    def __repr__(self):
        return "loha." + super().__repr__()


class Linear(LoHaLayer):
    """LoHa on nn.Linear."""


class Conv1d(LoHaLayer):
    """LoHa on nn.Conv1d."""


class Conv2d(LoHaLayer):
    """LoHa on nn.Conv2d."""
