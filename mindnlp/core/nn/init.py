# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Weight initialization (torch.nn.init): in-place fills run under no_grad.

Fan computations, gains, bounds and error messages follow torch; the random numbers come
from `core.random` (seeded by `core.manual_seed` or a `Generator`), so the distributions
match torch's while the exact streams do not.
"""
import math
import warnings

import numpy as np
from scipy import special

from .. import random
from ..autograd import grad_mode
from ..ops.inplace import write_inplace

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
    "orthogonal_", "sparse_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]


def calculate_gain(nonlinearity, param=None):
    """The recommended scale of weights feeding a given nonlinearity."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                  "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = 1
    for s in tensor.shape[2:]:
        receptive_field *= s
    return tensor.size(1) * receptive_field, tensor.size(0) * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor, values):
    """Write values() (a host array) into tensor; a meta tensor holds none, so values is not
    called and the generator does not advance, as with torch's init on the meta device."""
    with grad_mode.no_grad():
        write_inplace(tensor, values)
    return tensor


def _rng(generator):
    return (generator or random.default_generator)._rng


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, lambda: _rng(generator).uniform(a, b, size=tuple(tensor.shape)))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, lambda: _rng(generator).normal(mean, std, size=tuple(tensor.shape)))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std) restricted to [a, b], by inverting the normal CDF of uniform draws (torch's method)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    def values():
        low, high = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        draws = _rng(generator).uniform(2 * low - 1, 2 * high - 1, size=tuple(tensor.shape))
        return np.clip(special.erfinv(draws) * (std * math.sqrt(2.0)) + mean, a, b)

    return _fill(tensor, values)


def constant_(tensor, val):
    with grad_mode.no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def eye_(tensor):
    """The identity matrix (2-D tensors only), as Linear layers that preserve their input."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, lambda: np.eye(*tuple(tensor.shape)))


def dirac_(tensor, groups=1):
    """Convolution weights that pass each input channel (per group) through unchanged."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tuple(tensor.shape)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups

    def values():
        identity = np.zeros(sizes)
        centre = tuple(s // 2 for s in sizes[2:])
        for g in range(groups):
            for d in range(min(out_per_group, sizes[1])):
                identity[(g * out_per_group + d, d) + centre] = 1
        return identity

    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR decomposition of a Gaussian one, signs fixed by R's diagonal."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows

    def values():
        flattened = _rng(generator).standard_normal((rows, cols))
        if rows < cols:
            flattened = flattened.T
        q, r = np.linalg.qr(flattened)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return (q * gain).reshape(tuple(tensor.shape))

    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """N(0, std) entries with a fraction `sparsity` of each column set to zero."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tuple(tensor.shape)
    num_zeros = int(math.ceil(sparsity * rows))

    def values():
        rng = _rng(generator)
        drawn = rng.normal(0.0, std, size=(rows, cols))
        for col in range(cols):
            drawn[rng.permutation(rows)[:num_zeros], col] = 0
        return drawn

    return _fill(tensor, values)
