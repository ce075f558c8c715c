"""Adafactor and AdafactorSchedule against HF transformers' recorded runs
(tests/fixtures/trainer/adafactor.*, made by tests/fixtures/make_adafactor_label_smoother_fixtures.py),
and the Trainer's `optim="adafactor"`.

Tolerance: float32 parameters and states must agree to rtol=1e-6, atol=1e-7 (a few float32 ulps,
the core optimizer tests' bound). The arithmetic is HF's op for op; what differs is only the
summation order of the reductions (the parameter norm for RMS, the row/column means), which moves
a result by an ulp or two. The update is normalized by its RMS every step, so such differences do
not grow over the run: the largest error seen is 0.15 of this budget. bfloat16 parameters are
rounded to bfloat16 after a float32 update, so a one-ulp float32 difference could flip that
rounding: they are compared to one bfloat16 ulp (rtol=2**-8).
"""
import io
import json
import os
import pickle

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.optimization import (
    Adafactor,
    AdafactorSchedule,
    get_adafactor_schedule,
    get_linear_schedule_with_warmup,
)
from mindnlp.transformers.trainer import Trainer
from mindnlp.transformers.training_args import OptimizerNames, TrainingArguments

from .models import TokenClassifier, parity_data

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "trainer")
with open(os.path.join(FIXTURES, "adafactor.json")) as f:
    RECORD = json.load(f)
ARRAYS = np.load(os.path.join(FIXTURES, "adafactor.npz"))
SHAPES = [tuple(s) for s in RECORD["shapes"]]
OFFSETS = np.cumsum([0] + [int(np.prod(s)) for s in SHAPES])
RTOL, ATOL = 1e-6, 1e-7


def split(flat):
    """A fixture vector cut back into the parameters' shapes."""
    return [flat[OFFSETS[i]:OFFSETS[i + 1]].reshape(shape) for i, shape in enumerate(SHAPES)]


def flat(params):
    return np.concatenate([p.detach().float().numpy().ravel() for p in params])


def options(kwargs):
    kwargs = dict(kwargs)
    if "eps" in kwargs:
        kwargs["eps"] = tuple(kwargs["eps"])
    return kwargs


def make_params(dtype="float32"):
    return [core.tensor(a, dtype=getattr(core, dtype), requires_grad=True) for a in split(ARRAYS["init"])]


def make_optimizer(params, kwargs, overrides=None):
    """The fixture's layout: the 2-D and 3-D parameters in one group, the bias in a second."""
    return Adafactor([{"params": params[:2]}, {"params": params[2:], **options(overrides or {})}], **options(kwargs))


def set_grads(params, step):
    for p, g in zip(params, split(ARRAYS["grads"][step])):
        p.grad = core.tensor(g, dtype=p.dtype)


def state_vector(optimizer, layout):
    sd = optimizer.state_dict()
    return np.concatenate([sd["state"][index][key].float().numpy().ravel() for index, key, _ in layout])


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_trajectory_and_state_match_hf(name):
    case = RECORD["cases"][name]
    params = make_params(case["dtype"])
    optimizer = make_optimizer(params, case["kwargs"], case["overrides"])
    rtol = 2 ** -8 if case["dtype"] == "bfloat16" else RTOL
    for step in range(RECORD["steps"]):
        set_grads(params, step)
        optimizer.step()
        np.testing.assert_allclose(flat(params), ARRAYS[f"{name}_params"][step], rtol=rtol, atol=ATOL,
                                   err_msg=f"{name} step {step}")
    assert all(p.dtype == getattr(core, case["dtype"]) for p in params)
    sd = optimizer.state_dict()
    assert {str(i): sorted(s) for i, s in sd["state"].items()} == case["state_keys"]
    assert {str(i): s["step"] for i, s in sd["state"].items()} == case["state_steps"]
    for index, key, shape in case["state_layout"]:
        value = sd["state"][index][key]
        assert tuple(value.shape) == tuple(shape) and value.dtype == core.float32, (index, key)
    np.testing.assert_allclose(state_vector(optimizer, case["state_layout"]), ARRAYS[f"{name}_state"],
                               rtol=RTOL, atol=ATOL)
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in sd["param_groups"]]
    assert groups == case["param_groups"]


def test_factored_state_holds_row_and_column_moments_only():
    params = make_params()
    optimizer = make_optimizer(params, {})
    set_grads(params, 0)
    optimizer.step()
    weight, stacked, bias = (optimizer.state[p] for p in params)
    assert weight["exp_avg_sq_row"].shape == (3,) and weight["exp_avg_sq_col"].shape == (4,)
    assert stacked["exp_avg_sq_row"].shape == (2, 3) and stacked["exp_avg_sq_col"].shape == (2, 4)
    assert "exp_avg_sq" not in weight and "exp_avg" not in weight
    assert bias["exp_avg_sq"].shape == (5,) and "exp_avg_sq_row" not in bias


def test_argument_errors():
    p = core.zeros(2, 2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Cannot combine manual `lr` and `relative_step=True` options"):
        Adafactor([p], lr=1e-3)
    with pytest.raises(ValueError, match=r"`warmup_init=True` requires `relative_step=True`"):
        Adafactor([p], lr=1e-3, relative_step=False, warmup_init=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        Adafactor([])
    defaults = Adafactor([p]).defaults
    assert defaults == {"lr": None, "eps": (1e-30, 1e-3), "clip_threshold": 1.0, "decay_rate": -0.8, "beta1": None,
                        "weight_decay": 0.0, "scale_parameter": True, "relative_step": True, "warmup_init": False}


def run(optimizer, params, steps):
    for step in steps:
        set_grads(params, step)
        optimizer.step()


def test_state_dict_round_trip_continues_identically():
    case = RECORD["cases"]["all_options"]
    params = make_params()
    optimizer = make_optimizer(params, case["kwargs"], case["overrides"])
    run(optimizer, params, range(3))
    buffer = io.BytesIO()
    core.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    clones = [core.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
    resumed = make_optimizer(clones, {"lr": 1.0, "relative_step": False})
    resumed.load_state_dict(core.load(buffer))
    assert resumed.param_groups[0]["lr"] == case["kwargs"]["lr"] and resumed.param_groups[0]["beta1"] == 0.8
    run(optimizer, params, range(3, RECORD["steps"]))
    run(resumed, clones, range(3, RECORD["steps"]))
    np.testing.assert_array_equal(flat(clones), flat(params))
    np.testing.assert_allclose(flat(clones), ARRAYS["all_options_params"][-1], rtol=RTOL, atol=ATOL)


def test_state_dict_saved_by_hf_resumes_on_hf_trajectory():
    resume = RECORD["resume"]
    case = RECORD["cases"][resume["case"]]
    saved = core.load(os.path.join(FIXTURES, "adafactor_state.pt"))
    assert saved["state"][0]["step"] == resume["after"]
    params = [core.tensor(a, requires_grad=True) for a in split(ARRAYS[f"{resume['case']}_params"][resume["after"] - 1])]
    optimizer = make_optimizer(params, case["kwargs"], case["overrides"])
    optimizer.load_state_dict(saved)
    for step in range(resume["after"], RECORD["steps"]):
        set_grads(params, step)
        optimizer.step()
        np.testing.assert_allclose(flat(params), ARRAYS[f"{resume['case']}_params"][step], rtol=RTOL, atol=ATOL)


def test_state_dict_pickles_and_loads_into_half_precision_parameters():
    params = make_params("bfloat16")
    optimizer = make_optimizer(params, {"beta1": 0.9})
    run(optimizer, params, range(2))
    clones = [core.tensor(p.detach().float().numpy(), dtype=core.bfloat16, requires_grad=True) for p in params]
    resumed = make_optimizer(clones, {"beta1": 0.9})
    resumed.load_state_dict(pickle.loads(pickle.dumps(optimizer.state_dict())))
    run(resumed, clones, range(2, 4))
    # Loading casts the state to the parameters' dtype (torch's rule); the step works in float32 again.
    assert resumed.state[clones[0]]["exp_avg"].dtype == core.float32
    assert all(p.dtype == core.bfloat16 for p in clones)
    run(optimizer, params, range(2, 4))
    np.testing.assert_allclose(flat(clones), flat(params), rtol=2 ** -7)


@pytest.mark.parametrize("name", sorted(RECORD["schedules"]))
def test_adafactor_schedule_reports_hf_rates(name):
    case = RECORD["schedules"][name]
    params = make_params()
    optimizer = make_optimizer(params, case["kwargs"])
    scheduler = AdafactorSchedule(optimizer, case["initial_lr"])
    assert ["initial_lr" in g for g in optimizer.param_groups] == case["group_has_initial_lr"]
    lrs = [list(scheduler.get_last_lr())]
    for step in range(RECORD["steps"]):
        set_grads(params, step)
        optimizer.step()
        scheduler.step()
        lrs.append(list(scheduler.get_last_lr()))
    np.testing.assert_allclose(lrs, case["lrs"], rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(flat(params), ARRAYS[f"schedule_{name}_params"][-1], rtol=RTOL, atol=ATOL)


def test_get_adafactor_schedule_and_its_state_dict():
    params = make_params()
    optimizer = make_optimizer(params, {})
    scheduler = get_adafactor_schedule(optimizer, initial_lr=0.25)
    assert isinstance(scheduler, AdafactorSchedule) and scheduler.get_last_lr() == [0.25, 0.25]
    run(optimizer, params, range(1))
    scheduler.step()
    # Step 1, relative step 1e-2 scaled by each group's first parameter RMS (before the update).
    init = split(ARRAYS["init"])
    expected = [1e-2 * float(np.sqrt(np.mean(init[0].astype(np.float64) ** 2))),
                1e-2 * float(np.sqrt(np.mean(init[2].astype(np.float64) ** 2)))]
    np.testing.assert_allclose(scheduler.get_last_lr(), expected, rtol=1e-6)
    state = pickle.loads(pickle.dumps(scheduler.state_dict()))
    assert state["last_epoch"] == 1 and state["base_lrs"] == [0.25, 0.25]


def make_args(output_dir, **kwargs):
    defaults = {"per_device_train_batch_size": 8, "logging_steps": 1, "save_strategy": "no", "disable_tqdm": True,
                "report_to": "none", "train_sampling_strategy": "sequential"}
    return TrainingArguments(str(output_dir), **{**defaults, **kwargs})


def test_optim_adafactor_is_an_optimizer_name(tmp_path):
    assert TrainingArguments(str(tmp_path), optim="adafactor").optim is OptimizerNames.ADAFACTOR
    cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(TrainingArguments(str(tmp_path), optim="adafactor",
                                                                         learning_rate=3e-4))
    assert cls is Adafactor and kwargs == {"lr": 3e-4, "scale_parameter": False, "relative_step": False}


def test_trainer_with_adafactor_follows_a_hand_written_loop(tmp_path, capsys):
    """optim="adafactor": HF's external-lr Adafactor over the decay / no-decay groups, stepped with the
    linear schedule; the weights after the run equal a plain loop doing the same."""
    data = parity_data(32)
    core.manual_seed(0)
    model = TokenClassifier()
    reference = TokenClassifier()
    reference.load_state_dict(model.state_dict())
    initial = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    args = make_args(tmp_path, optim="adafactor", learning_rate=0.05, weight_decay=0.01, max_steps=4,
                     max_grad_norm=0)
    trainer = Trainer(model, args, train_dataset=data)
    trainer.train()

    optimizer = trainer.optimizer
    assert isinstance(optimizer, Adafactor)
    assert [(g["lr"] is not None, g["relative_step"], g["scale_parameter"], g["weight_decay"])
            for g in optimizer.param_groups] == [(True, False, False, 0.01), (True, False, False, 0.0)]
    assert all(s["step"] == 4 for s in optimizer.state.values())
    rates = [e["learning_rate"] for e in trainer.state.log_history if "learning_rate" in e]
    np.testing.assert_allclose(rates, [0.05 * (4 - s) / 4 for s in range(4)], rtol=1e-12)

    names = {id(p): n for n, p in model.named_parameters()}
    by_name = dict(reference.named_parameters())
    groups = [{"params": [by_name[names[id(p)]] for p in g["params"]], "weight_decay": g["weight_decay"]}
              for g in optimizer.param_groups]
    manual = Adafactor(groups, lr=0.05, scale_parameter=False, relative_step=False)
    schedule = get_linear_schedule_with_warmup(manual, 0, 4)
    batches = trainer.get_train_dataloader()
    for _, batch in zip(range(4), batches):
        loss = reference(**batch)["loss"]
        loss.backward()
        manual.step()
        schedule.step()
        reference.zero_grad()
    for name, param in model.named_parameters():
        assert np.abs(param.detach().numpy() - initial[name]).max() > 1e-3, name
        np.testing.assert_allclose(param.detach().numpy(), by_name[name].detach().numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=name)
