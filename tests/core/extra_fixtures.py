"""Read the torch results recorded by make_core_fixtures.make_extra_op_fixtures (ops_extra.*).

Like torch_fixtures, each case is an expression evaluated with `torch` bound to mindnlp.core;
some cases also carry torch's gradient of sum(first output * w) with respect to float inputs.
"""
import json
import os

import numpy as np

from mindnlp import core

from .torch_fixtures import FIXTURES, assert_outputs_match

_DATA = None


def _data():
    global _DATA
    if _DATA is None:
        with open(os.path.join(FIXTURES, "ops_extra.json")) as f:
            cases = json.load(f)
        _DATA = cases, dict(np.load(os.path.join(FIXTURES, "ops_extra.npz")))
    return _DATA


def case_names(group):
    cases, _ = _data()
    return sorted(name for name, case in cases["cases"].items() if case["group"] == group)


def grad_case_names(group):
    cases, _ = _data()
    return sorted(name for name, case in cases["cases"].items() if case["group"] == group and case["grad_inputs"])


def error_case(name):
    cases, _ = _data()
    return cases["errors"][name]


def _evaluate(name, requires_grad, device="cpu"):
    cases, arrays = _data()
    case = cases["cases"][name]
    inputs = {k: core.tensor(arrays[f"{name}/in/{k}"], device=device) for k in case["inputs"]}
    if requires_grad:
        for k in case["grad_inputs"]:
            inputs[k].requires_grad_(True)
    with core.device(device):
        result = eval(case["expr"], {"torch": core}, inputs)
    ours = [result] if isinstance(result, core.Tensor) else list(result)
    return case, inputs, ours


def check_case(name, rtol=1e-5, atol=1e-6, device="cpu"):
    """Values, shapes and dtypes equal torch's (NaN where torch has NaN; half types to their precision)."""
    case, _, ours = _evaluate(name, False, device)
    _, arrays = _data()
    expected = [arrays[f"{name}/out/{i}"] for i in range(len(case["dtypes"]))]
    assert_outputs_match(name, ours, expected, case["dtypes"], rtol, atol)


def check_case_grad(name, rtol=1e-4, atol=1e-5, device="cpu"):
    """Our gradient of sum(first output * w) equals torch's, input by input."""
    case, inputs, ours = _evaluate(name, True, device)
    _, arrays = _data()
    weight = core.tensor(arrays[f"{name}/w"], device=device)
    (ours[0] * weight).sum().backward()
    for k in case["grad_inputs"]:
        want = arrays[f"{name}/grad/{k}"]
        got = inputs[k].grad
        got = np.zeros_like(want) if got is None else got.cpu().numpy()
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{name}: d/d{k}")


def check_error_case(name):
    """The same exception type and message as torch."""
    case = error_case(name)
    try:
        eval(case["expr"], {"torch": core})
    except Exception as err:  # the type is what is being compared
        assert type(err).__name__ == case["type"], f"{name}: {type(err).__name__}({err}), torch raises {case['type']}"
        assert str(err) == case["message"], f"{name}: {err!s} != {case['message']}"
    else:
        raise AssertionError(f"{name}: {case['expr']} did not raise (torch raises {case['type']})")
