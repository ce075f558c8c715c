# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`ACT2FN`: activation modules by the names configs use ("gelu", "gelu_new", "silu", ...)."""
from .. import core
from ..core import nn


class NewGELUActivation(nn.Module):
    """The tanh approximation of GELU used by GPT-2 ("gelu_new")."""

    def forward(self, input):
        return nn.functional.gelu(input, approximate="tanh")


class GELUActivation(nn.Module):
    def forward(self, input):
        return nn.functional.gelu(input)


class FastGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + core.tanh(input * 0.7978845608 * (1.0 + 0.044715 * input * input)))


class QuickGELUActivation(nn.Module):
    def forward(self, input):
        return input * core.sigmoid(1.702 * input)


class ClassInstantier(dict):
    """Looking a name up builds a fresh module (activations may hold no state, but HF does this)."""

    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(f"activation function {key!r} not found in ACT2FN; known: {', '.join(sorted(self))}")
        cls, kwargs = super().__getitem__(key)
        return cls(**kwargs)


ACT2CLS = {
    "gelu": (GELUActivation, {}),
    "gelu_new": (NewGELUActivation, {}),
    "gelu_pytorch_tanh": (NewGELUActivation, {}),
    "gelu_fast": (FastGELUActivation, {}),
    "quick_gelu": (QuickGELUActivation, {}),
    "relu": (nn.ReLU, {}),
    "relu6": (nn.ReLU6, {}),
    "silu": (nn.SiLU, {}),
    "swish": (nn.SiLU, {}),
    "sigmoid": (nn.Sigmoid, {}),
    "tanh": (nn.Tanh, {}),
    "leaky_relu": (nn.LeakyReLU, {}),
    "mish": (nn.Mish, {}),
}
ACT2FN = ClassInstantier(ACT2CLS)


def get_activation(name):
    return ACT2FN[name]


def gated_activation(act_fn, gate, up):
    """act_fn(gate) * up, the product of gated feed-forward layers (SwiGLU, GeGLU): one
    fused node when act_fn is SiLU or tanh-GELU, the two ops otherwise."""
    if type(act_fn) is nn.SiLU:
        return nn.functional.gated_product(gate, up, "silu")
    if type(act_fn) is NewGELUActivation:
        return nn.functional.gated_product(gate, up, "gelu_tanh")
    return act_fn(gate) * up

