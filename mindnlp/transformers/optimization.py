"""Learning-rate schedules of Hugging Face transformers, as `LambdaLR`s over core optimizers.

Each schedule is a multiplier of the optimizer's initial lr as a function of the step; the
formulas are HF's, so `get_scheduler(name, ...)` gives the same lr curve as HF for every name.
The multipliers are module-level functions bound with `functools.partial`, so a scheduler's
state_dict pickles (LambdaLR keeps the partials' empty __dict__, as torch does).
"""
import math
import warnings
from functools import partial

from ..core.optim.lr_scheduler import LambdaLR, ReduceLROnPlateau
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
