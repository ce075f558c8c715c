"""set_context(backward="compiled"): backward passes captured once per structure, replayed after.

Every step is compared with the same step run with the eager engine: gradients must be
identical (the replayed graph runs the same kernels on the same arrays).
"""
import numpy as np
import pytest

import mindnlp
from mindnlp import core
from mindnlp.core.jit import backward as compiled_backward
from mindnlp.transformers import BertConfig, BertForSequenceClassification, LlamaConfig, LlamaForCausalLM


@pytest.fixture(autouse=True)
def _fresh_cache():
    compiled_backward.CACHE.reset()
    yield
    mindnlp.set_context(backward="eager")
    compiled_backward.CACHE.reset()


def _model(kind):
    core.manual_seed(0)
    if kind == "bert":
        return BertForSequenceClassification(BertConfig(
            vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)).train()
    return LlamaForCausalLM(LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2)).train()


def _train(kind, backward, lengths):
    """Gradients of each step of a short AdamW run (inputs of the given lengths)."""
    mindnlp.set_context(backward=backward)
    model = _model(kind)
    opt = core.optim.AdamW(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    grads = []
    for length in lengths:
        ids = core.tensor(rng.integers(0, 100, (2, length)))
        labels = core.tensor(rng.integers(0, 2, (2,))) if kind == "bert" else ids
        model(input_ids=ids, labels=labels).loss.backward()
        grads.append({name: p.grad.numpy().copy() for name, p in model.named_parameters() if p.grad is not None})
        opt.step()
        opt.zero_grad()
    mindnlp.set_context(backward="eager")
    return grads


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_training_steps_replay_the_backward_with_eager_gradients(kind):
    lengths = (8, 8, 8, 5, 8, 5)
    eager = _train(kind, "eager", lengths)
    assert compiled_backward.CACHE.replays == 0
    compiled = _train(kind, "compiled", lengths)
    for want, got in zip(eager, compiled):
        assert list(want) == list(got)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    cache = compiled_backward.CACHE
    assert len(cache.graphs) == 2 and not any(isinstance(g, str) for g in cache.graphs.values())
    assert cache.replays == len(lengths) - 2


def test_gradients_accumulate_and_hooks_run_eagerly():
    mindnlp.set_context(backward="compiled")
    w = core.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    x = core.tensor(np.ones((4, 3), dtype=np.float32))
    for _ in range(3):
        (x @ w.T).tanh().sum().backward()
    want = 3 * ((1 - np.tanh(np.ones((4, 3)) @ np.arange(6).reshape(2, 3).T) ** 2).T @ np.ones((4, 3)))
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5, atol=1e-6)
    assert compiled_backward.CACHE.replays == 2
    w.grad = None
    w.register_hook(lambda g: g * 0)
    (x @ w.T).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.zeros((2, 3)))
    assert compiled_backward.CACHE.replays == 2


def test_retain_graph_and_create_graph_run_eagerly():
    mindnlp.set_context(backward="compiled")
    x = core.tensor([2.0], requires_grad=True)
    y = x ** 3
    (g,) = core.autograd.grad(y, x, create_graph=True)
    g.backward(retain_graph=True)
    assert x.grad.item() == 12.0
    assert compiled_backward.CACHE.graphs == {}


def test_set_context_rejects_unknown_backward():
    with pytest.raises(ValueError, match="compiled"):
        mindnlp.set_context(backward="graph")


@pytest.mark.parametrize("act", ["silu", "gelu", "tanh_gelu"])
def test_fused_activation_backwards_are_captured(act):
    """Large enough for the CPU backend's fused backward kernels, which run as one raw op."""
    fn = {"silu": core.nn.functional.silu, "gelu": core.nn.functional.gelu,
          "tanh_gelu": lambda t: core.nn.functional.gelu(t, approximate="tanh")}[act]
    rng = np.random.default_rng(0)
    w = core.tensor(rng.standard_normal((256, 256)).astype(np.float32), requires_grad=True)
    results = {}
    for backward in ("eager", "compiled", "compiled"):
        mindnlp.set_context(backward=backward)
        w.grad = None
        x = core.tensor(rng.standard_normal((512, 256)).astype(np.float32))
        fn(x @ w).square().mean().backward()
        results.setdefault(backward, []).append((x, w.grad.numpy().copy()))
    mindnlp.set_context(backward="eager")
    x, got = results["compiled"][1]
    w.grad = None
    fn(x @ w).square().mean().backward()
    np.testing.assert_array_equal(got, w.grad.numpy())
    assert compiled_backward.CACHE.replays == 1
