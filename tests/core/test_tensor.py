"""Tensor creation, attributes and methods, repr (vs torch), randomness, devices, torch's errors."""
import math

import numpy as np
import pytest

from mindnlp import core
from tests.core.torch_fixtures import error_cases, load_json

REPRS = load_json("repr.json")


# --- creation -----------------------------------------------------------------------------


def test_tensor_copies_and_as_tensor_from_numpy_share():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    copied, shared, from_np = core.tensor(a), core.as_tensor(a), core.from_numpy(a)
    a[0, 0] = 100.0
    assert copied[0, 0].item() == 0.0
    assert shared[0, 0].item() == 100.0 and from_np[0, 0].item() == 100.0
    from_np[1, 1] = -5.0
    assert a[1, 1] == -5.0
    assert core.as_tensor(a, dtype=core.float64)[0, 0].item() == 100.0
    assert core.as_tensor(shared) is shared
    assert core.tensor(2.5).shape == () and core.tensor([]).shape == (0,)


def test_tensor_from_nested_tensors_and_requires_grad():
    t = core.tensor([core.tensor([1.0, 2.0]), core.tensor([3.0, 4.0])])
    assert t.shape == (2, 2) and t.dtype is core.float32
    w = core.tensor([1.0], requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_filled_creation_and_likes():
    assert core.zeros(2, 3).tolist() == [[0.0] * 3] * 2
    assert core.ones((2,), dtype=core.int32).tolist() == [1, 1]
    assert core.full((2, 2), 7).tolist() == [[7, 7], [7, 7]]
    assert core.empty(3, 4).shape == (3, 4)
    # torch also takes the shape as a keyword
    assert core.ones(size=(2, 1), dtype=core.int64).tolist() == [[1], [1]]
    assert core.zeros(size=[3]).shape == (3,) and core.empty(size=(1, 2)).shape == (1, 2)
    with pytest.raises(TypeError, match="not both"):
        core.ones(2, size=(2,))
    x = core.ones(2, 3, dtype=core.float16)
    for like in (core.zeros_like(x), core.ones_like(x), core.empty_like(x), core.full_like(x, 2)):
        assert like.shape == (2, 3) and like.dtype is core.float16
    assert core.zeros_like(x, dtype=core.int64).dtype is core.int64
    assert core.full_like(x, 2.5).tolist()[0] == [2.5] * 3


def test_ranges():
    assert core.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert core.arange(1, 10, 3).tolist() == [1, 4, 7]
    assert core.arange(5, 0, -2).tolist() == [5, 3, 1]
    np.testing.assert_allclose(core.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    assert core.arange(0, 1, 0.1).shape == (10,)
    np.testing.assert_allclose(core.linspace(0, 1, 5).numpy(), [0, 0.25, 0.5, 0.75, 1.0])
    assert core.linspace(-1, 1, 1).tolist() == [-1.0]


def test_eye_tril_triu():
    np.testing.assert_array_equal(core.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(core.eye(2, 3).numpy(), np.eye(2, 3))
    m = core.ones(3, 3)
    np.testing.assert_array_equal(core.tril(m).numpy(), np.tril(np.ones((3, 3))))
    np.testing.assert_array_equal(core.triu(m, 1).numpy(), np.triu(np.ones((3, 3)), 1))


# --- attributes and methods -----------------------------------------------------------------


def test_attributes():
    x = core.ones(2, 3, 4)
    assert x.shape == (2, 3, 4) and x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4
    assert x.dtype is core.float32 and x.device == core.device("cpu") and x.ndim == 3 and x.dim() == 3
    assert x.numel() == 24 and x.stride() == (12, 4, 1) and x.stride(0) == 12
    assert x.transpose(0, 2).stride() == (1, 4, 12)
    assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
    assert x.transpose(0, 1).contiguous().is_contiguous()
    assert x.is_floating_point() and not core.ones(2, dtype=core.int8).is_floating_point()


def test_item_tolist_numpy():
    assert core.tensor(2.5).item() == 2.5 and isinstance(core.tensor(3).item(), int)
    assert core.tensor([[1, 2]]).tolist() == [[1, 2]]
    assert core.tensor([0.5], dtype=core.bfloat16).tolist() == [0.5]
    arr = core.ones(2).numpy()
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float32
    assert core.ones(2, requires_grad=True).detach().numpy().tolist() == [1.0, 1.0]
    assert float(core.tensor([1.5])) == 1.5 and int(core.tensor(7)) == 7


def test_conversions():
    x = core.tensor([1.7, -2.2])
    assert x.to(core.float64).dtype is core.float64
    assert x.double().dtype is core.float64 and x.half().dtype is core.float16
    assert x.bfloat16().dtype is core.bfloat16 and x.float() is x
    assert x.long().tolist() == [1, -2] and x.int().dtype is core.int32 and x.bool().tolist() == [True, True]
    assert x.to("cpu") is x and x.to(x) is x
    y = x.to(core.float32, copy=True)
    assert y is not x and y.data_ptr() != x.data_ptr()
    assert x.to(core.ones(1, dtype=core.int16)).dtype is core.int16
    assert x.type_as(core.ones(1, dtype=core.float64)).dtype is core.float64


def test_clone_detach_requires_grad_data():
    x = core.tensor([1.0, 2.0], requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and c.data_ptr() != x.data_ptr()
    d = x.detach()
    assert not d.requires_grad and d.data_ptr() == x.data_ptr() and d._version is x._version
    y = x * 2
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    data = y.data
    assert not data.requires_grad and data.grad_fn is None
    z = core.zeros(2).requires_grad_()
    assert z.requires_grad and z.is_leaf
    z.requires_grad_(False)
    assert not z.requires_grad


@pytest.mark.parametrize("expr", sorted(REPRS))
def test_repr_matches_torch(expr):
    # dtype names print with the module's name: `dtype=torch.int32` in torch is `dtype=core.int32` here.
    assert repr(eval(expr, {"torch": core})) == REPRS[expr].replace("torch.", "core.")


# --- randomness ---------------------------------------------------------------------------


def test_manual_seed_reproduces():
    core.manual_seed(123)
    first = (core.rand(5), core.randn(2, 3), core.randint(0, 10, (4,)), core.randperm(6))
    core.manual_seed(123)
    second = (core.rand(5), core.randn(2, 3), core.randint(0, 10, (4,)), core.randperm(6))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(core.rand(5).numpy(), first[0].numpy())


def test_generator_streams_are_independent():
    g1, g2 = core.Generator().manual_seed(7), core.Generator().manual_seed(7)
    core.manual_seed(0)
    a = core.randn(4, generator=g1)
    core.randn(10)  # draws from the default generator do not move g2
    b = core.randn(4, generator=g2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert g1.initial_seed() == 7


def test_rng_state_round_trip():
    core.manual_seed(5)
    state = core.get_rng_state()
    a = core.rand(3)
    core.set_rng_state(state)
    np.testing.assert_array_equal(core.rand(3).numpy(), a.numpy())
    g = core.Generator().manual_seed(1)
    gs = g.get_state()
    x = core.randn(3, generator=g)
    g.set_state(gs)
    np.testing.assert_array_equal(core.randn(3, generator=g).numpy(), x.numpy())


def _within(stat, expected, stderr, k=6.0):
    """A sample statistic lies within k standard errors of its expectation."""
    return abs(stat - expected) <= k * stderr


def test_distribution_moments():
    core.manual_seed(0)
    n = 20000
    u = core.rand(n).numpy().astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert _within(u.mean(), 0.5, math.sqrt(1 / 12 / n))
    z = core.randn(n).numpy().astype(np.float64)
    assert _within(z.mean(), 0.0, math.sqrt(1 / n))
    assert _within(z.var(), 1.0, math.sqrt(2 / n))  # var of the sample variance of N(0,1) is 2/n
    g = core.normal(2.0, 3.0, (n,)).numpy().astype(np.float64)
    assert _within(g.mean(), 2.0, 3.0 / math.sqrt(n))
    b = core.bernoulli(core.full((n,), 0.3)).numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and _within(b.mean(), 0.3, math.sqrt(0.3 * 0.7 / n))
    r = core.randint(3, 8, (n,)).numpy()
    assert r.min() == 3 and r.max() == 7
    assert sorted(core.randperm(10).tolist()) == list(range(10))
    m = core.multinomial(core.tensor([0.0, 1.0, 3.0]), n, replacement=True).numpy()
    assert (m != 0).all() and _within((m == 2).mean(), 0.75, math.sqrt(0.75 * 0.25 / n))
    x = core.empty(n).uniform_(-2, 2).numpy().astype(np.float64)
    assert x.min() >= -2 and x.max() <= 2 and _within(x.mean(), 0.0, math.sqrt(16 / 12 / n))
    y = core.empty(n).normal_(1.0, 0.5).numpy().astype(np.float64)
    assert _within(y.mean(), 1.0, 0.5 / math.sqrt(n))


def test_random_dtypes():
    assert core.rand(2, dtype=core.float16).dtype is core.float16
    assert core.randn(2, dtype=core.bfloat16).dtype is core.bfloat16
    assert core.randint(0, 5, (2,)).dtype is core.int64
    assert core.randn_like(core.ones(2, dtype=core.float64)).dtype is core.float64


# --- devices ------------------------------------------------------------------------------


def test_device_parsing_and_equality():
    assert core.device("cpu") == "cpu" and str(core.device("cpu")) == "cpu"
    d = core.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and repr(d) == "device(type='cuda', index=1)"
    assert core.device("cuda", 0) == core.device("cuda:0") == core.device(0)
    assert core.device("cuda") == core.device("cuda:0")
    assert core.device("cpu") != core.device("cuda")
    assert hash(core.device("cuda")) == hash(core.device("cuda:0"))
    with pytest.raises(RuntimeError):
        core.device("tpu")
    with pytest.raises(RuntimeError):
        core.device("cuda:x")


@pytest.mark.skipif(core.cuda.is_available(), reason="checks the error raised without a GPU")
def test_to_cuda_without_gpu_raises_clearly():
    with pytest.raises(RuntimeError, match="CuPy|CUDA"):
        core.ones(2).to("cuda")


@pytest.mark.skipif(not core.cuda.is_available(), reason="needs a CUDA GPU and CuPy")
def test_mixing_devices_names_both():
    with pytest.raises(RuntimeError, match="cpu and cuda:0|cuda:0 and cpu"):
        core.matmul(core.ones(2, 2), core.ones(2, 2).to("cuda"))


# --- torch's error messages ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(error_cases()))
def test_error_matches_torch(name):
    """Same exception type; the message starts with torch's (ours may add detail after it)."""
    case = error_cases()[name]
    with pytest.raises(Exception) as info:
        eval(case["expr"], {"torch": core})
    assert type(info.value).__name__ == case["type"]
    assert str(info.value).startswith(case["message"]), str(info.value)


def test_contains_tests_elements_as_torch():
    t = core.tensor([[1, 0], [3, 4]])
    assert 0 in t and 4 in t and 2 not in t
    assert core.tensor([3, 4]) in t  # broadcast comparison, any element equal
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in t
def test_legacy_tensor_types():
    """core.FloatTensor & co.: isinstance asks for a cpu tensor of the dtype; calling builds one."""
    assert isinstance(core.ones(2), core.FloatTensor) and not isinstance(core.ones(2), core.LongTensor)
    assert isinstance(core.nn.Parameter(core.ones(2)), core.FloatTensor)
    assert isinstance(core.tensor([True]), core.BoolTensor) and isinstance(core.tensor([1]), core.LongTensor)
    assert not isinstance(core.empty(2, device="meta"), core.FloatTensor)
    assert not isinstance([1.0], core.FloatTensor)
    made = core.LongTensor([1, 2])
    assert made.dtype == core.int64 and made.tolist() == [1, 2]
    assert core.FloatTensor(2, 3).shape == (2, 3) and core.FloatTensor().shape == (0,)
    assert core.BoolTensor([1, 0]).tolist() == [True, False]
    assert core.LongTensor(core.tensor([1.5, 2.0])).tolist() == [1, 2]
    assert core.Tensor().shape == (0,)


def test_numpy_argument_names_as_torch_accepts_them():
    """torch takes `axis` for `dim` and `keepdims` for `keepdim`, in functions and methods."""
    x = core.arange(6.0).reshape(2, 3)
    assert core.sum(x, axis=0).tolist() == [3.0, 5.0, 7.0]
    assert core.mean(x, axis=1, keepdims=True).shape == (2, 1)
    assert core.cat([x, x], axis=1).shape == (2, 6) and core.concat([x], axis=0).shape == (2, 3)
    assert x.sum(axis=1).tolist() == [3.0, 12.0] and x.max(axis=1).indices.tolist() == [2, 2]
    assert core.softmax(x, axis=0).shape == (2, 3) and x.softmax(axis=1).shape == (2, 3)
    assert x.unsqueeze(axis=0).shape == (1, 2, 3)
    with pytest.raises(TypeError, match="got multiple values for argument 'dim'"):
        core.sum(x, dim=0, axis=1)
