"""The meta device and the default device: `with core.device(...)`, set/get_default_device,
meta tensors (shape and dtype, no data), and building a module on meta then giving it memory.

Expected behaviour checked against torch 2.13."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.backends.meta_backend import MetaArray

NO_DATA = "Cannot copy out of meta tensor; no data!"


def meta(*shape, dtype=None):
    return core.empty(*shape, dtype=dtype, device="meta")


def test_device_context_sets_the_default_for_factories():
    assert core.get_default_device() == core.device("cpu")
    with core.device("meta") as entered:
        assert entered == core.device("meta")
        assert core.get_default_device() == core.device("meta")
        made = [core.tensor([1, 2]), core.ones(2), core.zeros(2, 3), core.empty(1), core.full((2,), 3.0),
                core.arange(3), core.linspace(0, 1, 4), core.eye(2), core.rand(2), core.randn(2),
                core.randint(0, 5, (3,)), core.randperm(4), core.as_tensor(np.ones(2)), core.scalar_tensor(1.0)]
        assert {t.device.type for t in made} == {"meta"}
        # *_like follow their input, from_numpy and explicit devices are kept, the legacy constructor is cpu.
        assert core.zeros_like(core.ones(2, device="cpu")).device.type == "cpu"
        assert core.from_numpy(np.ones(2)).device.type == "cpu"
        assert core.ones(2, device="cpu").device.type == "cpu"
        assert core.Tensor(2).device.type == "cpu"
        with core.device("cpu"):
            assert core.ones(2).device.type == "cpu"
        assert core.ones(2).device.type == "meta"
    assert core.ones(2).device.type == "cpu"


def test_set_default_device():
    core.set_default_device("meta")
    try:
        assert core.get_default_device() == core.device("meta")
        assert core.ones(2).is_meta
        with core.device("cpu"):
            assert not core.ones(2).is_meta
        assert core.ones(2).is_meta
    finally:
        core.set_default_device(None)
    assert core.get_default_device() == core.device("cpu") and not core.ones(2).is_meta


def test_modules_built_on_meta_have_parameters_without_data():
    with core.device("meta"):
        model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 3), nn.LayerNorm(3))
    assert {p.device for p in model.parameters()} == {core.device("meta")}
    assert all(isinstance(p._data, MetaArray) for p in model.parameters())
    weight = model[1].weight
    assert weight.shape == (3, 4) and weight.dtype == core.float32 and weight.requires_grad
    assert isinstance(weight, nn.Parameter)


def test_init_on_meta_draws_nothing():
    core.manual_seed(0)
    expected = core.rand(3)
    core.manual_seed(0)
    with core.device("meta"):
        nn.Linear(50, 40)                      # kaiming_uniform_ and uniform_ on meta tensors
        core.randn(1000)
    nn.init.normal_(meta(5, 5))
    meta(5).uniform_()
    assert core.rand(3).tolist() == expected.tolist()


def test_to_empty_gives_meta_modules_memory():
    with core.device("meta"):
        model = nn.Linear(4, 3)
    weight = model.weight
    assert model.to_empty(device="cpu") is model
    assert model.weight is weight and weight.device.type == "cpu" and weight.shape == (3, 4)
    assert weight.requires_grad and isinstance(weight, nn.Parameter)
    model.reset_parameters()
    out = model(core.ones(2, 4))
    assert out.shape == (2, 3) and np.isfinite(out.detach().numpy()).all()


def test_printing():
    assert repr(meta(2, 3)) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(meta(2, dtype=core.int64)) == f"tensor(..., device='meta', size=(2,), dtype={core.int64})"
    assert repr(core.empty((), device="meta", requires_grad=True)) == (
        "tensor(..., device='meta', size=(), requires_grad=True)")
    assert repr(nn.Parameter(meta(2))) == (
        "Parameter containing:\ntensor(..., device='meta', size=(2,), requires_grad=True)")


def test_ops_give_meta_results_with_torch_shapes_and_dtypes():
    x = meta(2, 3)
    cases = [
        (x + 1, (2, 3), core.float32), (x * meta(3), (2, 3), core.float32), (x @ meta(3, 5), (2, 5), core.float32),
        (meta(7, 1, 2, 3) @ meta(4, 3, 6), (7, 4, 2, 6), core.float32), (meta(3) @ meta(3, 4), (4,), core.float32),
        (x.sum(1), (2,), core.float32), (x.mean(), (), core.float32), (x.max(1).indices, (2,), core.int64),
        (x.t(), (3, 2), core.float32), (x.reshape(6), (6,), core.float32), (x[:, 1:], (2, 2), core.float32),
        (x[None, ..., 0], (1, 2), core.float32), (x > 0, (2, 3), core.bool), (x.to(core.bfloat16), (2, 3),
                                                                            core.bfloat16),
        (core.cat([x, x], 1), (2, 6), core.float32), (core.stack([x, x]), (2, 2, 3), core.float32),
        (nn.functional.softmax(x, -1), (2, 3), core.float32), (x.argmax(-1), (2,), core.int64),
        (core.where(x > 0, x, 0.0), (2, 3), core.float32), (x.exp().log1p().tanh(), (2, 3), core.float32),
        (meta(4, dtype=core.int64) // 2, (4,), core.int64), (core.gather(x, 1, meta(2, 2, dtype=core.int64)),
                                                              (2, 2), core.float32),
        (nn.functional.embedding(meta(5, dtype=core.int64), meta(10, 4)), (5, 4), core.float32),
        (x.sort(-1).values, (2, 3), core.float32), (core.topk(x, 2).indices, (2, 2), core.int64),
        (x + core.tensor(2.0), (2, 3), core.float32),    # a 0-dim cpu tensor joins any device
    ]
    for result, shape, dtype in cases:
        assert result.is_meta and result.shape == shape and result.dtype == dtype, (result, shape, dtype)


def test_autograd_on_meta():
    w = meta(3, 4).requires_grad_()
    loss = (meta(2, 3) @ w).relu().sum()
    assert loss.is_meta and loss.grad_fn is not None
    loss.backward()
    assert w.grad.is_meta and w.grad.shape == (3, 4)


def test_values_cannot_be_read():
    x = meta(2, 3)
    with pytest.raises(NotImplementedError, match=NO_DATA):
        x.cpu()
    with pytest.raises(NotImplementedError, match=NO_DATA):
        x.tolist()
    with pytest.raises(NotImplementedError, match=NO_DATA):
        np.asarray(x)
    with pytest.raises(NotImplementedError, match=NO_DATA):
        core.ones(2, 3).copy_(x)
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        x.numpy()
    for read in (lambda: x.sum().item(), lambda: bool(meta(()) > 0), lambda: float(x.sum())):
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
            read()
    with pytest.raises(NotImplementedError, match="needs the values of a meta tensor"):
        bool(x._data.sum())
    for value_dependent in (lambda: x.nonzero(), lambda: x[x > 0], lambda: x.unique()):
        with pytest.raises(NotImplementedError, match="needs the values of a meta tensor"):
            value_dependent()
    with pytest.raises(RuntimeError, match="same device"):
        x + core.ones(2, 3)


def test_writes_into_meta_tensors_check_shapes_and_store_nothing():
    x = meta(2, 3)
    assert x.copy_(core.ones(2, 3)) is x and x.is_meta
    x.fill_(1.0)
    x[0] = core.ones(3)
    x.add_(1)
    with pytest.raises(RuntimeError):
        x.copy_(core.ones(4, 3))
    with pytest.raises(ValueError):
        x._data[0] = np.ones(4)


def test_moving_to_meta_and_metadata():
    x = core.arange(6.0).reshape(2, 3).to("meta")
    assert x.is_meta and x.device == core.device("meta") and x.shape == (2, 3)
    assert x.data_ptr() == 0 and x.stride() == (3, 1) and x.is_contiguous()
    assert x.element_size() == 4 and x.numel() == 6
    assert core.tensor(x).is_meta and core.zeros_like(x).is_meta
    clone = x.clone()
    assert clone.is_meta and clone.shape == (2, 3)
    model = nn.Linear(2, 2).to("meta")
    assert model.weight.is_meta and isinstance(model.weight, nn.Parameter)


def test_views_share_their_storage():
    x = meta(4, 4)
    assert np.may_share_memory(x._data, x[1:]._data)
    assert np.may_share_memory(x._data, x.t()._data)
    assert not np.may_share_memory(x._data, x.clone()._data)
    assert not np.may_share_memory(x._data, meta(4, 4)._data)


def test_assert_close_compares_meta_tensors_by_attributes():
    core.testing.assert_close(meta(2), meta(2))
    with pytest.raises(AssertionError, match="'shape' do not match"):
        core.testing.assert_close(meta(2), meta(3))


def test_loading_a_state_dict_into_meta_parameters_keeps_them_meta():
    source = nn.Linear(3, 2)
    with core.device("meta"):
        target = nn.Linear(3, 2)
    target.load_state_dict(source.state_dict())
    assert target.weight.is_meta
    target.to_empty(device="cpu")
    target.load_state_dict(source.state_dict())
    assert target.weight.tolist() == source.weight.tolist()
