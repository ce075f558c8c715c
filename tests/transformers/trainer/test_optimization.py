"""lr schedules against the curves HF's get_scheduler produced (tests/fixtures/trainer/schedules.json)."""
import io
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers.optimization import (get_constant_schedule_with_warmup, get_cosine_schedule_with_warmup,
                                               get_linear_schedule_with_warmup, get_polynomial_decay_schedule_with_warmup,
                                               get_scheduler)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "trainer", "schedules.json")
with open(FIXTURES) as file:
    SCHEDULES = json.load(file)


def fresh_optimizer(lr=SCHEDULES["lr"]):
    return core.optim.AdamW([core.nn.Parameter(core.zeros(2))], lr=lr)


def lr_curve(scheduler, optimizer, steps):
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(steps):
        optimizer.step()
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    return lrs


@pytest.mark.parametrize("case", sorted(SCHEDULES["cases"]))
def test_schedule_matches_hf(case):
    spec = SCHEDULES["cases"][case]
    optimizer = fresh_optimizer()
    scheduler = get_scheduler(spec["type"], optimizer, num_warmup_steps=spec["warmup"],
                              num_training_steps=SCHEDULES["total_steps"], scheduler_specific_kwargs=spec["kwargs"])
    got = lr_curve(scheduler, optimizer, len(spec["lrs"]) - 1)
    np.testing.assert_allclose(got, spec["lrs"], rtol=1e-12, atol=1e-15)


def test_named_helpers_match_get_scheduler():
    for helper, name, kwargs in [
        (get_linear_schedule_with_warmup, "linear", dict(num_warmup_steps=3, num_training_steps=10)),
        (get_cosine_schedule_with_warmup, "cosine", dict(num_warmup_steps=3, num_training_steps=10)),
        (get_constant_schedule_with_warmup, "constant_with_warmup", dict(num_warmup_steps=3)),
        (get_polynomial_decay_schedule_with_warmup, "polynomial", dict(num_warmup_steps=3, num_training_steps=10)),
    ]:
        a, b = fresh_optimizer(), fresh_optimizer()
        by_name = get_scheduler(name, b, num_warmup_steps=kwargs["num_warmup_steps"],
                                num_training_steps=kwargs.get("num_training_steps"))
        assert lr_curve(helper(a, **kwargs), a, 12) == lr_curve(by_name, b, 12)


def test_scheduler_state_survives_a_checkpoint_round_trip():
    optimizer = fresh_optimizer()
    scheduler = get_linear_schedule_with_warmup(optimizer, 2, 10)
    lr_curve(scheduler, optimizer, 4)
    buffer = io.BytesIO()
    core.save(scheduler.state_dict(), buffer)
    buffer.seek(0)
    restored_optimizer = fresh_optimizer()
    restored = get_linear_schedule_with_warmup(restored_optimizer, 2, 10)
    restored.load_state_dict(core.load(buffer))
    assert lr_curve(restored, restored_optimizer, 3) == lr_curve(scheduler, optimizer, 3)


def test_get_scheduler_errors():
    with pytest.raises(ValueError, match="not a valid SchedulerType"):
        get_scheduler("triangular", fresh_optimizer())
    with pytest.raises(ValueError, match="requires `num_warmup_steps`"):
        get_scheduler("linear", fresh_optimizer(), num_training_steps=10)
    with pytest.raises(ValueError, match="requires `num_training_steps`"):
        get_scheduler("cosine", fresh_optimizer(), num_warmup_steps=1)
    with pytest.raises(ValueError, match="lr_end"):
        get_polynomial_decay_schedule_with_warmup(fresh_optimizer(lr=1e-8), 1, 10)
    with pytest.raises(ValueError, match="min_lr"):
        get_scheduler("cosine_with_min_lr", fresh_optimizer(), num_warmup_steps=1, num_training_steps=10)


def test_reduce_on_plateau_is_the_core_scheduler():
    scheduler = get_scheduler("reduce_lr_on_plateau", fresh_optimizer(), scheduler_specific_kwargs={"patience": 0})
    assert isinstance(scheduler, core.optim.lr_scheduler.ReduceLROnPlateau)
