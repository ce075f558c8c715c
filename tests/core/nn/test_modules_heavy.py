"""Conv, pooling, loss, attention, distance, padding and vision layers: torch parity and layout."""
import json
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.nn import functional as F

from .functional_fixtures import FIXTURES

REPRS = json.loads((FIXTURES / "module_reprs.json").read_text())
MODULE_CASES = np.load(FIXTURES / "modules.npz")


def _mha_case(name):
    prefix = f"{name}/"
    return {k[len(prefix):]: MODULE_CASES[k] for k in MODULE_CASES.files if k.startswith(prefix)}


MHA_CONFIGS = {
    "masks_need_weights": dict(embed_dim=8, num_heads=2),
    "kdim_vdim_bias_kv_zero_attn": dict(embed_dim=8, num_heads=2, batch_first=True, kdim=6, vdim=5,
                                        add_bias_kv=True, add_zero_attn=True),
    "unbatched_per_head": dict(embed_dim=8, num_heads=4, bias=False),
    "causal_sdpa": dict(embed_dim=8, num_heads=2, batch_first=True),
}


@pytest.mark.parametrize("name", sorted(MHA_CONFIGS))
def test_multihead_attention_matches_torch(name):
    case = _mha_case(name)
    module = nn.MultiheadAttention(**MHA_CONFIGS[name])
    state = {k[len("param/"):]: core.tensor(v) for k, v in case.items() if k.startswith("param/")}
    assert list(module.state_dict()) == json.loads(str(case["keys"]))
    module.load_state_dict(state)
    inputs = {k[len("input/"):]: core.tensor(v) for k, v in case.items() if k.startswith("input/")}
    query = inputs.pop("query").requires_grad_()
    kwargs = json.loads(str(case["kwargs"]))
    out, weights = module(query, inputs.pop("key"), inputs.pop("value"), **inputs, **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), case["out"], atol=1e-5, rtol=1e-5)
    if "weights" in case:
        np.testing.assert_allclose(weights.detach().numpy(), case["weights"], atol=1e-5, rtol=1e-5)
    else:
        assert weights is None
    out.backward(core.tensor(case["grad_out"]))
    np.testing.assert_allclose(query.grad.numpy(), case["grad_query"], atol=1e-5, rtol=1e-5)
    for key, param in module.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), case[f"grad_param/{key}"], atol=1e-5, rtol=1e-4,
                                   err_msg=key)


def test_multihead_attention_sdpa_path_equals_weights_path():
    module = nn.MultiheadAttention(8, 2, batch_first=True)
    x = core.randn(2, 5, 8)
    pad = core.tensor([[False] * 5, [False, False, False, True, True]])
    fast, none = module(x, x, x, key_padding_mask=pad, need_weights=False)
    slow, _ = module(x, x, x, key_padding_mask=pad)
    assert none is None
    np.testing.assert_allclose(fast.detach().numpy(), slow.detach().numpy(), atol=1e-6)


def test_multihead_attention_init_and_separate_projection_layout():
    module = nn.MultiheadAttention(8, 2, kdim=6, vdim=4)
    assert list(module.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                         "out_proj.weight", "out_proj.bias"]
    assert module.in_proj_weight is None and tuple(module.k_proj_weight.shape) == (8, 6)
    assert np.all(module.in_proj_bias.detach().numpy() == 0)
    bound = math.sqrt(6 / (8 + 6))  # xavier_uniform_ on (8, 6)
    assert np.abs(module.k_proj_weight.detach().numpy()).max() <= bound
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(8, 3)


@pytest.mark.parametrize("expression", sorted(REPRS))
def test_repr_matches_torch(expression):
    assert repr(eval(expression, {}, vars(nn))) == REPRS[expression]


def test_conv_layout_and_init():
    conv = nn.Conv2d(4, 6, (3, 2), groups=2)
    assert list(conv.state_dict()) == ["weight", "bias"]
    assert tuple(conv.weight.shape) == (6, 2, 3, 2)
    fan_in = 2 * 3 * 2
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
    assert np.abs(conv.weight.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
    assert np.abs(conv.bias.detach().numpy()).max() <= 1 / math.sqrt(fan_in)
    assert tuple(nn.ConvTranspose2d(4, 6, 3, groups=2).weight.shape) == (4, 3, 3, 3)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 6, 3, groups=2)


def test_conv_padding_modes():
    conv = nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular")
    x = core.randn(1, 2, 6)
    expected = F.conv1d(F.pad(x, (2, 2), mode="circular"), conv.weight, conv.bias)
    np.testing.assert_allclose(conv(x).detach().numpy(), expected.detach().numpy(), atol=1e-6)
    same = nn.Conv2d(2, 3, (3, 4), padding="same", padding_mode="reflect")
    assert tuple(same(core.randn(1, 2, 5, 6)).shape) == (1, 3, 5, 6)


def test_layers_call_their_functional():
    x = core.randn(2, 3, 6, 6)
    t = core.tensor([0, 2])
    logits = core.randn(2, 3)
    pairs = [
        (nn.MaxPool2d(2)(x), F.max_pool2d(x, 2)),
        (nn.AvgPool2d(3, 2, 1)(x), F.avg_pool2d(x, 3, 2, 1)),
        (nn.AdaptiveAvgPool2d((2, 3))(x), F.adaptive_avg_pool2d(x, (2, 3))),
        (nn.CrossEntropyLoss(label_smoothing=0.1)(logits, t), F.cross_entropy(logits, t, label_smoothing=0.1)),
        (nn.NLLLoss()(logits, t), F.nll_loss(logits, t)),
        (nn.BCEWithLogitsLoss(pos_weight=core.ones(3) * 2)(logits, logits.sigmoid()),
         F.binary_cross_entropy_with_logits(logits, logits.sigmoid(), pos_weight=core.ones(3) * 2)),
        (nn.HuberLoss(delta=0.5)(logits, logits * 0), F.huber_loss(logits, logits * 0, delta=0.5)),
        (nn.CosineSimilarity(dim=0)(logits, logits + 1), F.cosine_similarity(logits, logits + 1, dim=0)),
        (nn.ReflectionPad2d(1)(x), F.pad(x, (1, 1, 1, 1), mode="reflect")),
        (nn.Upsample(scale_factor=2, mode="bilinear")(x), F.interpolate(x, scale_factor=2.0, mode="bilinear")),
    ]
    for got, want in pairs:
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)


def test_weighted_loss_weight_is_a_buffer():
    loss = nn.CrossEntropyLoss(weight=core.ones(3))
    assert list(loss.state_dict()) == ["weight"]
    assert list(nn.BCEWithLogitsLoss(pos_weight=core.ones(2)).state_dict()) == ["pos_weight"]
