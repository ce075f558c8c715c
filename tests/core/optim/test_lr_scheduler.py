"""Learning-rate schedules against torch's recorded sequences (exact float equality)."""
import json
import os
import pickle

import pytest

from mindnlp import core
from mindnlp.core import optim
from mindnlp.core.optim import lr_scheduler as s

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "optim")
with open(os.path.join(FIXTURES, "schedules.json")) as f:
    RECORD = json.load(f)

LAMBDAS = {"0.95 ** epoch": lambda epoch: 0.95 ** epoch, "0.9": lambda epoch: 0.9}


def _optimizer(kind="SGD", groups=1):
    params = [core.zeros(2, requires_grad=True) for _ in range(groups)]
    param_groups = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)]
    if kind == "SGD":
        return optim.SGD(param_groups, lr=0.1, momentum=0.9)
    return optim.Adam(param_groups, lr=0.1)


def _momenta(opt):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]


def _build(name, opt):
    rec = RECORD[name]
    if name == "SequentialLR":
        return s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=3), s.ExponentialLR(opt, gamma=0.8),
                                    s.CosineAnnealingLR(opt, T_max=4)], milestones=[3, 7])
    if name == "ChainedScheduler":
        return s.ChainedScheduler([s.ConstantLR(opt, factor=0.5, total_iters=4), s.ExponentialLR(opt, gamma=0.9)])
    kwargs = dict(rec["kwargs"])
    if "lr_lambda" in kwargs:
        kwargs["lr_lambda"] = LAMBDAS[kwargs["lr_lambda"]]
    return getattr(s, rec["scheduler"])(opt, **kwargs)


def _run(name, sched, opt, start, stop):
    rec = RECORD[name]
    for step in range(start, stop):
        opt.step()
        if rec.get("metrics"):
            sched.step(rec["metrics"][step])
        else:
            sched.step()
        assert sched.get_last_lr() == rec["lrs"][step + 1], f"{name} step {step + 1}"
        assert [g["lr"] for g in opt.param_groups] == rec["lrs"][step + 1]
        assert _momenta(opt) == rec["momenta"][step + 1], f"{name} momentum at step {step + 1}"


@pytest.mark.parametrize("name", sorted(RECORD))
def test_schedule_matches_torch(name):
    rec = RECORD[name]
    opt = _optimizer(rec["optimizer"], rec["groups"])
    sched = _build(name, opt)
    assert sched.get_last_lr() == rec["lrs"][0]
    assert _momenta(opt) == rec["momenta"][0]
    _run(name, sched, opt, 0, rec["steps"])


@pytest.mark.parametrize("name", ["CosineAnnealingLR", "OneCycleLR_linear_three_phase", "SequentialLR",
                                  "ReduceLROnPlateau_max_abs", "LambdaLR", "CosineAnnealingWarmRestarts"])
def test_state_dict_resume_continues_the_sequence(name):
    rec = RECORD[name]
    opt = _optimizer(rec["optimizer"], rec["groups"])
    sched = _build(name, opt)
    half = rec["steps"] // 2
    _run(name, sched, opt, 0, half)
    saved_opt = pickle.loads(pickle.dumps(opt.state_dict()))
    saved_sched = pickle.loads(pickle.dumps(sched.state_dict()))
    opt2 = _optimizer(rec["optimizer"], rec["groups"])
    sched2 = _build(name, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved_sched)
    _run(name, sched2, opt2, half, rec["steps"])


def test_closed_form_with_explicit_epoch():
    opt = _optimizer()
    sched = s.StepLR(opt, step_size=2, gamma=0.5)
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)
    assert sched.get_last_lr() == [0.1 * 0.5 ** 2]


def test_onecycle_overrun_and_argument_errors():
    opt = _optimizer()
    sched = s.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        sched.step()
    with pytest.raises(ValueError, match="Tried to step 4 times"):
        sched.step()
    with pytest.raises(ValueError, match="total_steps OR"):
        s.OneCycleLR(opt, max_lr=1.0)
    with pytest.raises(ValueError, match="cycle_momentum"):
        s.OneCycleLR(optim.Adagrad([core.zeros(1, requires_grad=True)]), max_lr=1.0, total_steps=3)


def test_scheduler_argument_errors():
    opt = _optimizer()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        s.StepLR(object(), step_size=1)
    with pytest.raises(KeyError, match="initial_lr"):
        s.StepLR(opt, step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        s.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        s.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        s.ChainedScheduler([s.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        s.SequentialLR(opt, [s.StepLR(opt, 1)], milestones=[2])
