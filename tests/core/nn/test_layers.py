"""Each layer's forward and backward against PyTorch (fixtures from tests/fixtures/make_nn_fixtures.py).

The module is rebuilt from the same constructor expression, loads torch's weights through
load_state_dict, runs on torch's inputs, and backpropagates torch's grad_output; outputs,
input gradients, parameter gradients and updated buffers must match to float32 rounding.
"""
import collections
import json
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nn"
META = json.loads((FIXTURES / "nn.json").read_text())
TOL = 1e-5


def _build(ctor):
    return eval(ctor, {"nn": nn, "core": core, "collections": collections})


def _load_case(name):
    data = np.load(FIXTURES / f"{name}.npz")
    return {k: data[k] for k in data.files}


def _assert_close(actual, expected, what):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=TOL, atol=TOL, err_msg=what)


@pytest.mark.parametrize("name", sorted(META["cases"]))
def test_layer_matches_torch(name):
    case = META["cases"][name]
    arrays = _load_case(name)
    module = _build(case["ctor"])
    module.train(case["training"])
    state = {k[len("param:"):]: core.tensor(v) for k, v in arrays.items() if k.startswith("param:")}
    result = module.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys

    inputs = []
    i = 0
    while f"input:{i}" in arrays:
        x = core.tensor(arrays[f"input:{i}"])
        if x.is_floating_point():
            x.requires_grad_(True)
        inputs.append(x)
        i += 1
    out = module(*inputs)
    _assert_close(out.detach().numpy(), arrays["output"], f"{name} output")

    out.backward(core.tensor(arrays["grad_output"]))
    for i, x in enumerate(inputs):
        if f"grad_input:{i}" in arrays:
            _assert_close(x.grad.numpy(), arrays[f"grad_input:{i}"], f"{name} grad of input {i}")
    params = dict(module.named_parameters())
    expected_grads = {k[len("grad_param:"):] for k in arrays if k.startswith("grad_param:")}
    assert expected_grads == {k for k, p in params.items() if p.grad is not None}
    for key in expected_grads:
        _assert_close(params[key].grad.numpy(), arrays[f"grad_param:{key}"], f"{name} grad of {key}")
    for key, value in module.state_dict().items():
        _assert_close(value.numpy(), arrays[f"state_after:{key}"], f"{name} {key} after forward")
