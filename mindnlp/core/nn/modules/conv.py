# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Convolution layers with torch's parameter layout, initialisation and repr."""
from .. import functional as F
from .linear import kaiming_reset, register_weight_and_bias
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return (int(value),) * n


class _ConvNd(Module):
    """Shared construction: weight (out, in/groups, *k), or (in, out/groups, *k) when transposed."""

    _n = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed,
                 output_padding, groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        n = self._n
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups))
        register_weight_and_bias(self, shape + self.kernel_size, out_channels, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        kaiming_reset(self.weight, self.bias)

    def _mode_padding(self):
        """F.pad amounts (last dim first) for a non-zeros padding_mode."""
        pads = []
        for k, d, p in zip(reversed(self.kernel_size), reversed(self.dilation),
                           reversed(self.padding) if not isinstance(self.padding, str) else [None] * self._n):
            if self.padding == "valid":
                pads += [0, 0]
            elif self.padding == "same":
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [p, p]
        return pads

    def _padded_input(self, input):
        """(input, padding for the conv call) honouring padding_mode."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return F.pad(input, self._mode_padding(), mode=self.padding_mode), 0

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.kernel_size):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """Conv1d, Conv2d and Conv3d: a forward convolution by `conv`, nn.functional's op of `_n` dims."""

    conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._padded_input(input)
        return type(self).conv(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    _n = 1
    conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    _n = 2
    conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _n = 3
    conv = staticmethod(F.conv3d)


class _ConvTranspose(_ConvNd):
    """ConvTranspose1d/2d/3d: a transposed convolution by `conv`, of `_n` dims."""

    conv = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return type(self).conv(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                               self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    _n = 1
    conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    _n = 2
    conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    _n = 3
    conv = staticmethod(F.conv_transpose3d)
