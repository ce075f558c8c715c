"""Recurrent layers, cells and packed sequences against PyTorch (fixtures from
tests/fixtures/make_rnn_fixtures.py), plus numerical gradients, initialisation and dropout.

Each fixture case rebuilds the module from torch's constructor expression, loads torch's
state_dict strictly, runs torch's inputs (and packing), backpropagates torch's gradient into
every output, and compares outputs and input/parameter gradients to float32 rounding.
"""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.core.nn.utils import rnn as rnn_utils

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rnn"
META = json.loads((FIXTURES / "rnn.json").read_text())
TOL = 1e-5


def _load(name):
    data = np.load(FIXTURES / f"{name}.npz")
    return {k: data[k] for k in data.files}


def _close(actual, expected, what):
    actual = actual.detach().numpy() if isinstance(actual, core.Tensor) else np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=TOL, atol=TOL, err_msg=what)


def _run_case(name):
    """Run a fixture case in mindnlp; returns (module, arrays, inputs, outputs, extras)."""
    case = META["cases"][name]
    arrays = _load(name)
    module = eval(case["ctor"], {"nn": nn})
    module.eval()
    state = {k[len("param:"):]: core.tensor(v) for k, v in arrays.items() if k.startswith("param:")}
    result = module.load_state_dict(state, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    inputs = {k: core.tensor(arrays[k], requires_grad=True) for k in case["inputs"]}
    hx = None
    if case["with_state"]:
        hx = (inputs["h0"], inputs["c0"]) if "c0" in inputs else inputs["h0"]
    extras = {}
    cell = isinstance(module, nn.RNNCellBase)
    if case["packing"] is not None:
        pk = case["packing"]
        packed = rnn_utils.pack_padded_sequence(inputs["input"], pk["lengths"], batch_first=pk["batch_first"],
                                                enforce_sorted=pk["enforce_sorted"])
        out_packed, hidden = module(packed, hx)
        assert isinstance(out_packed, rnn_utils.PackedSequence)
        output, lengths = rnn_utils.pad_packed_sequence(out_packed, batch_first=pk["batch_first"],
                                                        padding_value=pk["padding_value"],
                                                        total_length=pk["total_length"])
        extras = {"packed": packed, "out_packed": out_packed, "lengths": lengths}
    elif cell:
        output, hidden = module(inputs["input"], hx), None
    else:
        output, hidden = module(inputs["input"], hx)
    if cell:
        outputs = dict(zip(["h", "c"], output)) if isinstance(output, tuple) else {"h": output}
    else:
        outputs = {"output": output}
        outputs.update(zip(["h_n", "c_n"], hidden) if isinstance(hidden, tuple) else [("h_n", hidden)])
    assert list(outputs) == case["outputs"]
    return module, arrays, inputs, outputs, extras


@pytest.mark.parametrize("name", sorted(META["cases"]))
def test_matches_torch(name):
    module, arrays, inputs, outputs, extras = _run_case(name)
    assert list(module.state_dict()) == META["cases"][name]["state_dict_keys"]
    for key, value in outputs.items():
        _close(value, arrays[key], f"{name} {key}")
    if extras:
        packed, out_packed = extras["packed"], extras["out_packed"]
        _close(packed.data, arrays["packed_input"], f"{name} packed input")
        np.testing.assert_array_equal(packed.batch_sizes.numpy(), arrays["batch_sizes"])
        assert packed.batch_sizes.dtype == core.int64 and out_packed.batch_sizes is packed.batch_sizes
        if "sorted_indices" in arrays:
            np.testing.assert_array_equal(out_packed.sorted_indices.numpy(), arrays["sorted_indices"])
            np.testing.assert_array_equal(out_packed.unsorted_indices.numpy(), arrays["unsorted_indices"])
        else:
            assert out_packed.sorted_indices is None and out_packed.unsorted_indices is None
        _close(out_packed.data, arrays["packed_output"], f"{name} packed output")
        np.testing.assert_array_equal(extras["lengths"].numpy(), arrays["lengths_out"])

    core.autograd.backward(list(outputs.values()), [core.tensor(arrays[f"grad_{k}"]) for k in outputs])
    for key, x in inputs.items():
        _close(x.grad, arrays[f"grad_{key}"], f"{name} grad of {key}")
    for key, p in module.named_parameters():
        _close(p.grad, arrays[f"grad_param:{key}"], f"{name} grad of {key}")


@pytest.mark.parametrize("name", ["lstm_proj_2layer_bidir_h0", "gru_nobias", "rnncell", "lstm_packed_h0"])
def test_torch_state_dict_loads_strictly(name):
    case = META["cases"][name]
    arrays = _load(name)
    module = eval(case["ctor"], {"nn": nn})
    torch_state = {k[len("param:"):]: core.tensor(v) for k, v in arrays.items() if k.startswith("param:")}
    assert list(torch_state) == case["state_dict_keys"]
    module.load_state_dict(torch_state, strict=True)
    for key, value in module.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), arrays[f"param:{key}"])
    with pytest.raises(RuntimeError, match="Missing key"):
        module.load_state_dict({k: v for k, v in torch_state.items() if k != case["state_dict_keys"][-1]})


@pytest.mark.parametrize("expr", META["reprs"])
def test_repr(expr):
    assert repr(eval(expr, {"nn": nn})) == META["reprs"][expr]


@pytest.mark.parametrize("expr", sorted(META["errors"]))
def test_errors_match_torch(expr):
    kind, message = META["errors"][expr]
    message = message.replace("torch.", "core.")    # dtype names print as core.float32
    with pytest.raises(Exception) as info:
        eval(expr, {"nn": nn, "rnn_utils": rnn_utils, "randn": core.randn})
    assert type(info.value).__name__ == kind
    assert str(info.value) == message


def test_packed_input_of_wrong_size_is_named():
    # torch lets this reach its matrix product ("mat1 and mat2 shapes cannot be multiplied")
    packed = rnn_utils.pack_sequence([core.randn(3, 5), core.randn(2, 5)])
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 5"):
        nn.LSTM(3, 4)(packed)


def test_dropout_option_warns_for_one_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


# ---- numerical gradients (float64) ------------------------------------------------------

def _gradcheck_module(module, x, hx):
    module.double()
    params = list(module.parameters())
    states = [] if hx is None else list(hx) if isinstance(hx, tuple) else [hx]
    n_states = len(states)

    def fn(x, *rest):
        states, _ = rest[:n_states], rest[n_states:]
        if not states:
            hidden = None
        elif isinstance(module, (nn.LSTM, nn.LSTMCell)):
            hidden = tuple(states)
        else:
            hidden = states[0]
        out = module(x, hidden)
        if isinstance(out, tuple) and isinstance(out[0], rnn_utils.PackedSequence):
            out = (out[0].data,) + (out[1] if isinstance(out[1], tuple) else (out[1],))
        elif isinstance(out, tuple) and isinstance(out[1], tuple):
            out = (out[0],) + out[1]
        return out

    assert gradcheck(fn, (x, *states, *params), eps=1e-6, atol=1e-5, rtol=1e-3)


def _double(*shape):
    return core.randn(*shape, dtype=core.float64, requires_grad=True)


def test_gradcheck_lstm_bidirectional_proj():
    core.manual_seed(0)
    module = nn.LSTM(2, 3, bidirectional=True, proj_size=2)
    _gradcheck_module(module, _double(3, 1, 2), (_double(2, 1, 2), _double(2, 1, 3)))


def test_gradcheck_lstm_two_layers():
    core.manual_seed(6)
    _gradcheck_module(nn.LSTM(2, 2, num_layers=2), _double(3, 1, 2), None)


def test_gradcheck_gru_batch_first():
    core.manual_seed(1)
    module = nn.GRU(2, 3, num_layers=2, batch_first=True)
    _gradcheck_module(module, _double(2, 3, 2), _double(2, 2, 3))


def test_gradcheck_rnn_relu_bidirectional():
    core.manual_seed(2)
    module = nn.RNN(2, 3, nonlinearity="relu", bidirectional=True)
    _gradcheck_module(module, _double(3, 2, 2), _double(2, 2, 3))


def test_gradcheck_rnn_tanh_unbatched_no_state():
    core.manual_seed(3)
    _gradcheck_module(nn.RNN(2, 3, num_layers=2), _double(3, 2), None)


def test_gradcheck_packed_gru():
    core.manual_seed(4)
    module = nn.GRU(2, 2, bidirectional=True).double()
    x, h0 = _double(3, 2, 2), _double(2, 2, 2)

    def fn(x, h0, *params):
        packed = rnn_utils.pack_padded_sequence(x, [1, 3], enforce_sorted=False)
        out, h_n = module(packed, h0)
        return rnn_utils.pad_packed_sequence(out)[0], h_n

    assert gradcheck(fn, (x, h0, *module.parameters()), eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("cell, hx", [
    (lambda: nn.LSTMCell(2, 3), lambda: (_double(2, 3), _double(2, 3))),
    (lambda: nn.GRUCell(2, 3), lambda: _double(2, 3)),
    (lambda: nn.RNNCell(2, 3, nonlinearity="tanh"), lambda: _double(2, 3)),
])
def test_gradcheck_cells(cell, hx):
    core.manual_seed(5)
    _gradcheck_module(cell(), _double(2, 2), hx())


@pytest.mark.parametrize("ctor", [
    "nn.LSTM(2, 3, proj_size=2)", "nn.LSTM(2, 2, bias=False)", "nn.GRU(2, 2)", "nn.RNN(2, 2, nonlinearity='relu')",
    "nn.RNN(2, 2)",
])
def test_gradgradcheck_steps(ctor):
    # a step's backward under create_graph is recomputed with core ops: second derivatives
    core.manual_seed(7)
    module = eval(ctor, {"nn": nn}).double()
    params = tuple(module.parameters())

    def fn(x, *params):
        out, hidden = module(x)
        return (out,) + (hidden if isinstance(hidden, tuple) else (hidden,))

    assert gradgradcheck(fn, (_double(3, 2, 2), *params), eps=1e-6, atol=1e-5, rtol=1e-3)


# ---- initialisation ----------------------------------------------------------------------

@pytest.mark.parametrize("ctor", [
    "nn.RNN(5, 16, num_layers=2, bidirectional=True)", "nn.LSTM(5, 16, proj_size=4)", "nn.GRU(5, 16)",
    "nn.RNNCell(5, 16)", "nn.LSTMCell(5, 16)", "nn.GRUCell(5, 16)",
])
def test_init_is_uniform_in_inverse_sqrt_hidden(ctor):
    core.manual_seed(0)
    module = eval(ctor, {"nn": nn})
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.detach().numpy().reshape(-1) for p in module.parameters()])
    assert values.dtype == np.float32
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.95 * bound and values.max() > 0.95 * bound  # fills the whole interval
    assert abs(values.mean()) < 0.1 * bound
    # a uniform distribution on [-b, b] has variance b^2 / 3
    assert abs(values.var() - bound ** 2 / 3) < 0.15 * bound ** 2 / 3


# ---- dropout between layers --------------------------------------------------------------

def test_dropout_applies_between_layers_only():
    core.manual_seed(0)
    module = nn.LSTM(3, 4, num_layers=2, dropout=0.5, bidirectional=True)
    x = core.randn(6, 2, 3)
    with core.no_grad():
        out_eval, (h_eval, c_eval) = module.eval()(x)
        out_train, (h_train, c_train) = module.train()(x)
    # the first layer (both directions) sees no dropout: its final states are unchanged
    np.testing.assert_allclose(h_train[:2].numpy(), h_eval[:2].numpy(), rtol=0, atol=1e-7)
    np.testing.assert_allclose(c_train[:2].numpy(), c_eval[:2].numpy(), rtol=0, atol=1e-7)
    # the second layer sees a dropped-out input
    assert np.abs(out_train.numpy() - out_eval.numpy()).max() > 1e-3
    assert np.abs(h_train[2:].numpy() - h_eval[2:].numpy()).max() > 1e-3


def test_dropout_one_zeroes_the_next_layers_input():
    core.manual_seed(0)
    module = nn.GRU(3, 4, num_layers=2, dropout=1.0).train()
    top = nn.GRU(4, 4)
    top.load_state_dict({k.replace("_l1", "_l0"): v for k, v in module.state_dict().items() if "_l1" in k})
    x = core.randn(5, 2, 3)
    with core.no_grad():
        out, h_n = module(x)
        expected, h_top = top(core.zeros(5, 2, 4))    # layer 2 runs on an all-zero input
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=0, atol=1e-7)
    np.testing.assert_allclose(h_n[1].numpy(), h_top[0].numpy(), rtol=0, atol=1e-7)


def test_dropout_leaves_the_last_layer_output_alone():
    core.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = nn.RNN(3, 4, dropout=0.9)
    x = core.randn(5, 2, 3)
    with core.no_grad():
        out_train, h_train = module.train()(x)
        out_eval, h_eval = module.eval()(x)
    np.testing.assert_array_equal(out_train.numpy(), out_eval.numpy())
    np.testing.assert_array_equal(h_train.numpy(), h_eval.numpy())


# ---- packing utilities -------------------------------------------------------------------

def test_pack_utilities_match_torch():
    arrays = _load("pack_utils")
    padded = core.tensor(arrays["padded"])
    packed = rnn_utils.pack_padded_sequence(padded, [4, 6, 1], batch_first=True, enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy(), arrays["data"])
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), arrays["batch_sizes"])
    np.testing.assert_array_equal(packed.sorted_indices.numpy(), arrays["sorted_indices"])
    np.testing.assert_array_equal(packed.unsorted_indices.numpy(), arrays["unsorted_indices"])
    unpadded, lengths = rnn_utils.pad_packed_sequence(packed, padding_value=9.0, total_length=7)
    np.testing.assert_array_equal(unpadded.numpy(), arrays["unpadded"])
    np.testing.assert_array_equal(lengths.numpy(), arrays["lengths"])
    assert lengths.dtype == core.int64

    seqs = [core.tensor(arrays[f"seq:{i}"]) for i in range(4)]
    from_list = rnn_utils.pack_sequence(seqs)
    np.testing.assert_array_equal(from_list.data.numpy(), arrays["list_data"])
    np.testing.assert_array_equal(from_list.batch_sizes.numpy(), arrays["list_batch_sizes"])
    for got, want in zip(rnn_utils.unpack_sequence(packed), [padded[0, :4], padded[1], padded[2, :1]]):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_packed_sequence_is_a_named_tuple():
    packed = rnn_utils.pack_sequence([core.ones(2, 1), core.ones(3, 1)], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices.tolist() == [1, 0] and unsorted_indices.tolist() == [1, 0]
    assert repr(packed).startswith("PackedSequence(data=tensor(")
    as_double = packed.double()
    assert as_double.data.dtype == core.float64 and as_double.batch_sizes is batch_sizes
    assert packed.float() is packed
    rebuilt = rnn_utils.PackedSequence(data, batch_sizes, sorted_indices)
    assert rebuilt.unsorted_indices.tolist() == [1, 0]


def test_flat_weights_and_flatten_parameters():
    module = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2, bias=False)
    module.flatten_parameters()
    assert module._flat_weights_names == list(module.state_dict())
    assert [len(w) for w in module.all_weights] == [3] * 4
    assert module.all_weights[1][0] is module.weight_ih_l0_reverse
    assert module.weight_hr_l1.shape == (2, 4) and module.weight_ih_l1.shape == (16, 4)


def test_batch_first_output_and_unbatched_shapes():
    module = nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    out, h_n = module(core.randn(2, 5, 3))
    assert out.shape == (2, 5, 8) and h_n.shape == (4, 2, 4)
    out, h_n = module(core.randn(5, 3))
    assert out.shape == (5, 8) and h_n.shape == (4, 4)
    h, c = nn.LSTMCell(3, 4)(core.randn(3))
    assert h.shape == (4,) and c.shape == (4,)
