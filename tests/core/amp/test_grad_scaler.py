"""GradScaler: scaling, unscaling, skipped steps on inf/nan, scale backoff and growth."""
import math
import pickle

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import optim
from mindnlp.core.amp import GradScaler


def _setup(**kwargs):
    w = core.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.5)
    return w, opt, GradScaler("cpu", **kwargs)


def test_scale_unscale_and_step():
    w, opt, scaler = _setup(init_scale=8.0)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == 40.0 and scaled.dtype == core.float32
    scaled.backward()
    assert w.grad.tolist() == [16.0, 32.0]
    scaler.step(opt)  # unscales to [2, 4] first
    assert w.tolist() == [0.0, 0.0]
    scaler.update()
    assert scaler.get_scale() == 8.0 and scaler.state_dict()["_growth_tracker"] == 1


def test_inf_gradient_skips_the_step_and_backs_off():
    w, opt, scaler = _setup(init_scale=2.0 ** 16, backoff_factor=0.25)
    w.grad = core.tensor([math.inf, 1.0])
    assert scaler.step(opt) is None
    assert w.tolist() == [1.0, 2.0]
    scaler.update()
    assert scaler.get_scale() == 2.0 ** 14
    w.grad = core.tensor([float("nan"), 1.0])
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == [1.0, 2.0] and scaler.get_scale() == 2.0 ** 12


def test_growth_after_interval_of_clean_steps():
    w, opt, scaler = _setup(init_scale=4.0, growth_interval=3, growth_factor=3.0)
    scales = []
    for _ in range(7):
        w.grad = core.tensor([0.0, 0.0])
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]


def test_explicit_unscale_then_step_and_call_order_errors():
    w, opt, scaler = _setup(init_scale=4.0)
    scaler.scale((w * 1.0).sum()).backward()
    scaler.unscale_(opt)
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    scaler.update()
    with pytest.raises(RuntimeError, match="No inf checks"):
        scaler.update()
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: None)


def test_fp16_gradients_refused_and_scaled_dtypes_follow_promotion():
    w = core.ones(2, dtype=core.float16, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    scaler = GradScaler("cpu", init_scale=2.0)
    # As in torch: the float32 0-dim scale keeps a float16 tensor float16 but widens a 0-dim loss.
    assert scaler.scale(w * 1.0).dtype == core.float16
    assert scaler.scale((w * 1.0).sum()).dtype == core.float32
    w.grad = core.ones(2, dtype=core.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        scaler.step(opt)


def test_state_dict_round_trip_and_disabled_scaler():
    w, opt, scaler = _setup(init_scale=16.0, growth_interval=5)
    w.grad = core.tensor([1.0, 1.0])
    scaler.step(opt)
    scaler.update()
    restored = GradScaler("cpu")
    restored.load_state_dict(scaler.state_dict())
    assert restored.state_dict() == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                                     "growth_interval": 5, "_growth_tracker": 1}
    assert pickle.loads(pickle.dumps(scaler)).get_scale() == 16.0
    scaler.update(new_scale=3.0)
    assert scaler.get_scale() == 3.0
    disabled = GradScaler("cpu", enabled=False)
    loss = core.tensor(2.0)
    assert disabled.scale(loss) is loss and disabled.get_scale() == 1.0 and disabled.state_dict() == {}
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        restored.load_state_dict({})


def test_cuda_scaler_without_cuda_disables_itself():
    if core.cuda.is_available():
        pytest.skip("CUDA is available here")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = GradScaler()
    assert not scaler.is_enabled()


def test_scale_nested_outputs():
    scaler = GradScaler("cpu", init_scale=2.0)
    a, b = core.tensor([1.0]), core.tensor([3.0])
    scaled = scaler.scale([a, (b,)])
    assert isinstance(scaled, list) and isinstance(scaled[1], tuple)
    np.testing.assert_array_equal(scaled[1][0].numpy(), [6.0])
