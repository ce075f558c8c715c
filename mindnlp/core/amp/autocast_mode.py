# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Automatic mixed precision: `autocast` and the per-op cast policy that ops consult.

Inside `autocast(device_type, dtype)`, ops listed as *lower precision* (matrix products,
linear, convolutions, attention) cast their float32 inputs to the low dtype, so they run
and return in it; ops listed as *float32* (losses, and on CUDA also softmax, norms, sums)
cast low-precision inputs up to float32. Everything else runs in its inputs' dtype. The
lists follow torch's autocast policies for each device type; float64 is never cast.

Ops take part by calling `autocast_inputs(op_name, *tensors)` first thing; when autocast
is off that is one thread-local attribute read. State is per thread and per device type,
as in torch: a cpu autocast region leaves cuda tensors alone.
"""
import functools
import threading

from .. import _dtype
from .._tensor import Tensor

LOWER_PRECISION_OPS = {
    "cpu": frozenset({
        "matmul", "mm", "bmm", "baddbmm", "addmm", "addbmm", "linear", "einsum", "conv1d", "conv2d", "conv3d",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    }),
    "cuda": frozenset({
        "matmul", "mm", "mv", "bmm", "baddbmm", "addmm", "addmv", "addbmm", "addr", "linear", "einsum",
        "chain_matmul", "multi_dot", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    }),
}

_LOSSES = frozenset({
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "cosine_embedding_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "ctc_loss",
})

FLOAT32_OPS = {
    "cpu": _LOSSES | frozenset({"prod", "cdist", "trace", "cholesky", "inverse", "pinverse", "stft", "quantile"}),
    "cuda": _LOSSES | frozenset({
        "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
        "sinh", "tan", "pow", "softplus", "layer_norm", "group_norm", "norm", "cosine_similarity", "dist", "cdist",
        "renorm", "logsumexp", "softmax", "log_softmax", "cumsum", "cumprod", "prod", "sum", "vector_norm",
    }),
}

DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}


class _AutocastState(threading.local):
    def __init__(self):
        # device type -> low-precision dtype of the innermost enabled region
        self.active = {}


_state = _AutocastState()


def is_autocast_available(device_type):
    return device_type in DEFAULT_DTYPES


def is_autocast_enabled(device_type="cuda"):
    return device_type in _state.active


def get_autocast_dtype(device_type):
    return _state.active.get(device_type, DEFAULT_DTYPES[device_type])


def autocast_inputs(op_name, *tensors):
    """The op's tensor arguments cast per the active autocast policy (None entries pass through).

    Returns the arguments unchanged when no autocast region is active.
    """
    active = _state.active
    if not active:
        return tensors
    return tuple(_cast_for(op_name, t, active) for t in tensors)


def autocast_op(op_name, n_tensors):
    """Decorator: cast an op's first n_tensors positional arguments per the autocast policy."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if _state.active:
                args = autocast_inputs(op_name, *args[:n_tensors]) + args[n_tensors:]
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def _cast_for(op_name, t, active):
    if not isinstance(t, Tensor):
        return t
    low = active.get(t._device.type)
    if low is None or not t.is_floating_point() or t.dtype is _dtype.float64:
        return t
    if op_name in LOWER_PRECISION_OPS[t._device.type]:
        return t if t.dtype is low else t.to(low)
    if op_name in FLOAT32_OPS[t._device.type] and t.dtype in _dtype.HALF_DTYPES:
        return t.to(_dtype.float32)
    return t


class autocast:
    """Context manager (and decorator) enabling mixed precision for one device type.

    `autocast("cpu")` defaults to bfloat16, `autocast("cuda")` to float16; `enabled=False`
    turns autocast off inside the region (for a block that must run in float32).
    """

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        dtype = DEFAULT_DTYPES[device_type] if dtype is None else _dtype.as_dtype(dtype)
        if dtype not in _dtype.HALF_DTYPES:
            raise RuntimeError(f"In autocast, but the target dtype is not supported: {dtype}. Autocast only "
                               "supports float16 and bfloat16.")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)

    def __enter__(self):
        self._previous = _state.active.get(self.device)
        active = dict(_state.active)
        if self._enabled:
            active[self.device] = self.fast_dtype
        else:
            active.pop(self.device, None)
        _state.active = active
        return self

    def __exit__(self, *exc):
        active = dict(_state.active)
        if self._previous is None:
            active.pop(self.device, None)
        else:
            active[self.device] = self._previous
        _state.active = active
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled):
                return fn(*args, **kwargs)

        return wrapper
