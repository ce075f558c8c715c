"""Optimizer updates against torch's recorded trajectories, and the Optimizer contract."""
import copy
import json
import os
import pickle

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import optim

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "optim")
with open(os.path.join(FIXTURES, "optimizers.json")) as f:
    RECORD = json.load(f)
ARRAYS = np.load(os.path.join(FIXTURES, "optimizers.npz"))


def _leaf(array):
    return core.tensor(array, requires_grad=True)


def _build(case, params):
    kwargs = dict(case["kwargs"])
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    cls = getattr(optim, case["optimizer"])
    return cls([{"params": [params[0]]}, {"params": [params[1]], "lr": kwargs["lr"] * 0.5}], **kwargs)


def _set_grads(params, step):
    for i, p in enumerate(params):
        p.grad = core.tensor(ARRAYS[f"grad_{step}_{i}"])


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_trajectory_matches_torch(name):
    case = RECORD["cases"][name]
    params = [_leaf(ARRAYS["init_0"]), _leaf(ARRAYS["init_1"])]
    opt = _build(case, params)
    for step in range(RECORD["steps"]):
        _set_grads(params, step)
        opt.step()
        for i, p in enumerate(params):
            expected = ARRAYS[f"{name}_param_{step}_{i}"]
            np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6, atol=1e-7,
                                       err_msg=f"{name} step {step} param {i}")
    sd = opt.state_dict()
    assert {str(i): sorted(s) for i, s in sd["state"].items()} == case["state_keys"]
    for index, state in sd["state"].items():
        for key, value in state.items():
            np.testing.assert_allclose(value.numpy(), ARRAYS[f"{name}_state_{index}_{key}"], rtol=1e-6, atol=1e-7)
            assert value.dtype == core.float32
    ours = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in sd["param_groups"]]
    assert ours == case["param_groups"]


def test_state_dict_round_trip_continues_identically():
    case = RECORD["cases"]["adam_amsgrad"]
    params = [_leaf(ARRAYS["init_0"]), _leaf(ARRAYS["init_1"])]
    opt = _build(case, params)
    for step in range(3):
        _set_grads(params, step)
        opt.step()
    saved = pickle.loads(pickle.dumps(opt.state_dict()))
    clones = [_leaf(p.detach().numpy().copy()) for p in params]
    resumed = _build(case, clones)
    resumed.load_state_dict(saved)
    assert resumed.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for step in range(3, RECORD["steps"]):
        _set_grads(params, step)
        _set_grads(clones, step)
        opt.step()
        resumed.step()
    for p, q in zip(params, clones):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    np.testing.assert_allclose(params[0].detach().numpy(), ARRAYS[f"adam_amsgrad_param_{RECORD['steps'] - 1}_0"],
                               rtol=1e-6, atol=1e-7)


def test_load_state_dict_copies_and_casts_to_param_dtype():
    p = _leaf(np.ones(3, dtype=np.float32))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = core.ones(3)
    opt.step()
    sd = opt.state_dict()
    q = core.ones(3, dtype=core.float64, requires_grad=True)
    other = optim.SGD([q], lr=0.5, momentum=0.9)
    other.load_state_dict(sd)
    buf = other.state[q]["momentum_buffer"]
    assert buf.dtype == core.float64
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["params"][0] is q
    buf._data[...] = 7.0
    assert opt.state[p]["momentum_buffer"]._data[0] == 1.0


def test_load_state_dict_checks_group_layout():
    a, b = core.zeros(2, requires_grad=True), core.zeros(2, requires_grad=True)
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)


def test_adagrad_state_exists_from_construction():
    p = core.zeros(3, requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    assert opt.state[p]["sum"].tolist() == [0.25] * 3
    assert opt.state[p]["step"].item() == 0.0


def test_param_groups_fill_defaults_and_add_group():
    a, b = core.zeros(2, requires_grad=True), core.zeros(3, requires_grad=True)
    opt = optim.Adam([a], lr=0.01)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    assert [g["params"] for g in opt.state_dict()["param_groups"]] == [[0], [1]]


def test_parameter_given_twice_is_an_error():
    a = core.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match="duplicate parameters"):
        optim.SGD([a, a], lr=0.1)


def test_bad_arguments():
    a = core.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([a], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([a], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([a * 2], lr=0.1)


def test_zero_grad_modes():
    p = core.zeros(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    p.grad = core.ones(2)
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_step_with_closure_and_real_backward():
    w = core.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    assert w.tolist() == [0.5, -1.0]  # w - 0.25 * 2w


def test_params_without_grad_are_skipped_and_version_bumps():
    a, b = core.ones(2, requires_grad=True), core.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = core.ones(2)
    version = a._version[0]
    opt.step()
    assert a._version[0] > version
    assert b.tolist() == [1.0, 1.0] and b not in opt.state


def test_named_parameters_are_accepted():
    a = core.zeros(2, requires_grad=True)
    opt = optim.AdamW([("weight", a)], lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight"]
    assert opt.param_groups[0]["params"][0] is a


def test_step_hooks_and_deepcopy():
    a = core.zeros(2, requires_grad=True)
    opt = optim.SGD([a], lr=0.1)
    calls = []
    handle = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(o))
    a.grad = core.ones(2)
    opt.step()
    handle.remove()
    opt.step()
    assert calls == [opt]
    clone = copy.deepcopy(opt)
    assert clone.param_groups[0]["lr"] == 0.1


ADAM_VARIANTS = {
    "adam": (optim.Adam, dict(lr=0.01)),
    "adam_coupled_decay": (optim.Adam, dict(lr=0.01, weight_decay=0.1)),
    "adamw": (optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    "adamw_amsgrad_maximize": (optim.AdamW, dict(lr=0.01, amsgrad=True, maximize=True)),
    "adam_lerp_other_branch": (optim.Adam, dict(lr=0.01, betas=(0.3, 0.99))),
}


@pytest.mark.parametrize("name", sorted(ADAM_VARIANTS))
def test_fused_adam_step_is_bitwise_the_multi_pass_update(name, monkeypatch):
    """Float32 CPU parameters take cpu_kernels.adam_step; the NumPy passes are the reference."""
    from mindnlp.core.backends import cpu_jit, cpu_kernels

    if cpu_jit.load() is None:
        pytest.skip("numba is not installed: the multi-pass update is the only one")
    cls, kwargs = ADAM_VARIANTS[name]
    rng = np.random.default_rng(0)
    init = rng.standard_normal((300, 257)).astype(np.float32)     # spans several worker blocks
    grads = [rng.standard_normal(init.shape).astype(np.float32) for _ in range(4)]

    def trajectory():
        param = _leaf(init)
        opt = cls([param], **kwargs)
        for grad in grads:
            param.grad = core.tensor(grad)
            opt.step()
        state = opt.state[param]
        return [param.detach().numpy()] + [state[k].numpy() for k in sorted(state) if k != "step"]

    original, fused_ran = cpu_kernels.adam_step, []
    monkeypatch.setattr(cpu_kernels, "adam_step", lambda *a: fused_ran.append(original(*a)) or fused_ran[-1])
    fused = trajectory()
    assert fused_ran == [True] * len(grads)
    monkeypatch.setattr(cpu_kernels, "adam_step", lambda *a: False)
    reference = trajectory()
    for got, want in zip(fused, reference):
        np.testing.assert_array_equal(got, want)
