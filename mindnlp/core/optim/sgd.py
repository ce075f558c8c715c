# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SGD with momentum, dampening, Nesterov momentum, weight decay and maximize."""
from .optimizer import Optimizer, check_hyperparameter, check_unsupported_modes, float_value, params_with_grad
from .._tensor import _wrap


class SGD(Optimizer):
    """torch.optim.SGD; the momentum buffer starts as a copy of the first gradient."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        check_hyperparameter(lr, "lr")
        check_hyperparameter(momentum, "momentum")
        check_hyperparameter(weight_decay, "weight_decay")
        check_unsupported_modes(differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update_group(self, group):
        lr = float_value(group["lr"])
        momentum = group["momentum"]
        dampening = group["dampening"]
        weight_decay = float_value(group["weight_decay"])
        for p, param, grad in params_with_grad(group):
            direction = -grad if group["maximize"] else grad
            if weight_decay != 0:
                direction = direction + weight_decay * param
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = _wrap(direction.copy())
                    state["momentum_buffer"] = buf
                else:
                    buf._data *= momentum
                    buf._data += direction if dampening == 0 else (1 - dampening) * direction
                direction = direction + momentum * buf._data if group["nesterov"] else buf._data
            param += -lr * direction
            p._version[0] += 1
