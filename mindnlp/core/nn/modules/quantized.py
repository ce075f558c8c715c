# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""QuantizedLinear: a linear layer whose weight is held in 8 or 4 bits (weight-only quantization)."""
from ... import _dtype as core_dtype, ops
from .. import functional as F
from ..parameter import Parameter
from .module import Module


class QuantizedLinear(Module):
    """y = x W^T + b with W held quantized (functional.quantized's formats), computed in float32.

    `weight` (int8 (out, in) for symmetric 8-bit, uint8 (out, in) for affine 8-bit, uint8
    (out, in / 2) for 4-bit), `weight_scale` (float32 (out, groups)) and, for the affine
    scheme, `weight_offset` (float32 (out, groups)) are buffers: they are saved and loaded with
    the module but are not parameters, so optimizers and LoRA leave them alone. The input gets
    gradients (QLoRA trains adapters around a frozen quantized base), and so does the bias.
    """

    def __init__(self, in_features, out_features, bias=True, bits=8, group_size=None, device=None,
                 scheme="symmetric"):
        super().__init__()
        groups = F.quantized._groups(in_features, bits, group_size, scheme)
        self.in_features, self.out_features = in_features, out_features
        self.bits, self.group_size, self.scheme = bits, group_size, scheme
        packed = in_features if bits == 8 else in_features // 2
        dtype = core_dtype.int8 if bits == 8 and scheme == "symmetric" else core_dtype.uint8
        self.register_buffer("weight", ops.zeros((out_features, packed), dtype=dtype, device=device))
        self.register_buffer("weight_scale", ops.zeros((out_features, groups), device=device))
        self.register_buffer("weight_offset", ops.zeros((out_features, groups), device=device)
                             if scheme == "affine" else None)
        self.bias = Parameter(ops.zeros(out_features, device=device)) if bias else None

    @classmethod
    def from_float(cls, weight, bias=None, bits=8, group_size=None, scheme="symmetric"):
        """The layer holding a float weight (out, in) quantized, with its bias copied in float32."""
        layer = cls(weight.shape[1], weight.shape[0], bias is not None, bits, group_size, device=weight.device,
                    scheme=scheme)
        layer.weight, layer.weight_scale, layer.weight_offset = F.quantize_weight(weight, bits, group_size, scheme)
        if bias is not None:
            layer.bias = Parameter(bias.detach().float().clone(), requires_grad=bias.requires_grad)
        return layer

    @property
    def codebook(self):
        """The name of the 4-bit codebook the nibbles index ("nf4", "fp4"), or None."""
        return self.scheme if self.scheme in F.quantized.CODEBOOKS else None

    def dequantized_weight(self):
        """The float32 weight (out, in) the quantized one stands for."""
        return F.dequantize_weight(self.weight, self.weight_scale, self.bits, self.weight_offset, self.codebook)

    def requantize_(self, weight):
        """Hold the float weight (out, in) instead, quantized in this layer's format (a merged
        LoRA adapter's weight, for one)."""
        self.weight, self.weight_scale, self.weight_offset = F.quantize_weight(weight, self.bits, self.group_size,
                                                                               self.scheme)
        return self

    def forward(self, input):
        return F.quantized_linear(input, self.weight, self.weight_scale, self.bits, self.bias, self.weight_offset,
                                  self.codebook)

    def extra_repr(self):
        group = "" if self.group_size is None else f", group_size={self.group_size}"
        scheme = "" if self.scheme == "symmetric" else f", scheme={self.scheme}"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"bits={self.bits}{group}{scheme}")
