"""Read the expected values that tests/fixtures/make_core_fixtures.py recorded from torch.

Op cases are expressions such as "torch.add(a, b)": evaluated here with `torch` bound to
mindnlp.core and the recorded inputs as tensors, and compared with torch's outputs.
"""
import json
import os

import numpy as np

from mindnlp import core

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "core")


def load_json(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


_OPS = None


def _ops():
    global _OPS
    if _OPS is None:
        _OPS = load_json("ops.json"), dict(np.load(os.path.join(FIXTURES, "ops.npz")))
    return _OPS


def op_case_names(group):
    cases, _ = _ops()
    return sorted(name for name, case in cases["cases"].items() if case["group"] == group)


def error_cases():
    cases, _ = _ops()
    return cases["errors"]


def run_op_case(name, device="cpu"):
    """Evaluate case `name` with mindnlp.core, its inputs and default device on `device`; return
    (our outputs, torch's arrays, torch's dtype names)."""
    cases, arrays = _ops()
    case = cases["cases"][name]
    inputs = {k: core.tensor(arrays[f"{name}/in/{k}"], device=device) for k in case["inputs"]}
    with core.device(device):
        result = eval(case["expr"], {"torch": core}, inputs)
    ours = [result] if isinstance(result, core.Tensor) else list(result)
    expected = [arrays[f"{name}/out/{i}"] for i in range(len(case["dtypes"]))]
    return ours, expected, case["dtypes"]


def check_op_case(name, rtol=1e-6, atol=1e-6, device="cpu"):
    """Our values, shapes and dtypes equal torch's (half types to their own precision)."""
    ours, expected, dtypes = run_op_case(name, device)
    assert_outputs_match(name, ours, expected, dtypes, rtol, atol)


def assert_outputs_match(name, ours, expected, dtypes, rtol, atol):
    """Same count, dtypes and shapes as torch's outputs; values equal (integers, bools), within
    rtol/atol with NaN where torch has NaN (float32/64), or to the type's precision (half types)."""
    assert len(ours) == len(expected), f"{name}: {len(ours)} outputs, torch gives {len(expected)}"
    for got, want, dtype in zip(ours, expected, dtypes):
        assert got.dtype.name == dtype, f"{name}: dtype {got.dtype.name}, torch gives {dtype}"
        assert tuple(got.shape) == want.shape, f"{name}: shape {tuple(got.shape)}, torch gives {want.shape}"
        got = got.detach().cpu()
        values = got.float().numpy() if dtype == "bfloat16" else got.numpy()
        if dtype in ("float16", "bfloat16"):
            tol = 2 ** -10 if dtype == "float16" else 2 ** -7
            np.testing.assert_allclose(values.astype(np.float32), want, rtol=tol, atol=tol, err_msg=name)
        elif want.dtype.kind == "f":
            np.testing.assert_allclose(values, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)
        else:
            np.testing.assert_array_equal(values, want, err_msg=name)
