# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Adam and AdamW (decoupled weight decay), with AMSGrad and maximize.

The arithmetic follows torch's single-tensor CPU path step for step (lerp for the first
moment, `mul_` + `addcmul_` for the second, bias corrections in double precision, then
`addcdiv_` with -lr/bias_correction1), so float32 trajectories agree to rounding. Float32
parameters on the CPU take the same arithmetic in one compiled pass (cpu_kernels.adam_step),
bitwise equal to the multi-pass update and several times faster on large models.
"""
import numpy as np

from ..backends import cpu_kernels
from ..ops._helpers import xp_of
from .optimizer import (Optimizer, check_hyperparameter, check_unsupported_modes, float_value, lerp_,
                        new_step_counter, params_with_grad, state_array)


class Adam(Optimizer):
    """torch.optim.Adam; `decoupled_weight_decay=True` makes it AdamW."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False):
        check_hyperparameter(lr, "lr")
        check_hyperparameter(eps, "epsilon")
        check_hyperparameter(betas[0], "beta", high=1.0, index=0)
        check_hyperparameter(betas[1], "beta", high=1.0, index=1)
        check_hyperparameter(weight_decay, "weight_decay")
        check_unsupported_modes(differentiable, capturable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _init_state(self, p, state, amsgrad):
        state["step"] = new_step_counter(p.device)
        state["exp_avg"] = state_array(p)
        state["exp_avg_sq"] = state_array(p)
        if amsgrad:
            state["max_exp_avg_sq"] = state_array(p)

    def _update_group(self, group):
        lr = float_value(group["lr"])
        beta1, beta2 = (float_value(b) for b in group["betas"])
        eps = group["eps"]
        weight_decay = group["weight_decay"]
        amsgrad = group["amsgrad"]
        decoupled = group.get("decoupled_weight_decay", False)
        for p, param, grad in params_with_grad(group):
            state = self.state[p]
            if not state:
                self._init_state(p, state, amsgrad)
            state["step"]._data += 1
            step = float(state["step"]._data)
            if self._fused_update(param, grad, state, group, step):
                p._version[0] += 1
                continue
            direction = -grad if group["maximize"] else grad
            if weight_decay != 0:
                if decoupled:
                    param *= 1 - lr * weight_decay
                else:
                    direction = direction + weight_decay * param
            exp_avg = state["exp_avg"]._data
            exp_avg_sq = state["exp_avg_sq"]._data
            lerp_(exp_avg, direction, 1 - beta1)
            exp_avg_sq *= beta2
            exp_avg_sq += (1 - beta2) * direction * direction

            bias_correction1 = 1 - beta1 ** step
            bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
            step_size = lr / bias_correction1
            xp = xp_of(p)
            if amsgrad:
                max_exp_avg_sq = state["max_exp_avg_sq"]._data
                xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                denom = xp.sqrt(max_exp_avg_sq)
            else:
                denom = xp.sqrt(exp_avg_sq)
            denom /= bias_correction2_sqrt
            denom += eps
            update = -step_size * exp_avg
            update /= denom
            param += update
            p._version[0] += 1


    @staticmethod
    def _fused_update(param, grad, state, group, step):
        """The same update in one compiled pass (cpu_kernels.adam_step), with the float32
        constants the multi-pass arithmetic below multiplies by; False where it cannot run."""
        lr = float_value(group["lr"])
        beta1, beta2 = (float_value(b) for b in group["betas"])
        weight_decay = group["weight_decay"]
        decoupled = group.get("decoupled_weight_decay", False)
        f32 = np.float32
        lerp_weight = 1 - beta1
        scalars = (f32(1 - lr * weight_decay) if decoupled and weight_decay != 0 else f32(1.0),
                   f32(weight_decay) if not decoupled and weight_decay != 0 else f32(0.0),
                   f32(lerp_weight), f32(1.0 - lerp_weight), f32(beta2), f32(1 - beta2),
                   f32(-lr / (1 - beta1 ** step)), f32((1 - beta2 ** step) ** 0.5), f32(group["eps"]))
        return cpu_kernels.adam_step(param, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data,
                                     state["max_exp_avg_sq"]._data if group["amsgrad"] else None,
                                     group["maximize"], scalars)


class AdamW(Adam):
    """torch.optim.AdamW: Adam whose weight decay shrinks the parameters directly (lr * wd)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
