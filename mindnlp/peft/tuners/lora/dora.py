# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DoRA (Liu et al., 2024): LoRA with the weight split into a direction and a learned magnitude.

The adapted weight is m * (W + s B A) / ||W + s B A||, row norms taken per output feature. The
magnitude m starts at the norms of W (so the adapter starts as a no-op) and is the module's
`weight`, saved as `lora_magnitude_vector`. As in the paper, the norm is treated as a constant
in backward (detached), which saves memory and changes gradients only slightly.
"""
from .... import core
from ....core import nn
from ....core.nn import functional as F
from ...utils.other import transpose


class DoraLinearLayer(nn.Module):
    def __init__(self, fan_in_fan_out):
        super().__init__()
        self.fan_in_fan_out = fan_in_fan_out

    def get_weight_norm(self, weight, lora_weight, scaling):
        """Row norms of W + scaling * lora_weight, W taken as (out, in)."""
        weight = transpose(weight, self.fan_in_fan_out)
        weight = weight + scaling * lora_weight
        return core.linalg.norm(weight, dim=1).to(weight.dtype)

    def update_layer(self, *, base_layer, lora_A, lora_B, scaling):
        """Start the magnitude at the norms of the (already LoRA-initialised) weight."""
        with core.no_grad():
            lora_weight = self._lora_weight_from_factors(lora_A, lora_B, base_layer.weight)
            norm = self.get_weight_norm(base_layer.weight.to(lora_A.dtype), lora_weight, scaling)
        self.weight = nn.Parameter(norm, requires_grad=True)

    @staticmethod
    def _lora_weight_from_factors(lora_A, lora_B, weight):
        if weight.dim() >= 3:
            r = lora_A.shape[0]
            return (lora_B.reshape(-1, r) @ lora_A.reshape(r, -1)).reshape(weight.shape)
        return lora_B @ lora_A

    def forward(self, x, *, lora_A, lora_B, scaling, base_layer, base_result=None):
        """The extra output of DoRA on top of the base layer's: (m/||W'|| - 1) W x + m/||W'|| s B A x."""
        lora_weight = (lora_B.weight @ lora_A.weight).to(x.dtype)
        weight = base_layer.weight.to(x.dtype)
        weight_norm = self.get_weight_norm(weight, lora_weight.detach(), scaling).detach()
        mag_norm_scale = (self.weight / weight_norm).view(1, -1)
        lora_result = lora_B(lora_A(x))
        if base_result is not None:
            if base_layer.bias is not None:
                base_result = base_result - base_layer.bias
        else:
            base_result = F.linear(x, transpose(weight, self.fan_in_fan_out))
        return (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * scaling

    def __repr__(self):
        return "lora.dora." + super().__repr__()


class DoraEmbeddingLayer(DoraLinearLayer):
    def forward(self, x, *, lora_A, lora_B, scaling, base_layer, embed_fn):
        """(m/||W'||, its product with the adapter's embedding): the caller scales the base output too.

        `lora_A` is the (num_embeddings, r) table and `lora_B` the (r, dim) projection.
        """
        lora_weight = (lora_A @ lora_B).T
        weight_norm = self.get_weight_norm(base_layer.weight, lora_weight.detach(), scaling).detach()
        mag_norm_scale = self.weight / weight_norm
        return mag_norm_scale, mag_norm_scale * (embed_fn(x, lora_A) @ lora_B) * scaling

    def __repr__(self):
        return "lora.dora." + super().__repr__()


class _DoraConvNdLayer(DoraLinearLayer):
    def get_weight_norm(self, weight, lora_weight, scaling):
        """Norms of W + scaling * lora_weight over all but the output-channel axis, shaped (1, out, 1, ...)."""
        weight = weight + scaling * lora_weight
        dims = tuple(range(1, weight.dim()))
        return weight.norm(p=2, dim=dims, keepdim=True).transpose(1, 0)

    def forward(self, x, *, lora_A, lora_B, scaling, base_layer, base_result=None):
        weight = base_layer.weight
        r = lora_A.weight.shape[0]
        lora_weight = (lora_B.weight.reshape(-1, r) @ lora_A.weight.reshape(r, -1)).reshape(weight.shape)
        weight_norm = self.get_weight_norm(weight, lora_weight.detach(), scaling).detach()
        mag_norm_scale = self.weight / weight_norm
        if base_result is None:
            base_result = self._conv_fn(x, weight, None, base_layer.stride, base_layer.padding, base_layer.dilation,
                                        base_layer.groups)
        elif base_layer.bias is not None:
            base_result = base_result - base_layer.bias.view((1, -1) + (1,) * (base_result.dim() - 2))
        return (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_B(lora_A(x)) * scaling


class DoraConv1dLayer(_DoraConvNdLayer):
    @staticmethod
    def _conv_fn(*args):
        return F.conv1d(*args)


class DoraConv2dLayer(_DoraConvNdLayer):
    @staticmethod
    def _conv_fn(*args):
        return F.conv2d(*args)
