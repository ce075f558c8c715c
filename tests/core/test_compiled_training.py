"""core.compile on calls that record autograd history: a training forward replayed through
Function.apply (core.jit.training), its backward compiled too.

Every compiled step is compared with the same step run eagerly: the losses, gradients and
updated weights must be identical (the replay runs the same ops on the same arrays, and
dropout draws the same masks from the same generator state).
"""
import numpy as np
import pytest

import mindnlp
from mindnlp import _context, core
from mindnlp.core.jit import backward as compiled_backward
from mindnlp.transformers import BertConfig, BertForSequenceClassification, LlamaConfig, LlamaForCausalLM, padding_free


@pytest.fixture(autouse=True)
def _backward_not_chosen(monkeypatch):
    """Each test starts as a fresh process does: backward not set by the user, no graphs."""
    from mindnlp.core.autograd import engine

    monkeypatch.setattr(_context, "_backward_chosen", False)
    monkeypatch.setitem(_context._settings, "backward", "eager")
    monkeypatch.setattr(engine, "compiled_backward", None)
    monkeypatch.setattr(engine, "next_backward_compiled", False)
    # Eager BERT classification would skip its padding rows (padding_free), which a captured
    # graph cannot: the eager reference computes the padded batch, as the graphs do.
    monkeypatch.setattr(padding_free, "_enabled", False)
    compiled_backward.CACHE.reset()
    yield
    compiled_backward.CACHE.reset()


def _model(kind, dropout):
    core.manual_seed(0)
    if kind == "bert":
        return BertForSequenceClassification(BertConfig(
            vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout, num_labels=3)).train()
    return LlamaForCausalLM(LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2,
                                        attention_dropout=dropout)).train()


def _inputs(kind):
    rng = np.random.default_rng(0)
    ids = core.tensor(rng.integers(0, 100, (3, 10)))
    mask = core.ones(3, 10, dtype=core.long)
    mask[1, 7:] = 0
    if kind == "bert":
        return dict(input_ids=ids, attention_mask=mask, labels=core.tensor([0, 2, 1]))
    return dict(input_ids=ids, attention_mask=mask, labels=ids, use_cache=False)


def _train(kind, compiled, dropout, steps=4):
    """(losses, gradients of every step, final weights, the compiled callable) of a short AdamW run."""
    model = _model(kind, dropout)
    forward = core.compile(model) if compiled else model
    opt = core.optim.AdamW(model.parameters(), lr=1e-2)
    inputs = _inputs(kind)
    core.manual_seed(1)
    losses, grads = [], []
    for _ in range(steps):
        loss = forward(**inputs).loss
        loss.backward()
        losses.append(loss.item())
        grads.append({n: p.grad.numpy().copy() for n, p in model.named_parameters() if p.grad is not None})
        opt.step()
        opt.zero_grad()
    weights = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    return losses, grads, weights, forward


@pytest.mark.parametrize("kind", ["bert", "llama"])
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_compiled_training_steps_equal_eager(kind, dropout):
    eager = _train(kind, False, dropout)
    compiled_backward.CACHE.reset()
    compiled = _train(kind, True, dropout)
    assert compiled[0] == eager[0]
    for got, want in zip(compiled[1], eager[1]):
        assert got.keys() == want.keys()
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
    for name, value in eager[2].items():
        np.testing.assert_array_equal(compiled[2][name], value, err_msg=name)
    call = compiled[3].__dict__["_compiled_call"]
    assert call.breaks == [] and len(call.graphs) == 1
    # Step 1 captures the forward (its backward eager), step 2 replays it and captures the
    # backward, steps 3 and 4 replay both.
    assert compiled_backward.CACHE.replays == 2


def test_a_function_with_parameters_gets_input_and_parameter_gradients():
    core.manual_seed(0)
    weight = core.nn.Parameter(core.randn(4, 3))

    def loss_of(x):
        return (core.nn.functional.gelu(x @ weight) * x.sum(-1, keepdim=True)).mean()

    compiled = core.compile(loss_of, fullgraph=True)
    for seed in range(3):
        core.manual_seed(seed)
        x = core.randn(5, 4, requires_grad=True)
        want_loss = loss_of(x)
        want_loss.backward()
        want_x, want_w = x.grad.numpy().copy(), weight.grad.numpy().copy()
        x.grad, weight.grad = None, None
        loss = compiled(x)
        loss.backward()
        assert loss.item() == want_loss.item()
        np.testing.assert_array_equal(x.grad.numpy(), want_x)
        np.testing.assert_array_equal(weight.grad.numpy(), want_w)
        weight.grad = None
    assert len(compiled.graphs) == 1 and compiled.breaks == []


def test_backward_stays_eager_when_the_user_asked_for_it(monkeypatch):
    mindnlp.set_context(backward="eager")
    weight = core.nn.Parameter(core.ones(3))
    compiled = core.compile(lambda x: (x * weight).sum())
    for _ in range(3):
        compiled(core.ones(3)).backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [3.0, 3.0, 3.0])
    assert len(compiled.graphs) == 1 and compiled_backward.CACHE.graphs == {}


def test_in_place_op_on_a_tensor_with_history_runs_eagerly():
    def fn(x):
        y = x * 2
        y.add_(1.0)
        return y.sum()

    compiled = core.compile(fn)
    x = core.ones(3, requires_grad=True)
    compiled(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    assert compiled.graphs == [] and "inplace" in compiled.breaks[0].replace("in-place", "inplace")
    with pytest.raises(core.jit.GraphBreak, match="in-?place"):
        core.compile(fn, fullgraph=True)(core.ones(3, requires_grad=True))


def test_a_value_guard_sends_a_different_value_to_eager():
    def fn(x):
        scale = 2.0 if x.sum().item() > 0 else -1.0
        return (x * scale).sum()

    compiled = core.compile(fn)
    for values, want in (([1.0, 2.0], [2.0, 2.0]), ([1.0, 2.0], [2.0, 2.0]), ([-1.0, -2.0], [-1.0, -1.0])):
        x = core.tensor(values, requires_grad=True)
        compiled(x).backward()
        np.testing.assert_array_equal(x.grad.numpy(), want)
    assert len(compiled.graphs) == 1


def test_dropout_without_autograd_still_breaks_on_its_random_draw():
    compiled = core.compile(lambda x: core.nn.functional.dropout(x, 0.5))
    with core.no_grad():
        core.manual_seed(0)
        got = compiled(core.ones(8))
    core.manual_seed(0)
    np.testing.assert_array_equal(got.numpy(), core.nn.functional.dropout(core.ones(8), 0.5).numpy())
    assert compiled.graphs == [] and "random" in compiled.breaks[0]


def test_graph_mode_trains_a_model_compiled(monkeypatch):
    eager = _train("bert", False, 0.1)
    compiled_backward.CACHE.reset()
    monkeypatch.setitem(_context._settings, "mode", mindnlp.GRAPH_MODE)
    graph = _train("bert", False, 0.1)
    assert graph[0] == eager[0]
    for name, value in eager[2].items():
        np.testing.assert_array_equal(graph[2][name], value, err_msg=name)
    call = graph[3].__dict__["_graph_call_fn"]
    assert call.breaks == [] and len(call.graphs) == 1 and compiled_backward.CACHE.replays == 2
