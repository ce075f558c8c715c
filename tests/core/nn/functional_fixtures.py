"""Replay the torch.nn.functional cases recorded by tests/fixtures/make_nn_functional_fixtures.py."""
import json
import pathlib

import numpy as np

from mindnlp import core
from mindnlp.core.nn import functional as F

FIXTURES = pathlib.Path(__file__).parents[2] / "fixtures" / "nn_functional"


def load_cases(op):
    """{case name: {key: array}} for one op's fixture file."""
    cases = {}
    with np.load(FIXTURES / f"{op}.npz") as data:
        for key in data.files:
            case, name = key.split("/", 1)
            cases.setdefault(case, {})[name] = data[key]
    return cases


def case_names(op):
    return sorted(load_cases(op))


def _decode(entry, arrays, key, grad_keys, device):
    if "array" in entry:
        array = arrays[entry["array"]]
        return core.tensor(array, requires_grad=key in grad_keys, device=device)
    value = entry["value"]
    if key == "dtype" and isinstance(value, str):
        return getattr(core, value)
    return value


def build_call(arrays, device="cpu"):
    """The recorded (args, kwargs), as core tensors on `device`; differentiable ones require grad."""
    spec = json.loads(str(arrays["spec"]))
    grad_keys = set(spec["grad"])
    args = [_decode(e, arrays, f"arg{i}", grad_keys, device) for i, e in enumerate(spec["args"])]
    kwargs = {k: _decode(e, arrays, k, grad_keys, device) for k, e in spec["kwargs"].items()}
    leaves = {f"arg{i}": a for i, a in enumerate(args) if f"arg{i}" in grad_keys}
    leaves.update({k: v for k, v in kwargs.items() if k in grad_keys})
    return args, kwargs, leaves


def check_case(op, case, atol=1e-5, rtol=1e-5, fn=None, skip_nan_grads=False, device="cpu"):
    """Run `op` (or fn) on a recorded case; compare its outputs and input gradients with torch's.

    skip_nan_grads compares gradients only where torch's are not NaN (for the few places where
    torch's gradient is NaN and ours is the finite limit).
    """
    arrays = load_cases(op)[case]
    args, kwargs, leaves = build_call(arrays, device)
    with core.device(device):
        out = (fn or getattr(F, op))(*args, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    expected = [arrays["out"]] if "out" in arrays else [arrays[f"out{i}"] for i in range(len(outs))]
    for got, want in zip(outs, expected):
        assert tuple(got.shape) == want.shape, (case, tuple(got.shape), want.shape)
        np.testing.assert_allclose(got.detach().cpu().numpy().astype(np.float64), want.astype(np.float64),
                                   atol=atol, rtol=rtol, err_msg=f"{op}/{case} output")
    if leaves:
        outs[0].backward(core.tensor(arrays["grad_out"], device=device))
        for key, leaf in leaves.items():
            got, want = leaf.grad.cpu().numpy(), arrays[f"grad_{key}"]
            if skip_nan_grads:
                keep = ~np.isnan(want)
                got, want = got[keep], want[keep]
            np.testing.assert_allclose(got, want, atol=atol, rtol=rtol, err_msg=f"{op}/{case} gradient of {key}")
