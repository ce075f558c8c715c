"""The core on a CUDA GPU (the CuPy backend): torch's recorded results, gradients, layers and
training, with every op's inputs on the GPU. Skipped where CuPy sees no GPU; CI has none.

The op and layer cases are the same torch fixtures the CPU tests replay, so a CUDA result is held
to torch's value, not to our CPU's.
"""
import io
import warnings

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn import functional as F

from . import extra_fixtures, torch_fixtures
from .nn import functional_fixtures

pytestmark = pytest.mark.skipif(not core.cuda.is_available(), reason="needs a CUDA GPU visible to CuPy")

CUDA = "cuda"
OP_GROUPS = ("elementwise", "shape", "linalg", "indexing", "reduction")
EXTRA_GROUPS = ("reduction_extra", "sorting", "misc", "linalg_extra")
# The functional cases whose torch gradient is NaN where ours is the finite limit (see test_functional_loss).
NAN_GRAD_OPS = ("kl_div", "poisson_nll_loss")


@pytest.mark.parametrize("name", [n for g in OP_GROUPS for n in torch_fixtures.op_case_names(g)])
def test_op_matches_torch(name):
    torch_fixtures.check_op_case(name, rtol=1e-5, atol=1e-5, device=CUDA)


@pytest.mark.parametrize("name", [n for g in EXTRA_GROUPS for n in extra_fixtures.case_names(g)])
def test_extra_op_matches_torch(name):
    extra_fixtures.check_case(name, rtol=1e-5, atol=1e-5, device=CUDA)


@pytest.mark.parametrize("name", [n for g in EXTRA_GROUPS for n in extra_fixtures.grad_case_names(g)])
def test_extra_op_gradient_matches_torch(name):
    extra_fixtures.check_case_grad(name, device=CUDA)


def _functional_cases():
    # modules.npz holds MultiheadAttention module cases, not functional calls
    ops = sorted(p.stem for p in functional_fixtures.FIXTURES.glob("*.npz") if p.stem != "modules")
    return [(op, case) for op in ops for case in functional_fixtures.case_names(op)]


@pytest.mark.parametrize("op,case", _functional_cases())
def test_functional_matches_torch(op, case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        functional_fixtures.check_case(op, case, atol=1e-5, rtol=1e-4, skip_nan_grads=op in NAN_GRAD_OPS,
                                       device=CUDA)


def _double(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, device=CUDA, requires_grad=True)


@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: a @ b, [(3, 4), (4, 5)]),
    (lambda a: F.softmax(a, dim=-1), [(3, 5)]),
    (lambda a: F.gelu(a), [(4, 3)]),
    (lambda a, w, b: F.layer_norm(a, (4,), w, b), [(3, 4), (4,), (4,)]),
    (lambda a, w: F.conv2d(a, w, padding=1), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [(1, 2, 4, 3)] * 3),
    (lambda a: a.logsumexp(-1).tanh().sum(), [(3, 4)]),
], ids=["matmul", "softmax", "gelu", "layer_norm", "conv2d", "sdpa_causal", "logsumexp_tanh"])
def test_gradients_and_second_derivatives_on_cuda(fn, shapes):
    inputs = tuple(_double(*s, seed=i) for i, s in enumerate(shapes))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_tensor_moves_between_devices_and_keeps_values():
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = core.tensor(host, device=CUDA)
    assert t.device == core.device("cuda", 0) and t.is_cuda
    assert type(t._data).__module__.startswith("cupy")
    np.testing.assert_array_equal(t.cpu().numpy(), host)
    assert t.to("cpu").device.type == "cpu" and core.ones(2).cuda().device.type == "cuda"
    with pytest.raises(TypeError, match="cuda"):
        t.numpy()
    with pytest.raises(RuntimeError, match="device"):
        core.ones(3, 4) + t


def test_factories_follow_the_default_device():
    with core.device(CUDA):
        assert core.zeros(2).is_cuda and core.arange(3).is_cuda and core.randn(2, 2).is_cuda
    assert not core.zeros(2).is_cuda
    assert core.empty(2, device=CUDA).is_cuda and core.full((2,), 3.0, device="cuda:0").is_cuda


def test_half_precision_matmul_on_cuda():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 96), dtype=np.float32), rng.standard_normal((96, 32), dtype=np.float32)
    for dtype, tol in ((core.float16, 2e-2), (core.bfloat16, 1e-1)):
        out = core.tensor(a, dtype=dtype, device=CUDA) @ core.tensor(b, dtype=dtype, device=CUDA)
        assert out.dtype == dtype and out.is_cuda
        np.testing.assert_allclose(out.float().cpu().numpy(), a @ b, rtol=tol, atol=tol * 4)


def _same_model_on(device, factory, seed=0):
    core.manual_seed(seed)
    return factory().to(device)


def _forward_backward(model, inputs):
    out = model(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    out.float().pow(2).mean().backward()
    return out.detach().cpu().numpy(), {n: p.grad.cpu().numpy() for n, p in model.named_parameters()}


@pytest.mark.parametrize("factory,shape", [
    (lambda: nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)), (5, 8)),
    (lambda: nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(), nn.MaxPool2d(2),
                           nn.Conv2d(6, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten()), (2, 3, 10, 10)),
    (lambda: nn.LSTM(6, 8, num_layers=2, bidirectional=True, batch_first=True), (3, 5, 6)),
    (lambda: nn.GRU(6, 8, batch_first=True), (3, 5, 6)),
    (lambda: nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True), (2, 7, 16)),
    (lambda: nn.Conv3d(2, 3, 3, padding=1), (1, 2, 5, 5, 5)),
], ids=["mlp", "cnn", "lstm", "gru", "transformer_layer", "conv3d"])
def test_layers_give_the_cpu_results_on_cuda(factory, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    cpu_out, cpu_grads = _forward_backward(_same_model_on("cpu", factory), (core.tensor(x),))
    gpu_out, gpu_grads = _forward_backward(_same_model_on(CUDA, factory), (core.tensor(x, device=CUDA),))
    np.testing.assert_allclose(gpu_out, cpu_out, rtol=1e-4, atol=1e-5)
    for name, grad in cpu_grads.items():
        np.testing.assert_allclose(gpu_grads[name], grad, rtol=1e-3, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_training_steps_match_the_cpu(optimizer):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((16, 8)).astype(np.float32), rng.integers(0, 3, 16)
    results = []
    for device in ("cpu", CUDA):
        model = _same_model_on(device, lambda: nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 3)))
        opt = getattr(core.optim, optimizer)(model.parameters(), lr=0.05, **({"momentum": 0.9} if optimizer == "SGD" else {}))
        for _ in range(5):
            opt.zero_grad()
            loss = F.cross_entropy(model(core.tensor(x, device=device)), core.tensor(y, device=device))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        results.append([p.detach().cpu().numpy() for p in model.parameters()])
    for cpu_param, gpu_param in zip(*results):
        np.testing.assert_allclose(gpu_param, cpu_param, rtol=1e-4, atol=1e-5)


def test_autocast_float16_on_cuda_and_grad_scaler():
    model = _same_model_on(CUDA, lambda: nn.Linear(8, 4))
    x = core.randn(5, 8, device=CUDA)
    with core.autocast("cuda", dtype=core.float16):
        out = model(x)
    assert out.dtype == core.float16 and out.is_cuda
    scaler = core.amp.GradScaler("cuda")
    opt = core.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().cpu().numpy()
    scaler.scale(out.float().pow(2).mean()).backward()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(model.weight.detach().cpu().numpy(), before)


def test_save_on_cuda_and_load_on_either_device():
    state = {"w": core.arange(6, dtype=core.float32, device=CUDA).reshape(2, 3)}
    buffer = io.BytesIO()
    core.save(state, buffer)
    buffer.seek(0)
    on_cpu = core.load(buffer, map_location="cpu")
    assert on_cpu["w"].device.type == "cpu"
    np.testing.assert_array_equal(on_cpu["w"].numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    buffer.seek(0)
    assert core.load(buffer, map_location="cuda")["w"].is_cuda


def test_random_streams_are_reproducible_on_cuda():
    core.manual_seed(7)
    a = core.randn(4, device=CUDA)
    core.manual_seed(7)
    b = core.randn(4, device=CUDA)
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    drop = F.dropout(core.ones(1000, device=CUDA), p=0.5, training=True)
    kept = float((drop != 0).float().mean().item())
    assert 0.4 < kept < 0.6 and drop.is_cuda


def test_compiled_function_matches_eager_on_cuda():
    def f(x, w):
        return F.gelu(x @ w).softmax(-1).sum(0)

    x, w = core.randn(4, 8, device=CUDA), core.randn(8, 5, device=CUDA)
    compiled = core.compile(f)
    for _ in range(2):
        np.testing.assert_allclose(compiled(x, w).cpu().numpy(), f(x, w).cpu().numpy(), rtol=1e-5, atol=1e-6)
