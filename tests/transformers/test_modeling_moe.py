"""The shared mixture-of-experts blocks: grouped experts against a per-token reference, the
experts implementations, the load-balancing loss, and the per-expert checkpoint layout."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd.gradcheck import gradcheck
from mindnlp.core.ops import linalg
from mindnlp.core.serialization import load_safetensors
from mindnlp.transformers import MixtralConfig, MixtralForCausalLM
from mindnlp.transformers.core_model_loading import Concatenate, MergeModulelist, WeightConverter
from mindnlp.transformers.modeling_moe import MoeExperts, load_balancing_loss_func

HIDDEN, WIDTH, EXPERTS = 6, 5, 4


def _experts(implementation=None, dtype=core.float32):
    config = MixtralConfig(hidden_size=HIDDEN, intermediate_size=WIDTH, num_local_experts=EXPERTS,
                           experts_implementation=implementation)
    experts = MoeExperts(config).to(dtype)
    with core.no_grad():
        experts.gate_up_proj.copy_(core.randn(EXPERTS, 2 * WIDTH, HIDDEN, dtype=dtype))
        experts.down_proj.copy_(core.randn(EXPERTS, HIDDEN, WIDTH, dtype=dtype))
    return experts


def _routing(tokens, top_k=2, seed=0):
    rng = np.random.default_rng(seed)
    index = np.stack([rng.choice(EXPERTS, top_k, replace=False) for _ in range(tokens)])
    weights = rng.random((tokens, top_k)).astype(np.float32)
    return core.tensor(index), core.tensor(weights)


def _reference(experts, hidden, index, weights):
    """Token by token, each of its experts in turn: the definition the grouped run must equal."""
    gate_up, down = experts.gate_up_proj.detach().numpy(), experts.down_proj.detach().numpy()
    out = np.zeros_like(hidden)
    for t in range(hidden.shape[0]):
        for e, w in zip(index[t], weights[t]):
            gate, up = np.split(gate_up[e] @ hidden[t], 2)
            out[t] += w * (down[e] @ (gate / (1 + np.exp(-gate)) * up))
    return out


def test_grouped_experts_equal_the_per_token_definition():
    experts = _experts()
    hidden = core.randn(9, HIDDEN)
    index, weights = _routing(9)
    with core.no_grad():
        out = experts(hidden, index, weights).numpy()
    np.testing.assert_allclose(out, _reference(experts, hidden.numpy(), index.numpy(), weights.numpy()),
                               rtol=1e-4, atol=1e-5)


def test_each_expert_with_tokens_runs_one_product_per_projection(monkeypatch):
    """Never a pass over every expert: one token routed to experts 1 and 3 costs two experts'
    products per projection, each a BLAS product inside core._grouped_mm."""
    experts, calls = _experts(), []
    product = linalg._matmul_arrays
    monkeypatch.setattr(linalg, "_matmul_arrays", lambda xp, a, b, bias=None: calls.append(a.shape) or product(xp, a, b, bias))
    experts(core.randn(1, HIDDEN), core.tensor([[3, 1]]), core.tensor([[0.5, 0.5]]))
    assert calls == [(1, HIDDEN)] * 2 + [(1, WIDTH)] * 2
    calls.clear()
    experts(core.randn(7, HIDDEN), core.tensor([[0, 2]] * 7), core.full((7, 2), 0.5))
    assert calls == [(7, HIDDEN)] * 2 + [(7, WIDTH)] * 2


def test_grouped_experts_gradients():
    """gradcheck perturbs its inputs in place, so the experts' own parameters can be inputs."""
    experts = _experts(dtype=core.float64)
    index, weights = _routing(5)
    inputs = [core.randn(5, HIDDEN, dtype=core.float64).requires_grad_(), experts.gate_up_proj, experts.down_proj,
              weights.double().requires_grad_()]
    assert gradcheck(lambda hidden, _gate_up, _down, top_weights: experts(hidden, index, top_weights), inputs)


@pytest.mark.parametrize("implementation", ["batched_mm", "grouped_mm"])
def test_experts_implementations_agree(implementation):
    reference, experts = _experts(), _experts(implementation)
    experts.load_state_dict(reference.state_dict())
    hidden = core.randn(6, HIDDEN)
    index, weights = _routing(6, seed=1)
    with core.no_grad():
        np.testing.assert_allclose(experts(hidden, index, weights).numpy(), reference(hidden, index, weights).numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_experts_implementation_is_set_on_the_model():
    model = MixtralForCausalLM(MixtralConfig(vocab_size=20, hidden_size=8, intermediate_size=4, num_hidden_layers=1,
                                             num_attention_heads=2, num_key_value_heads=1, num_local_experts=3))
    model.set_experts_implementation("batched_mm")
    assert model.model.layers[0].mlp.experts.config._experts_implementation == "batched_mm"
    with pytest.raises(ValueError, match="experts_implementation"):
        model.set_experts_implementation("megablocks")


def _numpy_aux_loss(layers, num_experts, top_k, mask=None):
    probabilities = [np.exp(x) / np.exp(x).sum(-1, keepdims=True) for x in layers]
    keep = np.ones(len(layers[0])) if mask is None else mask.reshape(-1).astype(float)
    fraction, mean_probability = np.zeros(num_experts), np.zeros(num_experts)
    for p in probabilities:
        for t, chosen in enumerate(np.argsort(-p, -1)[:, :top_k]):
            fraction[chosen] += keep[t]
        mean_probability += (p * keep[:, None]).sum(0)
    rows = keep.sum() * len(layers)
    return num_experts * np.sum(fraction / rows * mean_probability / rows)


def test_load_balancing_loss_against_its_definition():
    rng = np.random.default_rng(2)
    layers = [rng.normal(size=(8, EXPERTS)).astype(np.float32) for _ in range(3)]
    mask = np.array([[0, 1, 1, 1], [1, 1, 1, 0]])
    loss = load_balancing_loss_func(tuple(core.tensor(x) for x in layers), EXPERTS, 2)
    np.testing.assert_allclose(float(loss), _numpy_aux_loss(layers, EXPERTS, 2), rtol=1e-5)
    masked = load_balancing_loss_func(tuple(core.tensor(x) for x in layers), EXPERTS, 2, core.tensor(mask))
    np.testing.assert_allclose(float(masked), _numpy_aux_loss(layers, EXPERTS, 2, mask), rtol=1e-5)
    assert load_balancing_loss_func(None, EXPERTS, 2) == 0


def test_load_balancing_loss_is_top_k_for_uniform_routing():
    uniform = tuple(core.zeros(6, EXPERTS) + core.arange(6).unsqueeze(-1) * 0 for _ in range(2))
    assert abs(float(load_balancing_loss_func(uniform, EXPERTS, 2)) - 2.0) < 1e-6


def test_weight_converter_round_trip():
    converter = WeightConverter([".experts.*.w1.weight", ".experts.*.w3.weight"], ".experts.gate_up_proj",
                                operations=[MergeModulelist(dim=0), Concatenate(dim=1)])
    assert converter.match_source("model.layers.2.mlp.experts.7.w3.weight") == \
        ("model.layers.2.mlp.experts.gate_up_proj", 1, 7)
    assert converter.match_source("model.layers.2.mlp.shared_experts.w3.weight") is None
    gates, ups = [core.randn(4, 3) for _ in range(2)], [core.randn(4, 3) for _ in range(2)]
    fused = converter.convert([gates, ups])
    assert tuple(fused.shape) == (2, 8, 3)
    np.testing.assert_array_equal(fused[1, 4:].numpy(), ups[1].numpy())
    pieces = converter.split("model.layers.2.mlp.experts.gate_up_proj", fused)
    assert sorted(pieces) == [f"model.layers.2.mlp.experts.{i}.{w}.weight" for i in (0, 1) for w in ("w1", "w3")]
    np.testing.assert_array_equal(pieces["model.layers.2.mlp.experts.1.w1.weight"].numpy(), gates[1].numpy())


def test_experts_spread_over_shards_load(tmp_path):
    """A sharded checkpoint whose experts sit in different files loads whole."""
    config = MixtralConfig(vocab_size=20, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                           num_attention_heads=2, num_key_value_heads=1, num_local_experts=4)
    model = MixtralForCausalLM(config)
    model.save_pretrained(tmp_path, max_shard_size="6KB")
    shards = [name for name in os.listdir(tmp_path) if name.endswith(".safetensors")]
    owners = {name: {k.split(".experts.")[1].split(".")[0] for k in load_safetensors(os.path.join(tmp_path, name))
                     if "layers.0.block_sparse_moe.experts" in k} for name in shards}
    assert sum(1 for experts in owners.values() if experts) > 1
    reloaded, info = MixtralForCausalLM.from_pretrained(tmp_path, output_loading_info=True)
    assert info["missing_keys"] == set() and info["unexpected_keys"] == set()
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(reloaded.state_dict()[name].numpy(), value.numpy(), err_msg=name)
