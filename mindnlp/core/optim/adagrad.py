# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""
from .optimizer import (Optimizer, check_hyperparameter, check_unsupported_modes, float_value, new_step_counter,
                        params_with_grad, state_array)
from ..ops._helpers import xp_of


class Adagrad(Optimizer):
    """torch.optim.Adagrad; like torch, the state (sum, step) exists from construction."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_hyperparameter(lr, "lr")
        check_hyperparameter(lr_decay, "lr_decay")
        check_hyperparameter(weight_decay, "weight_decay")
        check_hyperparameter(initial_accumulator_value, "initial_accumulator_value")
        check_hyperparameter(eps, "epsilon")
        check_unsupported_modes(differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = new_step_counter(p.device)
                state["sum"] = state_array(p, float(group["initial_accumulator_value"]))

    def _update_group(self, group):
        lr = float_value(group["lr"])
        for p, param, grad in params_with_grad(group):
            state = self.state[p]
            state["step"]._data += 1
            step = float(state["step"]._data)
            direction = -grad if group["maximize"] else grad
            if group["weight_decay"] != 0:
                direction = direction + group["weight_decay"] * param
            clr = lr / (1 + (step - 1) * group["lr_decay"])
            square_sum = state["sum"]._data
            square_sum += direction * direction
            std = xp_of(p).sqrt(square_sum)
            std += group["eps"]
            update = -clr * direction
            update /= std
            param += update
            p._version[0] += 1
