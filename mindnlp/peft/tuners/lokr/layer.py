# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""LoKr layers: delta W = kron(w1, w2) * scaling, reshaped to the base weight.

For a weight (out, in[, kernel]) the dims are factorised out = l * k and in = m * n; w1 is
(l, m) and w2 is (k, n[, kernel]). Either factor is stored whole or as a rank-r product
(w_a @ w_b); conv kernels may use a CP core `lokr_t2` (`use_effective_conv2d`).
"""
import math

from .... import core
from ....core import nn
from ..lycoris_utils import LycorisLayer


def factorization(dimension, factor=-1):
    """(m, n) with m * n = dimension, m <= n, m as close to sqrt(dimension) as allowed (m <= factor).

    With a positive `factor` dividing `dimension`, simply (factor, dimension // factor).
    """
    if factor > 0 and dimension % factor == 0:
        return factor, dimension // factor
    if factor == -1:
        factor = dimension
    m, n = 1, dimension
    length = m + n
    while m < n:
        new_m = m + 1
        while dimension % new_m != 0:
            new_m += 1
        new_n = dimension // new_m
        if new_m + new_n > length or new_m > factor:
            break
        m, n = new_m, new_n
    if m > n:
        n, m = m, n
    return m, n


def make_weight_cp(t, wa, wb):
    return core.einsum("ijkl,ip,jr->prkl", t, wa, wb)


def make_kron(w1, w2, scale=1.0):
    """torch.kron(w1, w2) * scale; a 4-d w2 gets w1 as (l, m, 1, 1) so the kernel dims stay w2's."""
    if w2.dim() == 4:
        w1 = w1.unsqueeze(2).unsqueeze(2)
    return core.kron(w1, w2.contiguous()) * scale


class LoKrLayer(LycorisLayer, nn.Module):
    adapter_layer_names = ("lokr_w1", "lokr_w1_a", "lokr_w1_b", "lokr_w2", "lokr_w2_a", "lokr_w2_b", "lokr_t2")

    def __init__(self, base_layer, adapter_name, config, r=0, alpha=0.0):
        super().__init__()
        self._init_lycoris_state(base_layer)
        for name in self.adapter_layer_names:
            setattr(self, name, nn.ParameterDict({}))
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, alpha, config)

    def update_layer(self, adapter_name, r, alpha, config):
        self._set_rank(adapter_name, r, alpha, config)
        self.rank_dropout_scale[adapter_name] = config.rank_dropout_scale
        base = self.get_base_layer()
        if isinstance(base, nn.Linear):
            in_dim, out_dim, kernel = base.in_features, base.out_features, ()
        else:
            in_dim, out_dim, kernel = base.in_channels // base.groups, base.out_channels, tuple(base.kernel_size)
        out_l, out_k = factorization(out_dim, config.decompose_factor)
        in_m, in_n = factorization(in_dim, config.decompose_factor)
        use_w1 = not (config.decompose_both and r < max(out_l, in_m) / 2)
        use_w2 = r >= max(out_k, in_n) / 2
        use_cp = config.use_effective_conv2d and bool(kernel) and any(k != 1 for k in kernel)
        new = self._new_parameter
        if use_w1:
            self.lokr_w1[adapter_name] = new(out_l, in_m)
        else:
            self.lokr_w1_a[adapter_name] = new(out_l, r)
            self.lokr_w1_b[adapter_name] = new(r, in_m)
        if use_w2:
            self.lokr_w2[adapter_name] = new(out_k, in_n, *kernel)
        elif use_cp:
            core_kernel = kernel if len(kernel) == 2 else (kernel[0], 1)
            self.lokr_t2[adapter_name] = new(r, r, *core_kernel)
            self.lokr_w2_a[adapter_name] = new(r, out_k)
            self.lokr_w2_b[adapter_name] = new(r, in_n)
        else:
            self.lokr_w2_a[adapter_name] = new(out_k, r)
            self.lokr_w2_b[adapter_name] = new(r, in_n * math.prod(kernel))
        self.reset_adapter_parameters(adapter_name, config.init_weights)
        self.set_adapter(self.active_adapters, inference_mode=config.inference_mode)

    def reset_adapter_parameters(self, adapter_name, init_weights=True):
        """Kaiming-uniform everywhere, then zero one side so the adapter starts as a no-op: the
        first factor (w1, or w1_a) for True, the second (w2, or w2_b) for "lycoris"."""
        for name in self.adapter_layer_names:
            container = getattr(self, name)
            if adapter_name in container:
                nn.init.kaiming_uniform_(container[adapter_name], a=math.sqrt(5))
        if init_weights == "lycoris":
            nn.init.zeros_(self.lokr_w2[adapter_name] if adapter_name in self.lokr_w2
                           else self.lokr_w2_b[adapter_name])
        elif init_weights:
            nn.init.zeros_(self.lokr_w1[adapter_name] if adapter_name in self.lokr_w1
                           else self.lokr_w1_a[adapter_name])

    def get_delta_weight(self, adapter_name, apply_rank_dropout=False):
        if adapter_name in self.lokr_w1:
            w1 = self.lokr_w1[adapter_name]
        else:
            w1 = self.lokr_w1_a[adapter_name] @ self.lokr_w1_b[adapter_name]
        if adapter_name in self.lokr_w2:
            w2 = self.lokr_w2[adapter_name]
        elif adapter_name in self.lokr_t2:
            w2 = make_weight_cp(self.lokr_t2[adapter_name], self.lokr_w2_a[adapter_name], self.lokr_w2_b[adapter_name])
        else:
            w2 = self.lokr_w2_a[adapter_name] @ self.lokr_w2_b[adapter_name]
        weight = make_kron(w1, w2, self.scaling[adapter_name]).reshape(tuple(self.get_base_layer().weight.shape))
        if apply_rank_dropout:
            weight = weight * self._rank_dropout_mask(weight, adapter_name, self.rank_dropout_scale[adapter_name])
        return weight

    def __repr__(self):
        return "lokr." + super().__repr__()


class Linear(LoKrLayer):
    """LoKr on nn.Linear."""


class Conv1d(LoKrLayer):
    """LoKr on nn.Conv1d."""


class Conv2d(LoKrLayer):
    """LoKr on nn.Conv2d."""
