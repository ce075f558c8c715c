"""QuantizedLinear: a linear layer whose weight is held as int8 or int4 (weight-only quantization)."""
from ... import _dtype as core_dtype, ops
from .. import functional as F
from ..parameter import Parameter
from .module import Module


class QuantizedLinear(Module):
    """y = x W^T + b with W held quantized (functional.quantized's formats), computed in float32.

    `weight` (int8 (out, in), or uint8 (out, in / 2) for int4) and `weight_scale` (float32
    (out, groups)) are buffers: they are saved and loaded with the module but are not
    parameters, so optimizers and LoRA leave them alone. The input gets gradients (QLoRA
    trains adapters around a frozen quantized base), and so does the bias.
    """

    def __init__(self, in_features, out_features, bias=True, bits=8, group_size=None, device=None):
        super().__init__()
        groups = F.quantized._groups(in_features, bits, group_size)
        self.in_features, self.out_features = in_features, out_features
        self.bits, self.group_size = bits, group_size
        packed = in_features if bits == 8 else in_features // 2
        self.register_buffer("weight", ops.zeros((out_features, packed), dtype=core_dtype.int8 if bits == 8 else core_dtype.uint8,
                                                 device=device))
        self.register_buffer("weight_scale", ops.zeros((out_features, groups), device=device))
        self.bias = Parameter(ops.zeros(out_features, device=device)) if bias else None

    @classmethod
    def from_float(cls, weight, bias=None, bits=8, group_size=None):
        """The layer holding a float weight (out, in) quantized, with its bias copied in float32."""
        layer = cls(weight.shape[1], weight.shape[0], bias is not None, bits, group_size, device=weight.device)
        q, scales = F.quantize_weight(weight, bits, group_size)
        layer.weight, layer.weight_scale = q, scales
        if bias is not None:
            layer.bias = Parameter(bias.detach().float().clone(), requires_grad=bias.requires_grad)
        return layer

    def dequantized_weight(self):
        """The float32 weight (out, in) the quantized one stands for."""
        return F.dequantize_weight(self.weight, self.weight_scale, self.bits)

    def forward(self, input):
        return F.quantized_linear(input, self.weight, self.weight_scale, self.bits, self.bias)

    def extra_repr(self):
        group = "" if self.group_size is None else f", group_size={self.group_size}"
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"bits={self.bits}{group}")
