"""nn.Transformer and its layers against PyTorch (fixtures from tests/fixtures/make_transformer_layer_fixtures.py).

Each case rebuilds torch's module from the same constructor expression, loads torch's
state_dict strictly, runs torch's inputs and masks in the same mode and backpropagates
torch's grad_output; outputs, input gradients and parameter gradients must match to float32
rounding. The eval-mode cases pin what torch's inference fast path returns, padded positions
included. Reprs, state_dict keys, error messages and warnings are torch's too.
"""
import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.autograd import gradcheck
from mindnlp.core.nn import functional as F

# torch gives these too (test_warnings_match_torch checks them); elsewhere they are noise.
pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True:UserWarning"),
              pytest.mark.filterwarnings("ignore:Support for mismatched:UserWarning")]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "transformer_layers"
META = json.loads((FIXTURES / "transformer_layers.json").read_text())
TOL = 1e-5


def _eval(expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eval(expr, {"nn": nn, "torch": core, "F": F})


def _assert_close(actual, expected, what):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    np.testing.assert_allclose(actual, expected, rtol=TOL, atol=TOL, err_msg=what)


def _unpack(arrays, name):
    """The packed flat vector `name` split back into torch's state_dict keys and shapes."""
    out, offset = {}, 0
    for key, shape in json.loads(str(arrays["state"])):
        size = math.prod(shape)
        out[key] = arrays[name][offset:offset + size].reshape(shape)
        offset += size
    assert offset == arrays[name].size
    return out


def _argument(spec, key, arrays, case):
    if "value" in spec:
        return spec["value"]
    t = core.tensor(arrays[key])
    if "float" in spec and not case["no_grad"]:
        t.requires_grad_(True)
    return t


@pytest.mark.parametrize("name", sorted(META["cases"]))
def test_matches_torch(name):
    case = META["cases"][name]
    data = np.load(FIXTURES / f"{name}.npz")
    arrays = {k: data[k] for k in data.files}
    module = _eval(case["ctor"])
    module.train(case["training"])
    torch_state = _unpack(arrays, "params")
    assert list(module.state_dict()) == list(torch_state)
    result = module.load_state_dict({k: core.tensor(v) for k, v in torch_state.items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys

    args = [_argument(spec, f"arg:{i}", arrays, case) for i, spec in enumerate(case["args"])]
    kwargs = {k: _argument(spec, f"kw:{k}", arrays, case) for k, spec in case["kwargs"].items()}
    if case["no_grad"]:
        with core.no_grad():
            out = module(*args, **kwargs)
        _assert_close(out.numpy(), arrays["output"], f"{name} output")
        return
    out = module(*args, **kwargs)
    _assert_close(out.detach().numpy(), arrays["output"], f"{name} output")
    out.backward(core.tensor(arrays["grad_output"]))
    named = [(f"arg:{i}", a) for i, a in enumerate(args)] + [(f"kw:{k}", v) for k, v in kwargs.items()]
    for key, value in named:
        if f"grad_{key}" in arrays:
            _assert_close(value.grad.numpy(), arrays[f"grad_{key}"], f"{name} grad of {key}")
    params = dict(module.named_parameters())
    for key, expected in _unpack(arrays, "grad_params").items():
        _assert_close(params[key].grad.numpy(), expected, f"{name} grad of {key}")


def test_eval_fast_path_zeroes_padded_positions_as_torch():
    """torch's nested-tensor path leaves 0 at padded positions (then the final norm), others equal."""
    arrays = np.load(FIXTURES / "eval_encoder_nested_padding.npz")
    norm_bias = _unpack(arrays, "params")["norm.bias"]
    kpm = np.array(META["cases"]["eval_encoder_nested_padding"]["kwargs"]["src_key_padding_mask"]["mask"])
    out = arrays["output"]
    np.testing.assert_allclose(out[kpm], np.broadcast_to(norm_bias, out[kpm].shape), rtol=0, atol=1e-6)


# --- numerical gradients --------------------------------------------------------------------

def _gradcheck_module(module, inputs, call):
    module.double()
    params = [p for p in module.parameters() if p.requires_grad]
    n = len(inputs)
    assert gradcheck(lambda *xs: call(*xs[:n]), tuple(inputs) + tuple(params), eps=1e-6, atol=1e-5, rtol=1e-3)


def _rand(*shape, seed):
    rng = np.random.default_rng(seed)
    return core.tensor(rng.standard_normal(shape), dtype=core.float64, requires_grad=True)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck(norm_first):
    core.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, activation="gelu", norm_first=norm_first)
    src = _rand(3, 2, 4, seed=1)
    kpm = core.tensor([[False, False, True], [False, False, False]])
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=core.float64)
    _gradcheck_module(layer, [src], lambda x: layer(x, src_mask=mask, src_key_padding_mask=kpm))


def test_decoder_layer_gradcheck():
    core.manual_seed(0)
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, activation="gelu", batch_first=True)
    tgt, memory = _rand(2, 3, 4, seed=2), _rand(2, 4, 4, seed=3)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=core.float64)
    mkpm = core.tensor([[False, False, False, True], [False, True, False, False]])
    _gradcheck_module(layer, [tgt, memory],
                      lambda t, m: layer(t, m, tgt_mask=tgt_mask, memory_key_padding_mask=mkpm))


# --- masks, reprs, keys, init ----------------------------------------------------------------

def test_generate_square_subsequent_mask():
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    assert mask.dtype == core.float32 and tuple(mask.shape) == (4, 4)
    np.testing.assert_array_equal(mask.numpy(), np.array(META["square_subsequent_mask_4"], dtype=np.float32))
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=core.float64).dtype == core.float64
    instance_mask = nn.Transformer(8, 2, 1, 1, 16).generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(instance_mask.numpy(), np.triu(np.full((3, 3), -np.inf, np.float32), 1))


@pytest.mark.parametrize("expr", sorted(META["reprs"]))
def test_repr_matches_torch(expr):
    assert repr(_eval(expr)) == META["reprs"][expr]


@pytest.mark.parametrize("expr", sorted(META["state_dict_keys"]))
def test_state_dict_keys_match_torch(expr):
    assert list(_eval(expr).state_dict()) == META["state_dict_keys"][expr]


def test_transformer_xavier_initialisation():
    core.manual_seed(0)
    model = nn.Transformer(8, 2, 2, 2, 16)
    for name, p in model.named_parameters():
        if p.dim() > 1:
            fan_out, fan_in = p.shape
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            values = np.abs(p.detach().numpy())
            assert values.max() <= bound, name
            assert values.max() > 0.6 * bound, name  # spread over xavier's range, not a narrower default
    layers = model.encoder.layers
    assert not np.array_equal(layers[0].linear1.weight.detach().numpy(), layers[1].linear1.weight.detach().numpy())
    assert np.all(model.encoder.layers[0].self_attn.in_proj_bias.detach().numpy() == 0)


def test_stacks_are_deep_copies_of_the_layer():
    layer = nn.TransformerDecoderLayer(8, 2, 16)
    stack = nn.TransformerDecoder(layer, 2)
    first, second = stack.layers
    assert first is not layer and second is not first
    np.testing.assert_array_equal(first.linear1.weight.detach().numpy(), second.linear1.weight.detach().numpy())
    with core.no_grad():
        first.linear1.weight.fill_(1.0)
    assert not np.all(second.linear1.weight.detach().numpy() == 1.0)
    assert stack.num_layers == 2 and stack.norm is None


def test_attributes_as_torch():
    assert nn.TransformerEncoderLayer(8, 2).activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(8, 2, activation=nn.GELU()).activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(8, 2, activation=nn.ReLU()).activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation=F.silu).activation_relu_or_gelu == 0
    assert nn.TransformerDecoderLayer(8, 2, activation="gelu").activation is F.gelu
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=True, mask_check=False)
    assert encoder.use_nested_tensor and encoder.enable_nested_tensor and not encoder.mask_check
    model = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    assert (model.d_model, model.nhead, model.batch_first) == (8, 2, True)


def test_custom_encoder_and_decoder():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1, enable_nested_tensor=False)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16), 1)
    model = nn.Transformer(8, 2, custom_encoder=encoder, custom_decoder=decoder)
    assert model.encoder is encoder and model.decoder is decoder
    assert model(core.randn(4, 2, 8), core.randn(3, 2, 8)).shape == (3, 2, 8)


@pytest.mark.parametrize("name", sorted(META["errors"]))
def test_errors_match_torch(name):
    expected = META["errors"][name]
    with pytest.raises(Exception) as info:
        _eval(expected["stmt"])
    assert type(info.value).__name__ == expected["type"]
    assert str(info.value) == expected["message"]


@pytest.mark.parametrize("stmt", sorted(META["warnings"]))
def test_warnings_match_torch(stmt):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(stmt, {"nn": nn, "torch": core, "F": F})
    assert [str(w.message) for w in caught if issubclass(w.category, UserWarning)] == META["warnings"][stmt]


def test_nested_path_ignores_is_causal_as_torch():
    """In eval mode with padding torch runs nested tensors, where the is_causal hint has no effect."""
    core.manual_seed(0)
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2).eval()
    src = core.randn(2, 4, 8)
    kpm = core.tensor([[False, False, True, True], [False, False, False, False]])
    with core.no_grad():
        hinted = encoder(src, src_key_padding_mask=kpm, is_causal=True)
        plain = encoder(src, src_key_padding_mask=kpm)
    np.testing.assert_array_equal(hinted.numpy(), plain.numpy())
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        encoder(src, src_key_padding_mask=kpm, is_causal=True)  # gradients recorded: torch's ordinary path
