"""The nn.Module contract: registration, traversal, state_dict, modes, conversion, hooks, repr."""
import collections
import copy
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nn"
META = json.loads((FIXTURES / "nn.json").read_text())


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.norm = nn.LayerNorm(4)
        self.scale = nn.Parameter(core.ones(4))
        self.register_buffer("steps", core.zeros(1))
        self.register_buffer("cache", core.zeros(2), persistent=False)

    def forward(self, x):
        return self.norm(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


# --- Parameter ---------------------------------------------------------------------------


def test_parameter_defaults_and_repr():
    p = nn.Parameter(core.tensor([1.0, 2.5]))
    assert isinstance(p, core.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1.0000, 2.5000], requires_grad=True)"
    frozen = nn.Parameter(core.ones(2), requires_grad=False)
    assert not frozen.requires_grad
    assert repr(frozen) == "Parameter containing:\ntensor([1., 1.])"


def test_parameter_shares_memory_and_deepcopies():
    data = core.zeros(3)
    p = nn.Parameter(data)
    with core.no_grad():
        p.add_(1.0)
    assert data.tolist() == [1.0, 1.0, 1.0]
    p.grad = core.ones(3)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad.tolist() == [1.0, 1.0, 1.0]
    with core.no_grad():
        q.mul_(5.0)
    assert p.tolist() == [1.0, 1.0, 1.0]
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.tolist() == [1.0, 1.0, 1.0] and r.requires_grad


def test_parameter_of_integer_tensor_must_not_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(core.tensor([1, 2]))
    assert not nn.Parameter(core.tensor([1, 2]), requires_grad=False).requires_grad


# --- registration ------------------------------------------------------------------------


def test_attribute_registration_goes_to_the_dicts():
    b = Block()
    assert list(b._parameters) == ["scale"]
    assert list(b._buffers) == ["steps", "cache"]
    assert list(b._modules) == ["fc", "norm"]
    assert "scale" not in b.__dict__ and "fc" not in b.__dict__
    assert b.scale is b._parameters["scale"]
    b.plain = 3
    assert b.__dict__["plain"] == 3
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'missing'"):
        b.missing


def test_assignment_rules_follow_torch():
    b = Block()
    with pytest.raises(TypeError, match=r"cannot assign '.*' as parameter 'scale' \(torch.nn.Parameter or None"):
        b.scale = core.ones(4)
    b.scale = None
    assert b._parameters["scale"] is None and b.scale is None
    assert "scale" not in dict(b.named_parameters())
    b.steps = core.ones(1)  # a tensor replacing a buffer stays a buffer
    assert b._buffers["steps"].tolist() == [1.0]
    b.fc = nn.Identity()
    assert isinstance(b._modules["fc"], nn.Identity)
    b.norm = None
    assert b._modules["norm"] is None
    del b.fc
    assert "fc" not in b._modules
    b.extra = nn.Buffer(core.ones(2), persistent=False)
    assert "extra" in b._buffers and "extra" in b._non_persistent_buffers_set


def test_register_errors():
    m = nn.Module()
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.register_parameter("x", nn.Parameter(core.ones(1)))
    with pytest.raises(KeyError, match="buffer name can.*contain"):
        m.register_buffer("a.b", core.ones(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="parameter name should be a string"):
        m.register_parameter(1, None)
    with pytest.raises(TypeError, match=r"cannot assign '.*' object to parameter 'w'"):
        m.register_parameter("w", core.ones(1))
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        non_leaf = nn.Parameter(core.ones(1), requires_grad=False)
        non_leaf.add_(core.ones(1, requires_grad=True))  # now carries a grad_fn
        m.register_parameter("w", non_leaf)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("child", 3)
    with pytest.raises(TypeError, match=r"cannot assign '.*' object to buffer 'buf'"):
        m.register_buffer("buf", [1.0])

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(core.ones(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_register_module_and_dir():
    m = nn.Module()
    m.register_module("child", nn.Linear(1, 1))
    m.register_buffer("buf", core.ones(1))
    names = dir(m)
    assert "child" in names and "buf" in names and "forward" in names


# --- traversal ---------------------------------------------------------------------------


def test_named_parameters_buffers_modules():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "block.scale", "block.fc.weight", "block.fc.bias", "block.norm.weight", "block.norm.bias",
        "head.weight", "head.bias"]
    assert [n for n, _ in net.named_parameters(prefix="model", recurse=True)][0] == "model.block.scale"
    assert [n for n, _ in net.block.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in net.named_buffers()] == ["block.steps", "block.cache"]
    assert [n for n, _ in net.named_modules()] == ["", "block", "block.fc", "block.norm", "head"]
    assert [n for n, _ in net.named_children()] == ["block", "head"]
    assert len(list(net.modules())) == 5 and len(list(net.children())) == 2
    assert len(list(net.parameters())) == 7 and len(list(net.buffers())) == 2


def test_shared_modules_and_tied_parameters_are_deduplicated():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in seq.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    emb, out = nn.Embedding(5, 3), nn.Linear(3, 5, bias=False)
    out.weight = emb.weight
    tied = nn.ModuleDict({"emb": emb, "out": out})
    assert [n for n, _ in tied.named_parameters()] == ["emb.weight"]
    assert list(tied.state_dict()) == ["emb.weight", "out.weight"]


def test_get_submodule_parameter_buffer():
    net = Net()
    assert net.get_submodule("block.fc") is net.block.fc
    assert net.get_submodule("") is net
    assert net.get_parameter("block.fc.weight") is net.block.fc.weight
    assert net.get_buffer("block.steps") is net.block.steps
    with pytest.raises(AttributeError, match="Block has no attribute `nope`"):
        net.get_submodule("block.nope")
    with pytest.raises(AttributeError, match="`scale` is not an nn.Module"):
        net.get_submodule("block.scale")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        net.get_parameter("block.steps")
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        net.get_buffer("block.scale")
    net.set_submodule("block.fc", nn.Linear(3, 4, bias=False))
    assert net.block.fc.bias is None


# --- state dict --------------------------------------------------------------------------


def test_state_dict_keys_values_and_keep_vars():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["block.scale", "block.steps", "block.fc.weight", "block.fc.bias", "block.norm.weight",
                        "block.norm.bias", "head.weight", "head.bias"]
    assert isinstance(sd, collections.OrderedDict)
    assert not sd["head.weight"].requires_grad and type(sd["head.weight"]) is core.Tensor
    assert sd["head.weight"]._data is net.head.weight._data  # detached, not copied
    kept = net.state_dict(keep_vars=True)
    assert kept["head.weight"] is net.head.weight
    assert list(net.head.state_dict(prefix="h.")) == ["h.weight", "h.bias"]
    assert sd._metadata[""]["version"] == 1 and "block.fc" in sd._metadata


def test_state_dict_round_trip():
    src, dst = Net(), Net()
    with core.no_grad():
        src.block.steps.fill_(7.0)
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    weight = dst.head.weight
    dst.load_state_dict(src.state_dict())
    assert dst.head.weight is weight  # copied in place, the Parameter object survives
    assert dst.block.cache.tolist() == [0.0, 0.0]


def test_strict_errors_match_torch():
    errors = META["load_errors"]
    model = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    good = model.state_dict()
    bad = {k: v for k, v in good.items() if k != "0.bias"}
    bad.update({"0.extra": core.zeros(1), "2.weight": core.zeros(2)})
    with pytest.raises(RuntimeError) as err:
        model.load_state_dict(bad)
    assert str(err.value) == errors["missing_and_unexpected"]
    result = model.load_state_dict(bad, strict=False)
    assert result.missing_keys == errors["non_strict_result"]["missing"]
    assert result.unexpected_keys == errors["non_strict_result"]["unexpected"]
    with pytest.raises(RuntimeError) as err:
        model.load_state_dict(dict(good, **{"0.weight": core.zeros(3, 3)}))
    assert str(err.value) == errors["size_mismatch"].replace("torch.Size", "core.Size")


def test_load_casts_to_parameter_dtype_and_assign_keeps_checkpoint_tensor():
    m = nn.Linear(2, 2)
    sd = {"weight": core.ones(2, 2, dtype=core.float64), "bias": core.zeros(2, dtype=core.float64)}
    m.load_state_dict(sd)
    assert m.weight.dtype is core.float32 and m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    m.load_state_dict(sd, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.dtype is core.float64 and m.weight.requires_grad
    assert m.weight._data is sd["weight"]._data


def test_load_from_state_dict_override_and_hooks():
    class Renamed(nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
            old = prefix + "kernel"
            if old in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(old)
            super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    model = nn.Sequential(Renamed(2, 2))
    model.load_state_dict({"0.kernel": core.ones(2, 2), "0.bias": core.zeros(2)})
    assert model[0].weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]

    seen = []
    model[0].register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.missing_keys)))
    model.load_state_dict({"0.kernel": core.ones(2, 2)}, strict=False)
    assert seen == [["0.bias"]]

    model[0].register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
    assert list(model.state_dict()) == ["0.weight"]


def test_batchnorm_loads_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(3)
    sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    result = bn.load_state_dict(sd)
    assert result.missing_keys == []


def test_non_tensor_entry_is_an_error():
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias"'):
        nn.Linear(2, 2).load_state_dict({"weight": core.ones(2, 2), "bias": [0.0, 0.0]})


# --- modes, gradients, apply -------------------------------------------------------------


def test_train_eval_propagate():
    net = Net()
    assert net.training and net.block.fc.training
    assert net.eval() is net
    assert not net.training and not net.block.norm.training
    net.train()
    assert net.head.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


def test_requires_grad_and_zero_grad():
    net = Net()
    net(core.randn(2, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first():
    order = []
    Net().apply(lambda m: order.append(type(m).__name__))
    assert order == ["Linear", "LayerNorm", "Block", "Linear", "Net"]


# --- conversion --------------------------------------------------------------------------


def test_to_dtype_converts_in_place_and_keeps_parameter_objects():
    net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    weight = net[0].weight
    net[0](core.randn(2, 3)).sum().backward()
    assert net.double() is net
    assert net[0].weight is weight and weight.dtype is core.float64 and weight.grad.dtype is core.float64
    assert net[1].running_mean.dtype is core.float64
    assert net[1].num_batches_tracked.dtype is core.int64  # integer buffers are left alone
    net.to(core.float16)
    assert weight.dtype is core.float16 and isinstance(weight, nn.Parameter) and weight.requires_grad
    net.float()
    assert weight.dtype is core.float32
    net.to("cpu", dtype=core.bfloat16)
    assert weight.dtype is core.bfloat16
    net.to(core.zeros(1, dtype=core.float32))
    assert weight.dtype is core.float32
    with pytest.raises(TypeError, match="only accepts floating point dtypes"):
        net.to(core.int64)
    out = net.half()[0](core.randn(2, 3).half())
    assert out.dtype is core.float16


# --- hooks -------------------------------------------------------------------------------


def test_forward_pre_and_post_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre") or (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append("post") or out + 1)
    lin.register_forward_hook(lambda m, args, out: calls.append("first"), prepend=True)
    out = lin(core.randn(3, 2))
    assert calls == ["pre", "first", "post"]
    np.testing.assert_allclose(out.detach().numpy(), np.broadcast_to(lin.bias.detach().numpy() + 1, (3, 2)),
                               rtol=1e-6)
    h1.remove()
    h2.remove()
    x = core.randn(3, 2)
    np.testing.assert_allclose(lin(x).detach().numpy(), (x @ lin.weight.T + lin.bias).detach().numpy())


def test_hooks_with_kwargs():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": kwargs["factor"] * 10}),
                                with_kwargs=True)
    seen = {}
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.update(kwargs), with_kwargs=True)
    assert m(core.ones(1), factor=2.0).tolist() == [20.0]
    assert seen == {"factor": 20.0}
    bad = Scale()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        bad(core.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(core.ones(1))
    assert seen == [None]


def test_full_backward_hook_sees_input_and_output_gradients():
    lin = nn.Linear(3, 2)
    seen = {}

    def hook(module, grad_input, grad_output):
        seen["in"], seen["out"] = grad_input, grad_output

    handle = lin.register_full_backward_hook(hook)
    x = core.randn(4, 3, requires_grad=True)
    g = core.randn(4, 2)
    lin(x).backward(g)
    np.testing.assert_allclose(seen["out"][0].numpy(), g.numpy())
    np.testing.assert_allclose(seen["in"][0].numpy(), (g @ lin.weight).detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), seen["in"][0].numpy())
    handle.remove()
    assert not lin._backward_hooks


def test_backward_hooks_can_replace_gradients():
    lin = nn.Linear(3, 2)
    lin.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 2,))
    lin.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0] + 1,))
    x = core.randn(4, 3, requires_grad=True)
    g = core.randn(4, 2)
    lin(x).backward(g)
    expected = (g * 2 @ lin.weight).detach().numpy() + 1
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(lin.weight.grad.numpy(), ((g * 2).T @ x).detach().numpy(), rtol=1e-6)


def test_backward_hook_without_input_gradient_gets_none():
    emb = nn.Embedding(4, 2)
    seen = []
    emb.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    emb(core.tensor([1, 2])).sum().backward()
    assert seen == [(None,)]


# --- repr, copies, pickling --------------------------------------------------------------


@pytest.mark.parametrize("expr", list(META["reprs"]))
def test_repr_matches_torch(expr):
    module = eval(expr, {"nn": nn, "torch": core, "collections": collections})
    assert repr(module) == META["reprs"][expr].replace("torch.", "core.")


def test_custom_extra_repr_and_nesting():
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Linear(1, 1)

        def extra_repr(self):
            return "size=3\nmode=fast"

    assert repr(Custom()) == ("Custom(\n  size=3\n  mode=fast\n  (inner): Linear(in_features=1, out_features=1, "
                              "bias=True)\n)")


def test_deepcopy_and_pickle_round_trip():
    net = Net()
    net.register_forward_hook(lambda m, a, o: o)
    clone = copy.deepcopy(net)
    assert clone.head.weight is not net.head.weight
    np.testing.assert_array_equal(clone.head.weight.detach().numpy(), net.head.weight.detach().numpy())
    with core.no_grad():
        clone.head.weight.zero_()
    assert float(net.head.weight.abs().sum()) > 0
    restored = pickle.loads(pickle.dumps(nn.Sequential(nn.Linear(2, 2), nn.GELU())))
    assert isinstance(restored[0].weight, nn.Parameter) and restored[0].weight.requires_grad
    assert restored(core.ones(1, 2)).shape == (1, 2)


def test_setstate_fills_missing_hook_dicts():
    lin = nn.Linear(1, 1)
    state = {k: v for k, v in lin.__dict__.items() if k != "_forward_pre_hooks"}
    fresh = nn.Linear.__new__(nn.Linear)
    fresh.__setstate__(state)
    assert fresh(core.ones(1, 1)).shape == (1, 1)
