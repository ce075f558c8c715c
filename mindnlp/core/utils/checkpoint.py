# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Activation checkpointing: run a block without keeping its activations, recompute in backward.

The forward runs under no_grad; backward re-runs it with the same random state (so dropout
masks repeat), backpropagates through the recomputed graph — parameter gradients
accumulate directly, as in torch's reentrant checkpoint — and returns the gradients of the
block's tensor inputs.
"""
from .. import autograd, random
from .._tensor import Tensor
from ..autograd.function import Function


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run, *args):
        ctx.run = run
        ctx.rng_state = random.get_rng_state()
        ctx.save_for_backward(*(a if isinstance(a, Tensor) else None for a in args))
        ctx.plain_args = [None if isinstance(a, Tensor) else a for a in args]
        return run(*args)

    @staticmethod
    def backward(ctx, *grads):
        saved = ctx.saved_tensors
        inputs = []
        for tensor, plain in zip(saved, ctx.plain_args):
            if tensor is None:
                inputs.append(plain)
            else:
                detached = tensor.detach()
                detached.requires_grad = tensor.requires_grad
                inputs.append(detached)
        now = random.get_rng_state()
        random.set_rng_state(ctx.rng_state)
        try:
            with autograd.enable_grad():
                outputs = ctx.run(*inputs)
        finally:
            random.set_rng_state(now)
        outputs = (outputs,) if not isinstance(outputs, tuple) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        input_grads = tuple(i.grad if isinstance(i, Tensor) and i.requires_grad else None for i in inputs)
        return (None,) + input_grads


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """Call function(*args, **kwargs), trading recomputation in backward for activation memory."""
    if not autograd.is_grad_enabled():
        return function(*args, **kwargs)

    def run(*call_args):
        return function(*call_args, **kwargs)

    return _Checkpoint.apply(run, *args)
