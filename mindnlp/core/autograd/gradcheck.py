# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Compare analytical gradients against central finite differences in float64."""
import numpy as np


class GradcheckError(RuntimeError):
    pass


def _differentiable_inputs(inputs):
    from .._tensor import Tensor

    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _flat_outputs(fn, inputs):
    from .._tensor import Tensor

    out = fn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, Tensor) and o.is_floating_point()]


def _host_float64(tensor):
    """A tensor's values as a flat float64 NumPy array (copied to the host from a GPU)."""
    return np.array(tensor.detach().cpu()._data, dtype=np.float64).reshape(-1)  # a copy: outputs may view the input


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0):
    """True when every input's analytical Jacobian matches the numerical one.

    Inputs that require grad should be float64; each is perturbed element by element by
    +-eps, and each output element is backpropagated with a one-hot gradient.
    """
    from .. import ops
    from .engine import run_backward

    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt = _differentiable_inputs(inputs)
    if not wrt:
        raise ValueError("gradcheck needs at least one input with requires_grad=True")
    outputs = _flat_outputs(fn, inputs)
    for j, out in enumerate(outputs):
        n_out = out.numel()
        for i in wrt:
            x = inputs[i]
            numerical = np.zeros((x.numel(), n_out))
            flat = x._data.reshape(-1)  # a view: writes perturb the input in place
            for k in range(x.numel()):
                orig = flat[k].item()
                flat[k] = orig + eps
                plus = _host_float64(_flat_outputs(fn, inputs)[j])
                flat[k] = orig - eps
                minus = _host_float64(_flat_outputs(fn, inputs)[j])
                flat[k] = orig
                numerical[k] = (plus - minus) / (2 * eps)
            analytical = np.zeros((x.numel(), n_out))
            for m in range(n_out):
                out_m = _flat_outputs(fn, inputs)[j]
                seed = np.zeros(n_out)
                seed[m] = 1
                grad_out = ops.tensor(seed.reshape(out_m.shape), dtype=out_m.dtype, device=out_m.device)
                if not out_m.requires_grad:
                    break
                (g,) = run_backward((out_m,), (grad_out,), False, False, inputs=(x,), accumulate=False)
                if g is not None:
                    analytical[:, m] = _host_float64(g)
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                worst = np.abs(analytical - numerical).max()
                msg = (
                    f"Jacobian mismatch for output {j} with respect to input {i}: max abs difference {worst:.3g}\n"
                    f"numerical:\n{numerical}\nanalytical:\n{analytical}"
                )
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """gradcheck of the first derivative: checks that backward is itself differentiable."""
    from .. import ops
    from . import grad as autograd_grad

    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    wrt = _differentiable_inputs(inputs)
    outputs = _flat_outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [
            ops.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=o.device, requires_grad=True)
            for o in outputs
        ]
    n_in = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = _flat_outputs(fn, xs)
        return autograd_grad(
            outs, [xs[i] for i in wrt], gos, create_graph=True, allow_unused=True, materialize_grads=True
        )

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
