# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Optimizer`: parameter groups, per-parameter state, and torch's state_dict format.

Subclasses implement `_update_group(group)`, which changes parameter arrays in place.
Updates write straight into `param._data` (and bump the shared version counter) rather
than going through recorded tensor ops: the optimizer step is the hottest loop of training
and nothing in it is differentiated.

The state_dict layout is torch's: parameters are replaced by integer ids numbered across
groups in order, `state` maps those ids to dicts, and `param_groups` holds each group's
hyper-parameters with `params` as the id list. A state dict saved by torch loads here and
the other way round.
"""
import copy
import math
from collections import defaultdict

import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd import grad_mode
from ..ops._helpers import xp_of


class _RequiredParameter:
    """Marks a hyper-parameter that has no default and must be given per group."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer's contract)."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        self._step_pre_hooks = {}
        self._step_post_hooks = {}
        self._next_hook_id = 0
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {type(params).__name__}"
            )
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k not in ("params", "param_names")):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._step_pre_hooks = {}
        self._step_post_hooks = {}
        self._next_hook_id = 0

    # --- groups ---
    def add_param_group(self, param_group):
        """Add a group of parameters; missing hyper-parameters take the optimizer's defaults.

        `params` may hold tensors or (name, tensor) pairs as `named_parameters()` yields;
        names are kept under `param_names` as torch does.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        if params and isinstance(params[0], tuple):
            group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        group["params"] = params
        seen = set()
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if id(p) in seen:
                raise ValueError("optimizer contains a parameter group with duplicate parameters")
            seen.add(id(p))
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if not existing.isdisjoint(seen):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    # --- gradients ---
    def zero_grad(self, set_to_none=True):
        """Drop the gradients (set_to_none) or zero them in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p.grad
                    grad.grad_fn = None
                    grad.requires_grad = False
                    grad._data.fill(0)
                    grad._version[0] += 1

    # --- stepping ---
    def step(self, closure=None):
        """One update of every parameter with a gradient; returns closure()'s loss if given."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        for hook in list(self._step_pre_hooks.values()):
            hook(self, (), {})
        with grad_mode.no_grad():
            for group in self.param_groups:
                self._update_group(group)
        for hook in list(self._step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def _update_group(self, group):
        raise NotImplementedError(f"{type(self).__name__} does not implement _update_group")

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) runs before each step; returns a handle with remove()."""
        return self._add_hook(self._step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) runs after each step; returns a handle with remove()."""
        return self._add_hook(self._step_post_hooks, hook)

    def _add_hook(self, table, hook):
        key = self._next_hook_id
        self._next_hook_id += 1
        table[key] = hook
        return _HookHandle(table, key)

    # --- serialization ---
    def state_dict(self):
        """{'state': {id: {...}}, 'param_groups': [{..., 'params': [ids]}]} (references, not copies)."""
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            ids = []
            for p in group["params"]:
                if id(p) not in index_of:
                    index_of[id(p)] = len(index_of)
                ids.append(index_of[id(p)])
            packed["params"] = ids
            groups.append(packed)
        state = {index_of[id(p)]: s for p, s in self.state.items() if id(p) in index_of}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore from state_dict(); state tensors follow each parameter's dtype and device."""
        state_dict = copy.deepcopy(state_dict)
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for ours, saved in zip(self.param_groups, saved_groups):
            if len(ours["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        param_of = {}
        for ours, saved in zip(self.param_groups, saved_groups):
            for index, p in zip(saved["params"], ours["params"]):
                param_of[index] = p
        state = defaultdict(dict)
        for index, values in state_dict["state"].items():
            if index not in param_of:
                state[index] = values
                continue
            p = param_of[index]
            state[p] = {key: _match_param(value, p, key) for key, value in values.items()}
        new_groups = []
        for ours, saved in zip(self.param_groups, saved_groups):
            group = dict(saved)
            group["params"] = ours["params"]
            if "param_names" in ours and "param_names" not in saved:
                group["param_names"] = ours["param_names"]
            new_groups.append(group)
        self.state = state
        self.param_groups = new_groups


def _match_param(value, param, key):
    """A loaded state value moved to the parameter's device; floating state takes its dtype.

    'step' counters keep their own dtype (float32), as torch keeps them.
    """
    if isinstance(value, Tensor):
        if value.device != param.device:
            value = value.to(param.device)
        if key != "step" and value.is_floating_point() and value.dtype != param.dtype:
            value = value.to(param.dtype)
        return value
    if isinstance(value, dict):
        return {k: _match_param(v, param, k) for k, v in value.items()}
    return value


class _HookHandle:
    def __init__(self, table, key):
        self._table = table
        self._key = key

    def remove(self):
        self._table.pop(self._key, None)


def check_hyperparameter(value, name, low=0.0, high=math.inf, index=None):
    """Raise torch's ValueError for a hyper-parameter outside [low, high)."""
    if isinstance(value, Tensor):
        value = value.item()
    if not low <= value < high:
        where = f" at index {index}" if index is not None else ""
        label = {"lr": "learning rate", "beta": "beta parameter"}.get(name, f"{name} value")
        raise ValueError(f"Invalid {label}{where}: {value}")


def float_value(value):
    """A hyper-parameter as a Python float (torch allows tensors for lr and betas)."""
    return value.item() if isinstance(value, Tensor) else float(value)


def new_step_counter(device):
    """The per-parameter 'step' state: a float32 0-dim tensor, as torch stores it."""
    counter = _wrap(np.zeros((), dtype=np.float32))
    return counter if device.type == "cpu" else counter.to(device)


def params_with_grad(group):
    """(param, param array, grad array) for each parameter of the group that has a gradient."""
    for p in group["params"]:
        if p.grad is not None:
            if p.grad._data.shape != p._data.shape:
                raise RuntimeError(f"gradient of shape {tuple(p.grad.shape)} does not match parameter of shape "
                                   f"{tuple(p.shape)}")
            yield p, p._data, p.grad._data


def state_array(param, fill=0.0):
    """A state tensor shaped and typed like the parameter, on its device, filled with `fill`."""
    array = xp_of(param).full_like(param._data, fill)
    return _wrap(array)


def lerp_(target, end, weight):
    """target <- lerp(target, end, weight) in place, with torch's two-sided formula.

    torch computes `target + weight * (end - target)` for |weight| < 0.5 and
    `end - (end - target) * (1 - weight)` otherwise, which keeps the rounding small at
    both ends; the same branches give the same float32 results here.
    """
    diff = end - target
    if abs(weight) < 0.5:
        diff *= weight
        target += diff
    else:
        diff *= 1.0 - weight
        target[...] = end - diff


def check_unsupported_modes(differentiable=False, capturable=False):
    """torch's `differentiable` and `capturable` modes (autograd through the step, CUDA graphs)
    have no counterpart here; `foreach` and `fused` are accepted because the in-place array
    update already is the fast path."""
    if differentiable:
        raise ValueError("differentiable=True is not supported by mindnlp.core.optim: the step updates arrays in place")
    if capturable:
        raise ValueError("capturable=True is not supported by mindnlp.core.optim (there are no CUDA graphs to capture)")
