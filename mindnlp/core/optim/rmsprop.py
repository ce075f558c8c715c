# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""RMSprop with optional centering (subtract the squared mean gradient) and momentum."""
from .optimizer import (Optimizer, check_hyperparameter, check_unsupported_modes, float_value, lerp_,
                        new_step_counter, params_with_grad, state_array)
from ..ops._helpers import xp_of


class RMSprop(Optimizer):
    """torch.optim.RMSprop."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_hyperparameter(lr, "lr")
        check_hyperparameter(eps, "epsilon")
        check_hyperparameter(momentum, "momentum")
        check_hyperparameter(weight_decay, "weight_decay")
        check_hyperparameter(alpha, "alpha")
        check_unsupported_modes(differentiable, capturable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr = float_value(group["lr"])
        alpha = group["alpha"]
        momentum = group["momentum"]
        for p, param, grad in params_with_grad(group):
            state = self.state[p]
            if not state:
                state["step"] = new_step_counter(p.device)
                state["square_avg"] = state_array(p)
                if momentum > 0:
                    state["momentum_buffer"] = state_array(p)
                if group["centered"]:
                    state["grad_avg"] = state_array(p)
            state["step"]._data += 1
            direction = -grad if group["maximize"] else grad
            if group["weight_decay"] != 0:
                direction = direction + group["weight_decay"] * param
            square_avg = state["square_avg"]._data
            square_avg *= alpha
            square_avg += (1 - alpha) * direction * direction
            xp = xp_of(p)
            if group["centered"]:
                grad_avg = state["grad_avg"]._data
                lerp_(grad_avg, direction, 1 - alpha)
                avg = xp.sqrt(square_avg - grad_avg * grad_avg)
            else:
                avg = xp.sqrt(square_avg)
            avg += group["eps"]
            if momentum > 0:
                buf = state["momentum_buffer"]._data
                buf *= momentum
                buf += direction / avg
                param += -lr * buf
            else:
                update = -lr * direction
                update /= avg
                param += update
            p._version[0] += 1
