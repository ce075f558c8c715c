# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Identity, Linear and Bilinear layers."""
import math

from ... import ops
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def register_weight_and_bias(module, weight_shape, out_features, bias, device, dtype):
    """Give `module` an uninitialised `weight` and a `bias` of `out_features` (or a None bias),
    as torch's Linear, Bilinear and conv layers hold them before reset_parameters fills them."""
    module.weight = Parameter(ops.empty(weight_shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(ops.empty(out_features, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def kaiming_reset(weight, bias):
    """torch's default for Linear and conv layers: kaiming_uniform_(a=sqrt(5)) weights and a
    bias uniform in +-1/sqrt(fan_in) (zero when the weight has no inputs)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Return the input unchanged (accepts and ignores constructor arguments, as torch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        register_weight_and_bias(self, (out_features, in_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        kaiming_reset(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """y = x1^T A x2 + b with A of shape (out_features, in1_features, in2_features)."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        register_weight_and_bias(self, (out_features, in1_features, in2_features), out_features, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
