# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Learning-rate schedules of Hugging Face transformers, as `LambdaLR`s over core optimizers,
and HF's Adafactor optimizer with its proxy schedule.

Each schedule is a multiplier of the optimizer's initial lr as a function of the step; the
formulas are HF's, so `get_scheduler(name, ...)` gives the same lr curve as HF for every name.
The multipliers are module-level functions bound with `functools.partial`, so a scheduler's
state_dict pickles (LambdaLR keeps the partials' empty __dict__, as torch does).
"""
import math
import warnings
from functools import partial

import numpy as np

from ..core._tensor import Tensor, _wrap
from ..core.ops._helpers import HALF_NP, xp_of
from ..core.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau
from ..core.optim.optimizer import Optimizer
from .trainer_utils import SchedulerType


def _constant(_step):
    return 1.0


def _constant_with_warmup(step, *, num_warmup_steps):
    if step < num_warmup_steps:
        return float(step) / float(max(1.0, num_warmup_steps))
    return 1.0


def _linear_with_warmup(step, *, num_warmup_steps, num_training_steps):
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    return max(0.0, float(num_training_steps - step) / float(max(1, num_training_steps - num_warmup_steps)))


def _cosine_with_warmup(step, *, num_warmup_steps, num_training_steps, num_cycles, min_lr_rate=0.0):
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    progress = float(step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
    factor = 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress))
    return max(0.0, factor * (1 - min_lr_rate) + min_lr_rate)


def _cosine_hard_restarts(step, *, num_warmup_steps, num_training_steps, num_cycles):
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    progress = float(step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
    if progress >= 1.0:
        return 0.0
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * ((float(num_cycles) * progress) % 1.0))))


def _polynomial_decay(step, *, num_warmup_steps, num_training_steps, lr_end, power, lr_init):
    # LambdaLR multiplies by lr_init, hence the divisions.
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    if step > num_training_steps:
        return lr_end / lr_init
    remaining = 1 - (step - num_warmup_steps) / (num_training_steps - num_warmup_steps)
    return ((lr_init - lr_end) * remaining ** power + lr_end) / lr_init


def _inverse_sqrt(step, *, num_warmup_steps, timescale):
    if step < num_warmup_steps:
        return float(step) / float(max(1, num_warmup_steps))
    shift = timescale - num_warmup_steps
    return 1.0 / math.sqrt((step + shift) / timescale)


def _warmup_stable_decay(step, *, num_warmup_steps, num_stable_steps, num_decay_steps, warmup_type, decay_type,
                         min_lr_ratio, num_cycles):
    if step < num_warmup_steps:
        progress = float(step) / float(max(1, num_warmup_steps))
        factor = {"linear": progress, "cosine": 0.5 * (1.0 - math.cos(math.pi * progress)),
                  "1-sqrt": 1.0 - math.sqrt(1.0 - progress)}[warmup_type]
        return max(0.0, factor * (1.0 - min_lr_ratio) + min_lr_ratio)
    if step < num_warmup_steps + num_stable_steps:
        return 1.0
    if step < num_warmup_steps + num_stable_steps + num_decay_steps:
        progress = float(step - num_warmup_steps - num_stable_steps) / float(max(1, num_decay_steps))
        factor = {"linear": 1.0 - progress,
                  "cosine": 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)),
                  "1-sqrt": 1.0 - math.sqrt(progress)}[decay_type]
        return max(0.0, factor * (1.0 - min_lr_ratio) + min_lr_ratio)
    return min_lr_ratio


def get_constant_schedule(optimizer, last_epoch=-1):
    """The optimizer's lr, unchanged."""
    return LambdaLR(optimizer, _constant, last_epoch=last_epoch)


def get_reduce_on_plateau_schedule(optimizer, **kwargs):
    """`ReduceLROnPlateau(optimizer, **kwargs)`: the Trainer steps it with the evaluation metric."""
    return ReduceLROnPlateau(optimizer, **kwargs)


def get_constant_schedule_with_warmup(optimizer, num_warmup_steps, last_epoch=-1):
    """Linear warmup from 0 over num_warmup_steps, then the optimizer's lr."""
    return LambdaLR(optimizer, partial(_constant_with_warmup, num_warmup_steps=num_warmup_steps), last_epoch)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    """Linear warmup from 0, then linear decay to 0 at num_training_steps."""
    fn = partial(_linear_with_warmup, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps)
    return LambdaLR(optimizer, fn, last_epoch)


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5, last_epoch=-1):
    """Linear warmup, then a cosine from the lr to 0 (num_cycles=0.5: half a wave)."""
    fn = partial(_cosine_with_warmup, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps,
                 num_cycles=num_cycles)
    return LambdaLR(optimizer, fn, last_epoch)


def get_cosine_with_hard_restarts_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=1,
                                                       last_epoch=-1):
    """Linear warmup, then `num_cycles` cosine decays each restarting from the full lr."""
    fn = partial(_cosine_hard_restarts, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps,
                 num_cycles=num_cycles)
    return LambdaLR(optimizer, fn, last_epoch)


def get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, lr_end=1e-7, power=1.0,
                                              last_epoch=-1):
    """Linear warmup, then polynomial decay (power) from the lr to lr_end."""
    lr_init = optimizer.defaults["lr"]
    if not lr_init > lr_end:
        raise ValueError(f"lr_end ({lr_end}) must be smaller than initial lr ({lr_init})")
    fn = partial(_polynomial_decay, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps,
                 lr_end=lr_end, power=power, lr_init=lr_init)
    return LambdaLR(optimizer, fn, last_epoch)


def get_inverse_sqrt_schedule(optimizer, num_warmup_steps, timescale=None, last_epoch=-1):
    """Linear warmup, then lr / sqrt((step + timescale - warmup) / timescale)."""
    if timescale is None:
        timescale = num_warmup_steps or 10_000
    fn = partial(_inverse_sqrt, num_warmup_steps=num_warmup_steps, timescale=timescale)
    return LambdaLR(optimizer, fn, last_epoch=last_epoch)


def get_cosine_with_min_lr_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5,
                                                last_epoch=-1, min_lr=None, min_lr_rate=None):
    """Cosine schedule that bottoms out at min_lr (or min_lr_rate * lr) instead of 0."""
    if min_lr is not None and min_lr_rate is not None:
        raise ValueError("Only one of min_lr or min_lr_rate should be set")
    if min_lr is not None:
        min_lr_rate = min_lr / optimizer.defaults["lr"]
    elif min_lr_rate is None:
        raise ValueError("One of min_lr or min_lr_rate should be set through the `lr_scheduler_kwargs`")
    fn = partial(_cosine_with_warmup, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps,
                 num_cycles=num_cycles, min_lr_rate=min_lr_rate)
    return LambdaLR(optimizer, fn, last_epoch)


def get_wsd_schedule(optimizer, num_warmup_steps, num_decay_steps, num_training_steps=None, num_stable_steps=None,
                     warmup_type="linear", decay_type="cosine", min_lr_ratio=0, num_cycles=0.5, last_epoch=-1):
    """Warmup, a stable stretch at the full lr, then decay to min_lr_ratio * lr."""
    if num_training_steps is None and num_stable_steps is None:
        raise ValueError("Either num_training_steps or num_stable_steps must be specified.")
    if num_training_steps is not None and num_stable_steps is not None:
        warnings.warn("Both num_training_steps and num_stable_steps are specified. num_stable_steps will be used.")
    for kind, value in (("warmup", warmup_type), ("decay", decay_type)):
        if value not in ("linear", "cosine", "1-sqrt"):
            raise ValueError(f"Unknown {kind} type: {value}, expected 'linear', 'cosine' or '1-sqrt'")
    if num_stable_steps is None:
        num_stable_steps = num_training_steps - num_warmup_steps - num_decay_steps
    fn = partial(_warmup_stable_decay, num_warmup_steps=num_warmup_steps, num_stable_steps=num_stable_steps,
                 num_decay_steps=num_decay_steps, warmup_type=warmup_type, decay_type=decay_type,
                 min_lr_ratio=min_lr_ratio, num_cycles=num_cycles)
    return LambdaLR(optimizer, fn, last_epoch)


TYPE_TO_SCHEDULER_FUNCTION = {
    SchedulerType.LINEAR: get_linear_schedule_with_warmup,
    SchedulerType.COSINE: get_cosine_schedule_with_warmup,
    SchedulerType.COSINE_WITH_RESTARTS: get_cosine_with_hard_restarts_schedule_with_warmup,
    SchedulerType.POLYNOMIAL: get_polynomial_decay_schedule_with_warmup,
    SchedulerType.CONSTANT: get_constant_schedule,
    SchedulerType.CONSTANT_WITH_WARMUP: get_constant_schedule_with_warmup,
    SchedulerType.INVERSE_SQRT: get_inverse_sqrt_schedule,
    SchedulerType.REDUCE_ON_PLATEAU: get_reduce_on_plateau_schedule,
    SchedulerType.COSINE_WITH_MIN_LR: get_cosine_with_min_lr_schedule_with_warmup,
    SchedulerType.WARMUP_STABLE_DECAY: get_wsd_schedule,
}


def get_scheduler(name, optimizer, num_warmup_steps=None, num_training_steps=None, scheduler_specific_kwargs=None):
    """Any schedule by its name (a `SchedulerType` value); the arguments a schedule needs are required."""
    name = SchedulerType(name)
    schedule = TYPE_TO_SCHEDULER_FUNCTION[name]
    if name == SchedulerType.CONSTANT:
        return schedule(optimizer)
    kwargs = dict(scheduler_specific_kwargs or {})
    if name == SchedulerType.REDUCE_ON_PLATEAU:
        return schedule(optimizer, **kwargs)
    if num_warmup_steps is None:
        raise ValueError(f"{name} requires `num_warmup_steps`, please provide that argument.")
    if name == SchedulerType.CONSTANT_WITH_WARMUP:
        return schedule(optimizer, num_warmup_steps=num_warmup_steps)
    if name == SchedulerType.INVERSE_SQRT:
        return schedule(optimizer, num_warmup_steps=num_warmup_steps, **kwargs)
    if name == SchedulerType.WARMUP_STABLE_DECAY:
        return schedule(optimizer, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps, **kwargs)
    if num_training_steps is None:
        raise ValueError(f"{name} requires `num_training_steps`, please provide that argument.")
    return schedule(optimizer, num_warmup_steps=num_warmup_steps, num_training_steps=num_training_steps, **kwargs)


class Adafactor(Optimizer):
    """HF transformers' Adafactor (Shazeer & Stern, 2018, https://arxiv.org/abs/1804.04235).

    The second moment of a parameter with two or more dimensions is kept factored, as running
    means of the squared gradient over its last dimension (`exp_avg_sq_row`) and over its
    second-to-last (`exp_avg_sq_col`); their outer product, normalized by the row mean,
    approximates the full matrix. 1-D parameters keep the full `exp_avg_sq`. The second-moment
    decay follows the step, `beta2t = 1 - step ** decay_rate`. Each update is divided by
    max(1, RMS(update) / clip_threshold).

    The step size is `lr`, or with `relative_step=True` min(1e-2, 1/sqrt(step)) (with
    `warmup_init`, min(1e-6 * step, 1/sqrt(step))); with `scale_parameter=True` it is multiplied
    by max(eps[1], RMS(parameter)). For an external schedule set `relative_step=False` and
    `scale_parameter=False`, as the Trainer does for `optim="adafactor"`.

    float16/bfloat16 parameters are updated in float32 and rounded back; their state is float32.
    The state holds HF's keys: `step` (an int), `RMS` (a 0-dim tensor), the moment tensors and
    `exp_avg` when `beta1` is set, so state dicts are interchangeable with HF's.
    """

    def __init__(self, params, lr=None, eps=(1e-30, 1e-3), clip_threshold=1.0, decay_rate=-0.8, beta1=None,
                 weight_decay=0.0, scale_parameter=True, relative_step=True, warmup_init=False):
        if lr is not None and relative_step:
            raise ValueError("Cannot combine manual `lr` and `relative_step=True` options")
        if warmup_init and not relative_step:
            raise ValueError("`warmup_init=True` requires `relative_step=True`")
        defaults = {"lr": lr, "eps": eps, "clip_threshold": clip_threshold, "decay_rate": decay_rate, "beta1": beta1,
                    "weight_decay": weight_decay, "scale_parameter": scale_parameter, "relative_step": relative_step,
                    "warmup_init": warmup_init}
        super().__init__(params, defaults)

    @staticmethod
    def _get_lr(param_group, param_state):
        """The step size of a parameter at its current step, as a Python float.

        RMS is a float32 tensor, so a product with it is rounded to float32 as in HF.
        """
        rel_step_sz = param_group["lr"]
        if param_group["relative_step"]:
            min_step = 1e-6 * param_state["step"] if param_group["warmup_init"] else 1e-2
            rel_step_sz = min(min_step, 1.0 / math.sqrt(param_state["step"]))
        param_scale = 1.0
        if param_group["scale_parameter"]:
            param_scale = max(param_group["eps"][1], param_state["RMS"])
        lr = param_scale * rel_step_sz
        return lr.item() if isinstance(lr, Tensor) else lr

    @staticmethod
    def _rms(xp, array):
        """Root mean square, a 0-dim array of the array's dtype (HF: norm / sqrt(numel))."""
        return xp.sqrt(xp.sum(array * array)) / (array.size ** 0.5)

    @staticmethod
    def _approx_sq_grad(xp, exp_avg_sq_row, exp_avg_sq_col):
        """rsqrt of the factored second moment: (row / mean(row))^-1/2 outer col^-1/2."""
        r_factor = 1.0 / xp.sqrt(exp_avg_sq_row / exp_avg_sq_row.mean(axis=-1, keepdims=True))
        c_factor = 1.0 / xp.sqrt(exp_avg_sq_col)
        return r_factor[..., :, None] * c_factor[..., None, :]

    def _init_state(self, state, xp, grad, factored, use_first_moment):
        state["step"] = 0
        if use_first_moment:
            state["exp_avg"] = _wrap(xp.zeros_like(grad))
        if factored:
            state["exp_avg_sq_row"] = _wrap(xp.zeros(grad.shape[:-1], dtype=grad.dtype))
            state["exp_avg_sq_col"] = _wrap(xp.zeros(grad.shape[:-2] + grad.shape[-1:], dtype=grad.dtype))
        else:
            state["exp_avg_sq"] = _wrap(xp.zeros_like(grad))
        state["RMS"] = 0

    @staticmethod
    def _state_array(state, key, dtype):
        """A moment array in the gradient's dtype (a loaded state may hold the parameter's half dtype)."""
        if state[key]._data.dtype != dtype:
            state[key] = _wrap(state[key]._data.astype(dtype))
        return state[key]._data

    def _update_group(self, group):
        eps_sq = group["eps"][0]
        beta1 = group["beta1"]
        for p in group["params"]:
            if p.grad is None:
                continue
            xp = xp_of(p)
            grad = p.grad._data
            if grad.shape != p._data.shape:
                raise RuntimeError(f"gradient of shape {tuple(p.grad.shape)} does not match parameter of shape "
                                   f"{tuple(p.shape)}")
            if grad.dtype in HALF_NP:
                grad = grad.astype(np.float32)
            state = self.state[p]
            factored = grad.ndim >= 2
            use_first_moment = beta1 is not None
            if not state:
                self._init_state(state, xp, grad, factored, use_first_moment)

            low_precision = p._data.dtype in HALF_NP
            param = p._data.astype(np.float32) if low_precision else p._data
            state["step"] += 1
            state["RMS"] = _wrap(xp.asarray(self._rms(xp, param)))
            lr = self._get_lr(group, state)

            beta2t = 1.0 - math.pow(state["step"], group["decay_rate"])
            update = grad * grad
            update += eps_sq
            if factored:
                exp_avg_sq_row = self._state_array(state, "exp_avg_sq_row", grad.dtype)
                exp_avg_sq_col = self._state_array(state, "exp_avg_sq_col", grad.dtype)
                exp_avg_sq_row *= beta2t
                exp_avg_sq_row += (1.0 - beta2t) * update.mean(axis=-1)
                exp_avg_sq_col *= beta2t
                exp_avg_sq_col += (1.0 - beta2t) * update.mean(axis=-2)
                update = self._approx_sq_grad(xp, exp_avg_sq_row, exp_avg_sq_col)
                update *= grad
            else:
                exp_avg_sq = self._state_array(state, "exp_avg_sq", grad.dtype)
                exp_avg_sq *= beta2t
                exp_avg_sq += (1.0 - beta2t) * update
                update = 1.0 / xp.sqrt(exp_avg_sq)
                update *= grad

            update /= max(self._rms(xp, update) / group["clip_threshold"], 1.0)
            update *= lr
            if use_first_moment:
                exp_avg = self._state_array(state, "exp_avg", grad.dtype)
                exp_avg *= beta1
                exp_avg += (1 - beta1) * update
                update = exp_avg
            if group["weight_decay"] != 0:
                param += (-group["weight_decay"] * lr) * param
            param -= update
            if low_precision:
                p._data[...] = param.astype(p._data.dtype)
            p._version[0] += 1


def _constant_value(_step, *, value):
    return value


class AdafactorSchedule(LambdaLR):
    """A proxy schedule for `Adafactor`, which computes its own step sizes: `get_last_lr()` reports
    the step size of each group's first parameter (initial_lr before the first step), for logging.

    As every scheduler does, each `step()` writes these rates into the groups' "lr", so with
    `relative_step=False` the next steps use them; the schedule is meant for `lr=None`.
    """

    def __init__(self, optimizer, initial_lr=0.0):
        for group in optimizer.param_groups:
            group["initial_lr"] = initial_lr
        super().__init__(optimizer, partial(_constant_value, value=initial_lr))
        for group in optimizer.param_groups:
            del group["initial_lr"]

    def get_lr(self):
        opt = self.optimizer
        lrs = [opt._get_lr(group, opt.state[group["params"][0]]) for group in opt.param_groups
               if group["params"][0].grad is not None]
        if not lrs:
            lrs = self.base_lrs  # before the first step
        return lrs


def get_adafactor_schedule(optimizer, initial_lr=0.0):
    """`AdafactorSchedule(optimizer, initial_lr)`."""
    return AdafactorSchedule(optimizer, initial_lr)
