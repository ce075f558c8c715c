"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""
from collections import OrderedDict

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn


def test_sequential_forward_indexing_and_editing():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    x = core.randn(4, 2)
    np.testing.assert_allclose(seq(x).detach().numpy(), c(b(a(x))).detach().numpy())
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"] and sub[0] is b
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    seq.append(nn.Tanh())
    seq.insert(1, nn.Identity())
    assert [type(m).__name__ for m in seq] == ["Linear", "Identity", "ReLU", "Linear", "Tanh"]
    assert list(seq._modules) == ["0", "1", "2", "3", "4"]
    del seq[1]
    assert list(seq._modules) == ["0", "1", "2", "3"] and seq[1] is b
    seq[1] = nn.GELU()
    assert isinstance(seq[1], nn.GELU)
    seq.extend([nn.Identity()])
    assert len(seq) == 5 and isinstance(seq.pop(4), nn.Identity) and len(seq) == 4
    assert len(seq + nn.Sequential(nn.ReLU())) == 5
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert list(named.state_dict()) == ["fc.weight", "fc.bias"] and named.act is named[1]


def test_module_list():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and [n for n, _ in layers.named_parameters()][:2] == ["0.weight", "0.bias"]
    layers.append(nn.ReLU())
    layers.insert(0, nn.Tanh())
    assert isinstance(layers[0], nn.Tanh) and isinstance(layers[-1], nn.ReLU) and len(layers) == 5
    layers += [nn.Identity()]
    del layers[0]
    assert list(layers._modules) == [str(i) for i in range(5)] and isinstance(layers[0], nn.Linear)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    layers[0] = nn.Identity()
    assert isinstance(layers[0], nn.Identity)
    with pytest.raises(IndexError):
        layers[10]
    with pytest.raises(TypeError, match="is not a Module subclass"):
        layers.append(3)


def test_module_dict():
    d = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.ReLU()})
    assert list(d.keys()) == ["b", "a"] and "a" in d and len(d) == 2
    d["c"] = nn.Tanh()
    d.update([("e", nn.Identity())])
    assert list(d) == ["b", "a", "c", "e"]
    assert isinstance(d.pop("a"), nn.ReLU) and "a" not in d
    assert [k for k, _ in d.items()] == ["b", "c", "e"] and len(list(d.values())) == 3
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        d.update([("x", nn.ReLU(), 1)])
    d.clear()
    assert len(d) == 0


def test_parameter_list():
    plist = nn.ParameterList([core.ones(2), nn.Parameter(core.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in plist) and len(plist) == 2
    plist.append(core.ones(1))
    assert [n for n, _ in plist.named_parameters()] == ["0", "1", "2"]
    plist[0] = core.full((2,), 5.0)
    assert plist[0].tolist() == [5.0, 5.0] and isinstance(plist[0], nn.Parameter)
    sliced = plist[1:]
    assert isinstance(sliced, nn.ParameterList) and len(sliced) == 2
    with pytest.raises(RuntimeError, match="ParameterList should not be called"):
        plist()


def test_parameter_dict():
    pdict = nn.ParameterDict({"w": core.ones(2)})
    pdict["b"] = nn.Parameter(core.zeros(1))
    assert list(pdict.keys()) == ["w", "b"] and isinstance(pdict["w"], nn.Parameter)
    assert [n for n, _ in pdict.named_parameters()] == ["w", "b"]
    assert "w" in pdict and pdict.get("zz") is None
    assert pdict.pop("w").tolist() == [1.0, 1.0] and list(pdict) == ["b"]
    pdict.update([("c", core.ones(1))])
    assert len(pdict) == 2 and pdict.setdefault("c").tolist() == [1.0]
    copy = pdict.copy()
    assert copy["b"] is pdict["b"]


def test_containers_in_state_dict_round_trip():
    model = nn.ModuleDict({"layers": nn.ModuleList([nn.Linear(2, 2), nn.LayerNorm(2)]),
                           "extra": nn.ParameterList([core.ones(3)])})
    keys = list(model.state_dict())
    assert keys == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias", "extra.0"]
    other = nn.ModuleDict({"layers": nn.ModuleList([nn.Linear(2, 2), nn.LayerNorm(2)]),
                           "extra": nn.ParameterList([core.zeros(3)])})
    other.load_state_dict(model.state_dict())
    assert other["extra"][0].tolist() == [1.0, 1.0, 1.0]
