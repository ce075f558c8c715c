# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`GradScaler`: dynamic loss scaling for float16 training, with torch's semantics.

The loss is multiplied by `scale` before backward so small float16 gradients do not
flush to zero; `unscale_` divides the gradients back and records whether any is inf/nan;
`step` skips the optimizer step when one was; `update` halves the scale after an overflow
and doubles it after `growth_interval` clean steps.
"""
import warnings
from collections import defaultdict
from enum import Enum

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..ops._helpers import xp_of


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_optimizer_state():
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """torch.amp.GradScaler(device, init_scale, growth_factor, backoff_factor, growth_interval, enabled)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from .. import cuda

            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
        self._scale = float(init_scale)
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """Multiply a tensor, or every tensor in a (nested) list/tuple, by the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale_tensor(outputs)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _scale_tensor(self, like):
        """The scale as a float32 0-dim tensor, so float16 outputs with dims stay float16."""
        from ..ops.creation import tensor

        return tensor(np.float32(self._scale), dtype=_dtype.float32, device=like.device)

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale in place and look for inf/nan."""
        if not self._enabled:
            return
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # torch takes the reciprocal in double, then rounds it to float32.
        inv_scale = float(np.float32(1.0 / np.float64(np.float32(self._scale))))
        state["found_inf"] = self._unscale_grads(optimizer, inv_scale)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads(self, optimizer, inv_scale):
        found_inf = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if grad.dtype is _dtype.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                array = grad._data
                xp = xp_of(grad)
                if not bool(xp.isfinite(array).all()):
                    found_inf = True
                array *= inv_scale
                grad._version[0] += 1
        return found_inf

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and step the optimizer unless a gradient was inf/nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        result = None
        if not state["found_inf"]:
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None):
        """Adjust the scale for the next iteration (or set it to new_scale)."""
        if not self._enabled:
            return
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ValueError("new_scale should be a float or a 1-element tensor with requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = float(np.float32(new_scale))
        else:
            recorded = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not recorded:
                raise RuntimeError("No inf checks were recorded prior to update.")
            self._update_scale(any(recorded))
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)

    def _update_scale(self, found_inf):
        """torch's _amp_update_scale_: the scale is a float32 number."""
        scale = np.float32(self._scale)
        if found_inf:
            scale = scale * np.float32(self._backoff_factor)
            self._growth_tracker = 0
        else:
            successful = self._growth_tracker + 1
            if successful == self._growth_interval:
                grown = scale * np.float32(self._growth_factor)
                if np.isfinite(grown):
                    scale = grown
                self._growth_tracker = 0
            else:
                self._growth_tracker = successful
        self._scale = float(scale)

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])

    def __getstate__(self):
        if self._enabled and self._per_optimizer_states:
            raise RuntimeError("A GradScaler instance may only be pickled at the beginning of an iteration, or at "
                               "the end after scaler.update().")
        state = dict(self.__dict__)
        state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._per_optimizer_states = defaultdict(_fresh_optimizer_state)
