"""core.compile: replayed graphs equal eager results; guards, recompiles and graph breaks.

Each compiled function is called on fresh inputs after its capture, so the results
checked come from replaying the graph, not from the capture's own eager run.
"""
import logging
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core import nn
from mindnlp.core.nn import functional as F

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _inputs(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [core.tensor(rng.standard_normal(s).astype(np.float32)) for s in shapes]


def _assert_same(a, b):
    if isinstance(a, core.Tensor):
        assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        assert a == b


def _kernels_by_op(compiled):
    """Op name -> the names of the kernels its nodes replay through, in graph order, for a
    compiled function holding one captured graph."""
    (entry,) = compiled._cache.values()
    kernels, names = entry.compiled._replay.__globals__, {}
    for i, node in enumerate(entry.compiled.graph.nodes):
        names.setdefault(node.name, []).append(kernels[f"k{i}"].__name__)
    return names


def _replays_like_eager(fn, *shapes, calls=3):
    """Compile fn, capture on one input, replay on others: equal to eager, no break."""
    compiled = core.compile(fn)
    with core.no_grad():
        for seed in range(calls):
            args = _inputs(seed, *shapes)
            _assert_same(compiled(*args), fn(*args))
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    return compiled


OPS = {
    "arith": (lambda a, b: (a + b) * 2.0 - b / (a.abs() + 1.0), (3, 4), (3, 4)),
    "broadcast": (lambda a, b: a * b - 1, (3, 4), (4,)),
    "unary": (lambda a: (a.exp().log1p().tanh(), a.sigmoid(), a.sqrt(), a.clamp(-0.5, 0.5), a.pow(2)), (5, 6)),
    "reductions": (lambda a: (a.sum(-1), a.mean(0, keepdim=True), a.max(-1).values, a.argmax(-1), a.var(-1),
                              core.logsumexp(a, -1), a.cumsum(0)), (4, 5)),
    "shapes": (lambda a: (a.view(2, 10), a.transpose(0, 1).contiguous(), a.reshape(-1)[3:9], a.unsqueeze(0).expand(
        3, 4, 5), a.permute(1, 0)[::2], core.cat([a, a], 1), core.stack([a, a]), a.flip(0), a.chunk(2, 1)), (4, 5)),
    "indexing": (lambda a: (a[1], a[:, 2:4], a[core.tensor([0, 2])], a.gather(1, core.tensor([[0], [1], [2], [3]])),
                            a.index_select(0, core.tensor([3, 1]))), (4, 5)),
    "compare_where": (lambda a, b: (core.where(a > b, a, b), (a == a).all(), (a < 0) & (b >= 0), ~(a > 0),
                                    a.masked_fill(a > 0, 0.0)), (4, 5), (4, 5)),
    "linalg": (lambda a, b: (a @ b, core.bmm(a[None], b[None]), core.einsum("ij,jk->ik", a, b)), (3, 4), (4, 2)),
    "softmax_norms": (lambda a: (F.softmax(a, -1), F.log_softmax(a, 0), F.layer_norm(a, (5,)), F.gelu(a),
                                 F.silu(a), F.normalize(a, dim=-1)), (4, 5)),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), (1, 2, 5, 4),
                  (1, 2, 5, 4), (1, 2, 5, 4)),
    "creation_constants": (lambda a: a + core.arange(a.shape[-1]) * core.ones(a.shape) + core.full((1, 5), 2.0)
                           + core.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), (4, 5)),
    "inplace_on_intermediate": (lambda a: a.clone().mul_(2.0).add_(1.0).clamp_(max=1.5), (4, 5)),
    "setitem_on_intermediate": (lambda a: _setitem(a), (4, 5)),
    "rounding": (lambda a: (core.round(a * 3), a.round(decimals=1), core.floor(a), core.ceil(a), core.trunc(a)),
                 (4, 5)),
    "pooling": (lambda a: (F.avg_pool1d(a, 3, stride=2, padding=1), F.avg_pool1d(a, 3, 2, 1, count_include_pad=False),
                           F.avg_pool2d(a[:, None], 2, ceil_mode=True), F.adaptive_avg_pool1d(a, 3)), (2, 3, 7)),
}


def _setitem(a):
    out = core.zeros(4, 5)
    out[1:3] = a[1:3] * 2
    out[:, 0] = 7.0
    return out


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_battery_replays_like_eager(name):
    fn, *shapes = OPS[name]
    _replays_like_eager(fn, *shapes)


MODULES = {
    "mlp": (lambda: nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Dropout(0.1), nn.Linear(8, 3)), (2, 5, 6)),
    "layernorm": (lambda: nn.LayerNorm(6), (2, 6)),
    "conv1d": (lambda: nn.Sequential(nn.Conv1d(3, 4, 3, padding=1), nn.ReLU()), (2, 3, 7)),
    "mha": (lambda: _SelfAttention(nn.MultiheadAttention(8, 2, batch_first=True)), (2, 5, 8)),
    "embedding": (lambda: _Embed(nn.Embedding(10, 4)), (3,)),
}


class _SelfAttention(nn.Module):
    def __init__(self, mha):
        super().__init__()
        self.mha = mha

    def forward(self, x):
        return self.mha(x, x, x)[0]


class _Embed(nn.Module):
    def __init__(self, emb):
        super().__init__()
        self.emb = emb

    def forward(self, x):
        return self.emb((x.abs() * 3).long().clamp(max=9))


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_replay_like_eager(name):
    make, shape = MODULES[name]
    core.manual_seed(0)
    module = make().eval()
    compiled = core.compile(module)
    with core.no_grad():
        for seed in range(3):
            (x,) = _inputs(seed, shape)
            _assert_same(compiled(x), module(x))
    call = compiled.__dict__["_compiled_call"]
    assert call.breaks == [] and len(call.graphs) == 1
    assert compiled._orig_mod is module and "_orig_mod.mha.in_proj_weight" in compiled.state_dict() or name != "mha"


def test_parameters_are_read_at_each_replay():
    lin = nn.Linear(3, 2).eval()
    compiled = core.compile(lin)
    (x,) = _inputs(0, (1, 3))
    with core.no_grad():
        compiled(x)
        lin.weight.mul_(2.0)
        _assert_same(compiled(x), lin(x))


def test_assigned_parameters_and_children_recapture():
    """A graph reads the parameter objects it was captured with: assigning a new parameter,
    buffer or child (as weight tying or adapter injection do) must not replay the old one."""
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).eval()
    compiled = core.compile(model)
    call = compiled.__dict__["_compiled_call"]
    (x,) = _inputs(0, (2, 3))
    with core.no_grad():
        compiled(x)
        model[0].weight = nn.Parameter(core.ones(4, 3))
        _assert_same(compiled(x), model(x))
        model[1] = nn.Tanh()
        _assert_same(compiled(x), model(x))
        del model[2].bias
        model[2].register_buffer("bias", core.ones(2))
        _assert_same(compiled(x), model(x))
        model[0]._parameters = dict(model[0]._parameters)      # a replaced dict is tracked too
        _assert_same(compiled(x), model(x))
        model[0]._parameters["bias"] = nn.Parameter(core.ones(4))
        _assert_same(compiled(x), model(x))
    assert len(call.graphs) == 5 and call.breaks == []


def test_forward_hooks_and_flags_set_directly_are_seen():
    """Hooks registered after the first call run (eagerly); once removed the graph replays
    again; a training flag assigned directly, not through train(), is guarded too."""
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)).eval()
    compiled = core.compile(model)
    call = compiled.__dict__["_compiled_call"]
    (x,) = _inputs(0, (2, 3))
    seen = []
    with core.no_grad():
        compiled(x)
        handle = model[0].register_forward_hook(lambda module, args, out: seen.append(out))
        _assert_same(compiled(x), model(x))
        assert len(seen) == 2
        handle.remove()
        compiled(x)
        assert len(seen) == 2
        model[0]._forward_pre_hooks[-1] = lambda module, args: seen.append(args)
        compiled(x)
        assert len(seen) == 3
        model[0]._forward_pre_hooks.clear()
        model[1].training = True
        compiled(x)                      # dropout draws random numbers: this key runs eagerly
    assert len(call.graphs) == 1 and any("hooks" in reason for reason in call.breaks)
    assert any("random" in reason for reason in call.breaks)


def _hf_batch(model, lengths, seed):
    rng = np.random.default_rng(seed)
    ids = core.tensor(rng.integers(0, model.config.vocab_size, (len(lengths), max(lengths))))
    mask = core.tensor([[1] * n + [0] * (max(lengths) - n) for n in lengths])
    return ids, mask


def _compiled_model_matches(model, extra, padded):
    compiled = core.compile(model.forward)
    with core.no_grad():
        for seed in range(3):
            ids, mask = _hf_batch(model, padded if seed else [6, 6], seed)
            got, want = compiled(input_ids=ids, attention_mask=mask, **extra), model(
                input_ids=ids, attention_mask=mask, **extra)
            assert type(got) is type(want) and list(got) == list(want)
            for k in want:
                np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=0, atol=1e-6)
    return compiled


def test_bert_forward_compiled_equals_eager():
    from mindnlp.transformers import AutoModel

    model = AutoModel.from_pretrained(os.path.join(REPO, "tests", "fixtures", "bert", "base")).eval()
    compiled = _compiled_model_matches(model, {}, [6, 4])
    # All-ones masks take the no-mask branch, padded ones the other: one graph, a value guard each.
    assert compiled.breaks == [] and len(compiled.graphs) == 1


def test_llama_forward_compiled_equals_eager():
    from mindnlp.transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        os.path.join(REPO, "tests", "fixtures", "decoders", "llama", "model")).eval()
    compiled = _compiled_model_matches(model, {"use_cache": False}, [6, 3])
    assert compiled.breaks == [] and len(compiled.graphs) == 1


# --- guards and recompiles ---


def test_new_shape_dtype_or_scalar_recaptures():
    fn = lambda x, scale: x * scale  # noqa: E731
    compiled = core.compile(fn)
    with core.no_grad():
        for x, s in [(core.ones(2, 3), 2.0), (core.ones(2, 3), 2.0), (core.ones(4, 3), 2.0),
                     (core.ones(2, 3, dtype=core.float64), 2.0), (core.ones(2, 3), 3.0)]:
            _assert_same(compiled(x, s), fn(x, s))
    assert len(compiled.graphs) == 4 and len(compiled.guards()) == 4


def test_training_flag_is_guarded():
    core.manual_seed(0)
    module = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    compiled = core.compile(module)
    call = compiled.__dict__["_compiled_call"]
    (x,) = _inputs(0, (8, 4))
    with core.no_grad():
        module.eval()
        _assert_same(compiled(x), module(x))
        _assert_same(compiled(x), module(x))
        module.train()
        compiled(x)                      # dropout draws random numbers: this key runs eagerly
    assert len(call.graphs) == 1 and len(call.breaks) == 1


def test_recompile_limit_falls_back_to_eager(monkeypatch):
    monkeypatch.setattr(core.jit.config, "recompile_limit", 2)
    compiled = core.compile(lambda x: x + 1)
    with core.no_grad():
        for n in range(1, 5):
            _assert_same(compiled(core.ones(n)), core.ones(n) + 1)
    assert len(compiled.graphs) == 2 and any("recompile limit" in r for r in compiled.breaks)


def test_value_guard_sends_the_other_branch_to_eager():
    def fn(x):
        if bool(x.sum() > 0):
            return x * 2
        return x - 1

    compiled = core.compile(fn)
    with core.no_grad():
        for x in (core.ones(3), core.ones(3) * 3, -core.ones(3), core.ones(3)):
            _assert_same(compiled(x), fn(x))
    assert len(compiled.graphs) == 1 and compiled.breaks == []
    assert "guard" in str(compiled.graphs[0])


def test_input_mutation_is_replayed():
    def fn(x, y):
        x.add_(y)
        return x * 2

    compiled = core.compile(fn)
    with core.no_grad():
        a, b = core.ones(3), core.ones(3)
        for _ in range(3):
            out = compiled(a, b)
        np.testing.assert_array_equal(a.numpy(), [4.0, 4.0, 4.0])
        np.testing.assert_array_equal(out.numpy(), [8.0, 8.0, 8.0])
    assert len(compiled.graphs) == 1


def test_cache_write_at_a_position_tensor_is_replayed():
    """A static cache's write `cache[:, :, position] = value` (position a one-element index
    tensor) replays through a slice; a position past the end wraps or raises as eagerly."""
    def write(cache, value, position):
        cache[:, :, position] = value
        return cache.sum()

    compiled = core.compile(write)
    caches = [core.zeros(1, 2, 5, 3), core.zeros(1, 2, 5, 3)]
    with core.no_grad():
        for pos in [0, 3, 4, -1]:
            value = core.full((2, 1, 3), float(pos + 7))
            position = core.tensor([pos])
            _assert_same(compiled(caches[0], value, position), write(caches[1], value, position))
            _assert_same(caches[0], caches[1])
        with pytest.raises(IndexError):
            compiled(caches[0], value, core.tensor([5]))
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    (entry,) = compiled._cache.values()
    kernels = entry.compiled._replay.__globals__
    assert [kernels[f"k{i}"].__name__ for i, n in enumerate(entry.compiled.graph.nodes) if n.name == "assign"] == [
        "assign_position"]


def test_constant_outputs_are_not_shared_between_calls():
    compiled = core.compile(lambda x: (x + 1, core.zeros(2)))
    with core.no_grad():
        compiled(core.ones(2))
        first = compiled(core.ones(2))[1]
        first.add_(5.0)
        np.testing.assert_array_equal(compiled(core.ones(2))[1].numpy(), [0.0, 0.0])


# --- graph breaks: eager results, reasons recorded, fullgraph raises ---


BREAKS = {
    "tolist": (lambda x: x * len([v for v in x.tolist() if v > 0]), "tolist"),
    "numpy": (lambda x: x + float(np.asarray(x.numpy()).max()), "numpy"),
    "nonzero": (lambda x: x[core.nonzero(x > 0)[:, 0]], "outside Function.apply"),
    "masked_select": (lambda x: core.masked_select(x, x > 0).sum(), "boolean-mask"),
    "random": (lambda x: x + core.rand(3), "random"),
    "unsupported_argument": (lambda x, obj=object(): x + 1, None),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_graph_breaks_run_eagerly_with_a_reason(name):
    fn, words = BREAKS[name]
    compiled = core.compile(fn)
    with core.no_grad():
        for x in (core.tensor([1.0, -2.0, 3.0]), core.tensor([-1.0, 2.0, 5.0])):
            if name == "random":
                core.manual_seed(0)
                got = compiled(x)
                core.manual_seed(0)
                _assert_same(got, fn(x))
            elif name == "unsupported_argument":
                _assert_same(compiled(x, object()), x + 1)
            else:
                _assert_same(compiled(x), fn(x))
    assert compiled.graphs == [] and compiled.breaks
    assert words is None or words in compiled.breaks[0]


@pytest.mark.parametrize("name", ["tolist", "nonzero", "random"])
def test_fullgraph_raises_on_a_break(name):
    compiled = core.compile(BREAKS[name][0], fullgraph=True)
    with core.no_grad(), pytest.raises(core.jit.GraphBreak):
        compiled(core.tensor([1.0, -2.0, 3.0]))


def test_explain_and_logs(caplog, monkeypatch):
    ex = core.compiler.explain(lambda x: (x + 1).tolist(), core.ones(2))
    assert ex.graph_count == 0 and ex.graph_break_count == 1 and "tolist" in ex.break_reasons[0]
    ex = core.compiler.explain(lambda x: x.exp() + 1, core.ones(2))
    assert ex.graph_count == 1 and ex.op_count == 2 and "Exp" in str(ex)
    monkeypatch.setenv("MINDNLP_LOGS", "graph_breaks")
    with caplog.at_level(logging.WARNING, logger="mindnlp.core.jit"):
        core.compile(lambda x: x.tolist())(core.ones(2))
    assert "tolist" in caplog.text


def test_compile_contract():
    def fn(x):
        return x + 1

    assert core.compile(fn, disable=True) is fn
    with pytest.raises(RuntimeError, match="mode"):
        core.compile(fn, mode="fastest")
    decorated = core.compile(mode="reduce-overhead", fullgraph=True)(fn)
    _assert_same(decorated(core.ones(2)), core.ones(2) + 1)
    core.compiler.reset()
    assert decorated.graphs == []


def test_passes_fold_constants_and_drop_dead_code():
    def fn(x):
        positions = core.arange(x.shape[-1]).float()
        table = (positions * 0.5).exp().unsqueeze(0)           # constant: folded
        unused = x.sin() * 3  # noqa: F841 (dead: dropped)
        return x * table

    compiled = _replays_like_eager(fn, (2, 4))
    graph = compiled.graphs[0]
    assert [n.name for n in graph.nodes] == ["Mul"]
    assert "unused" not in str(graph)


def test_bias_add_fuses_into_the_product():
    """x @ W + b (GPT-2's Conv1D) replays as one product that adds the bias, equal to eager;
    a product read elsewhere too keeps its own node."""
    from mindnlp.core.backends import cpu_jit

    rng = np.random.default_rng(0)
    w, bias = (core.tensor(rng.standard_normal(shape).astype(np.float32)) for shape in [(128, 96), (96,)])
    fused = _replays_like_eager(lambda x: (bias + x @ w, x @ w + bias), (1, 128))
    assert [n.name for n in fused.graphs[0].nodes] == ["matmul_bias", "matmul_bias"]
    if cpu_jit.parallel() is not None:     # the one-row product runs the matrix-vector kernels directly
        (entry,) = fused._cache.values()
        assert {entry.compiled._replay.__globals__[f"k{i}"].__name__ for i in range(2)} == {"matmul_bias"}
    shared = _replays_like_eager(lambda x: (lambda p: (p, p + bias))(x @ w), (3, 128))
    assert [n.name for n in shared.graphs[0].nodes] == ["MatMul", "Add"]


def test_linears_of_the_same_rows_replay_in_one_launch():
    """Linears reading the same decoding row (query/key/value; gate and up, biased) replay as
    one linear_many node per group, bitwise eager's; many rows keep their own nodes."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.nn import functional as F

    rng = np.random.default_rng(0)

    def projections_of_width(width):
        q, k, v, gate, up = (core.tensor(rng.standard_normal(shape).astype(np.float32)) for shape in
                             [(width, width), (3 * width // 4, width), (3 * width // 4, width), (2 * width, width),
                              (2 * width, width)])
        gate_bias, up_bias = (core.tensor(rng.standard_normal(2 * width).astype(np.float32)) for _ in range(2))

        def projections(x):
            return (F.linear(x, q), F.linear(x, k), F.linear(x, v), F.linear(x, gate, gate_bias),
                    F.linear(x, up, up_bias))
        return projections

    for width, kernel in ((256, "linear_many"), (128, "tiny_linears")):
        # weights of more than cpu_kernels._TINY_WEIGHT elements take the matrix-vector kernel,
        # tiny ones the products on the calling thread, as eager's matmul does
        projections = projections_of_width(width)
        fused = _replays_like_eager(projections, (1, 1, width))
        assert [n.name for n in fused.graphs[0].nodes] == ["linear_many", "linear_many"]
        if cpu_jit.parallel() is not None:     # one call per group
            (entry,) = fused._cache.values()
            assert {entry.compiled._replay.__globals__[f"k{i}"].__name__ for i in range(2)} == {kernel}
        many = _replays_like_eager(projections, (40, width))
        assert [n.name for n in many.graphs[0].nodes] == ["_Linear"] * 5


def test_graph_mode_switch_compiles_top_level_models():
    import mindnlp
    from mindnlp.transformers import AutoModel

    model = AutoModel.from_pretrained(os.path.join(REPO, "tests", "fixtures", "bert", "base")).eval()
    ids, mask = _hf_batch(model, [5, 3], 0)
    with core.no_grad():
        want = model(input_ids=ids, attention_mask=mask).last_hidden_state
        mindnlp.set_context(mode=mindnlp.GRAPH_MODE)
        try:
            assert mindnlp.get_context("mode") == mindnlp.GRAPH_MODE
            for _ in range(3):
                got = model(input_ids=ids, attention_mask=mask).last_hidden_state
        finally:
            mindnlp.set_context(mode=mindnlp.PYNATIVE_MODE)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=1e-6)
    compiled = model.__dict__["_graph_call_fn"]
    assert len(compiled.graphs) == 1 and compiled.breaks == []
    with pytest.raises(ValueError, match="GRAPH_MODE"):
        mindnlp.set_context(mode="graph")


@pytest.mark.parametrize("dtype", [core.float32, core.float16, core.bfloat16, core.int64])
def test_direct_kernels_replay_like_forward(dtype):
    """Arithmetic and view nodes replay through direct NumPy kernels (lower.KERNELS) for the
    plain dtypes and as a compiled chain (passes.fuse_elementwise) for the half ones: results
    equal eager either way."""
    def fn(a, b):
        c = (2 - a) * b + a / 3 - 1
        return c.reshape(2, -1).permute(1, 0)[1:, :], (a + a).view(-1)

    compiled = core.compile(fn)
    rng = np.random.default_rng(0)
    with core.no_grad():
        for _ in range(3):
            a, b = (core.tensor(rng.integers(1, 5, (3, 4))).to(dtype) for _ in range(2))
            _assert_same(compiled(a, b), fn(a, b))
    assert compiled.breaks == [] and len(compiled.graphs) == 1


def test_decoding_step_ops_replay_through_direct_kernels():
    """A decoding step's one-row products (Linear's, fused, and GPT-2's x @ W), norms, activations
    (gated or not) and attention replay through their compiled kernels called directly (not
    the ops' forward), bit for bit as eager computes them."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.nn.functional.activation import gated_product

    if cpu_jit.load() is None or cpu_jit.parallel() is None:
        pytest.skip("the direct kernels are numba's")
    rng = np.random.default_rng(0)
    weights = [core.tensor(rng.standard_normal(shape).astype(np.float32)) for shape in
               [(128, 128), (64, 128), (64, 128), (256, 128), (256, 128), (128,), (128, 96)]]
    mask = core.tensor(np.where(np.arange(12) < 9, 0.0, -np.inf).astype(np.float32)[None, None, None])

    def step(x, keys, values):
        wq, wk, wv, wg, wu, wn, wm = weights
        h = F.rms_norm(x, (128,), wn, 1e-6)
        q = F.linear(h, wq).view(1, 1, 4, 32).transpose(1, 2)
        keys[:, :, 8:9] = F.linear(h, wk).view(1, 1, 2, 32).transpose(1, 2)
        values[:, :, 8:9] = F.linear(h, wv).view(1, 1, 2, 32).transpose(1, 2)
        attn = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask, enable_gqa=True)
        gate = F.linear(h, wg)
        return (attn.transpose(1, 2).reshape(1, 1, 128), gated_product(gate, F.linear(h, wu)),
                core.matmul(h.view(1, 128), wm), F.gelu(gate), F.gelu(gate, approximate="tanh"), F.silu(gate))

    compiled = core.compile(step)
    with core.no_grad():
        for _ in range(3):
            x = core.tensor(rng.standard_normal((1, 1, 128)).astype(np.float32))
            caches = [core.tensor(rng.standard_normal((1, 2, 12, 32)).astype(np.float32)) for _ in range(2)]
            eager_caches = [c.clone() for c in caches]
            _assert_same(compiled(x, *caches), step(x, *eager_caches))
            _assert_same(caches, eager_caches)
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    names = _kernels_by_op(compiled)
    # the five projections of h share their input: one call (passes.fuse_shared_input_linears),
    # these weights being tiny (cpu_kernels._TINY_WEIGHT), one product after the other on this thread
    ops = ("linear_many", "MatMul", "_LayerNorm", "_GatedProduct", "ScaledDotProductAttention", "_GeluExact",
           "_GeluTanh", "_Silu")
    assert [set(names[op]) for op in ops] == [{"tiny_linears"}, {"matmul"}, {"layer_norm"}, {"gated"}, {"attention"}] + [
        {"activation"}] * 3


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
def test_half_decoding_step_replays_through_direct_kernels(dtype):
    """A half model's decoding step (Llama's norm: cast to float32, normalise, cast back, scale;
    its projections, gated product and residual add) replays through compiled kernels that read
    the half arrays' bits, bit for bit as the ops' forwards compute them in float32 and round:
    the norm and its casts as one norm of the half row (passes.fold_norm_casts), the five
    projections of the normed row in one launch, the lone multiply and add as chains."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.nn.functional.activation import gated_product

    if cpu_jit.half() is None:
        pytest.skip("the half kernels are numba's, on AVX-512 or AVX2")
    rng = np.random.default_rng(0)
    weights = [core.tensor(rng.standard_normal(shape).astype(np.float32) / 8).to(dtype) for shape in
               [(128, 128), (64, 128), (64, 128), (256, 128), (256, 128), (128, 256), (128,)]]

    def step(x):
        wq, wk, wv, wg, wu, wd, wn = weights
        h = wn * F.rms_norm(x.float(), (128,), eps=1e-6).to(dtype)
        q, k, v = F.linear(h, wq), F.linear(h, wk), F.linear(h, wv)
        return q, k, v, x + F.linear(gated_product(F.linear(h, wg), F.linear(h, wu)), wd)

    compiled = core.compile(step)
    with core.no_grad():
        for _ in range(3):
            x = core.tensor(rng.standard_normal((1, 1, 128)).astype(np.float32)).to(dtype)
            _assert_same(compiled(x), step(x))
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    assert _kernels_by_op(compiled) == {"_LayerNorm": ["layer_norm_half_dtype"], "elementwise_chain": [
        "elementwise_chain", "elementwise_chain"], "linear_many": ["half_linears"],
        "_GatedProduct": ["activation_half"], "_Linear": ["half_linears"]}


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
def test_norm_of_a_half_array_cast_to_float32_and_back_is_one_node(dtype):
    """norm(x.float()).to(x.dtype) replays as one norm of the half array (it widens and rounds
    once itself), to the bit; where the float32 copy or the float32 norm is read elsewhere, the
    casts stay."""
    rng = np.random.default_rng(0)
    weight = core.tensor(rng.standard_normal(64).astype(np.float32))

    def folded(x):
        return F.rms_norm(x.float(), (64,), weight, 1e-6).to(dtype) * 3

    def kept(x):
        wide = x.float()
        normed = F.layer_norm(wide, (64,), weight, None, 1e-5)
        return normed.to(dtype), wide.sum()

    for fn, casts in ((folded, 0), (kept, 2)):
        compiled = _replays_like_eager(lambda x, fn=fn: fn(x.to(dtype)), (2, 3, 64))
        (entry,) = compiled._cache.values()
        names = [node.name for node in entry.compiled.graph.nodes]
        assert names.count("Cast") == casts + 1 and names.count("_LayerNorm") == 1     # + the input's cast


@pytest.mark.parametrize("dtype", [core.float32, core.bfloat16, core.float16])
def test_a_residual_add_and_its_norm_replay_as_one_node(dtype):
    """A residual add and the norm of its sum (Llama's RMS norm: in float32 with its weight,
    in a half dtype HF's `weight * norm(x.float()).to(dtype)`; GPT-2's layer norm with weight
    and bias) replay as one residual_norm node giving the sum, which the caller still gets, and
    the normed rows, bit for bit as eager, whether the add's operands are laid out in rows or
    strided views; passes.residual_norm, the node's reference, gives the same bits. Where the
    half norm's own result is read elsewhere, its weight product stays a node of its own; a
    prompt's rows, whose norm runs split over numba's pool, keep the separate nodes."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.jit import passes

    if cpu_jit.parallel() is None:
        pytest.skip("the fused kernel is numba's")
    rng = np.random.default_rng(0)
    half = dtype != core.float32
    weight, gamma, beta = (core.tensor(rng.standard_normal(96).astype(np.float32)).to(dtype) for _ in range(3))

    def rms(x, h):
        total = x + h
        if half:
            return total, weight * F.rms_norm(total.float(), (96,), eps=1e-6).to(dtype)
        return total, F.rms_norm(total, (96,), weight, 1e-6)

    def layer(x, h):
        total = x + h
        return total, F.layer_norm(total, (96,), gamma, beta, 1e-5)

    def layer_of_strided(x, h):     # the add's operands are views with strides (every other feature)
        return layer(x[..., ::2], h[..., ::2])

    def rms_read_twice(x, h):
        normed = F.rms_norm((x + h).float(), (96,), eps=1e-6).to(dtype)
        return weight * normed, normed

    w, g, b = (p.numpy() for p in (weight, gamma, beta))
    # (fn, shape, the nodes replayed, the reference's (weight, bias, eps, centered, scale))
    rms_reference = (None, None, 1e-6, False, w) if half else (w, None, 1e-6, False, None)
    cases = [(rms, (1, 2, 96), ["residual_norm"], rms_reference),
             (layer, (1, 2, 96), ["residual_norm"], (g, b, 1e-5, True, None)),
             (layer, (1, 200, 96), ["elementwise_chain" if half else "Add", "_LayerNorm"], None),
             (layer_of_strided, (1, 2, 192), ["Slice", "Slice", "residual_norm"], None)]
    if half:
        cases.append((rms_read_twice, (1, 2, 96), ["residual_norm", "elementwise_chain"], None))
    for fn, shape, names, reference in cases:
        compiled = core.compile(fn)
        with core.no_grad():
            for _ in range(3):
                x, h = (core.tensor(rng.standard_normal(shape).astype(np.float32)).to(dtype) for _ in range(2))
                _assert_same(compiled(x, h), fn(x, h))
        assert compiled.breaks == [] and len(compiled.graphs) == 1
        (entry,) = compiled._cache.values()
        assert [node.name for node in entry.compiled.graph.nodes if node.name != "Cast"] == names
        if reference is not None:
            p_weight, p_bias, eps, centered, scale = reference
            total, normed = passes.residual_norm(x.numpy(), h.numpy(), p_weight, p_bias, (2,), eps, centered, scale)
            _assert_same((core.tensor(total), core.tensor(normed)), fn(x, h))


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
def test_half_gpt2_like_step_replays_through_direct_kernels(dtype):
    """GPT-2's block in a half dtype: layer norms with half weight and bias, Conv1D products by
    weights stored (in, out) with biases (addmm) or without, and tanh-GELU replay through
    compiled kernels on the arrays' 16-bit values, rounded as the ops round, to the bit."""
    from mindnlp.core.backends import cpu_jit

    if cpu_jit.parallel() is None:
        pytest.skip("the direct kernels are numba's")
    rng = np.random.default_rng(0)
    w_in, b_in, w_out, gamma, beta = (core.tensor(rng.standard_normal(shape).astype(np.float32) / 4).to(dtype)
                                      for shape in [(96, 160), (160,), (160, 96), (96,), (96,)])

    def step(x):
        h = F.layer_norm(x, (96,), gamma, beta, 1e-5)
        inner = F.gelu(core.addmm(b_in, h.view(1, 96), w_in), approximate="tanh")
        return x + core.matmul(inner, w_out).view(1, 1, 96)

    compiled = core.compile(step)
    with core.no_grad():
        for _ in range(3):
            x = core.tensor(rng.standard_normal((1, 1, 96)).astype(np.float32)).to(dtype)
            _assert_same(compiled(x), step(x))
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    names = _kernels_by_op(compiled)
    assert {kernel for op in ("_LayerNorm", "BiasedMatMul", "MatMul", "_GeluTanh") for kernel in names[op]} == {
        "layer_norm_half_dtype", "half_columns", "activation_half"}


@pytest.mark.parametrize("bits,group_size,scheme,bias", [
    (8, None, "symmetric", True), (8, 32, "affine", False), (4, 32, "symmetric", True), (4, 64, "affine", False),
    (4, 64, "nf4", True)])
def test_quantized_linears_of_a_decoding_row_replay_through_their_kernels(bits, group_size, scheme, bias):
    """A quantized model's one-row products replay through the matrix-vector kernels called
    directly (not the op's forward), bit for bit as eager computes them; many rows (a prompt)
    replay through the op."""
    from mindnlp.core.backends import cpu_jit

    if cpu_jit.load() is None or cpu_jit.parallel() is None:
        pytest.skip("the direct kernels are numba's")
    rng = np.random.default_rng(0)
    layer = nn.QuantizedLinear.from_float(core.tensor(rng.standard_normal((96, 128)).astype(np.float32)),
                                          core.tensor(rng.standard_normal(96).astype(np.float32)) if bias else None,
                                          bits=bits, group_size=group_size, scheme=scheme)
    for rows, kernel in ((1, "quantized_linear"), (40, "run_flat")):
        compiled = _replays_like_eager(lambda x: layer(x), (1, rows, 128))
        (entry,) = compiled._cache.values()
        assert entry.compiled._replay.__globals__["k0"].__name__ == kernel


@pytest.mark.parametrize("bits,group_size,scheme,bias", [
    (8, None, "symmetric", True), (8, 32, "affine", False), (4, 32, "symmetric", True), (4, 64, "affine", False),
    (4, 64, "nf4", True)])
def test_quantized_linears_sharing_a_decoding_row_replay_in_one_launch(bits, group_size, scheme, bias):
    """Quantized projections of one row of one format (a step's query/key/value) replay as one
    launch of the quantized kernels (passes.fuse_shared_input_linears), each output bit for bit
    as eager; a layer of another format reading the same row stays a node of its own."""
    from mindnlp.core.backends import cpu_jit

    if cpu_jit.quantized() is None or cpu_jit.parallel() is None:
        pytest.skip("the quantized kernels are numba's")
    rng = np.random.default_rng(1)

    def quantized(n, layer_bits=bits, layer_scheme=scheme):
        return nn.QuantizedLinear.from_float(
            core.tensor(rng.standard_normal((n, 128)).astype(np.float32)),
            core.tensor(rng.standard_normal(n).astype(np.float32)) if bias else None,
            bits=layer_bits, group_size=group_size if layer_bits == bits else 64, scheme=layer_scheme)

    shared = [quantized(n) for n in (96, 32, 40)]
    other = quantized(24, 12 - bits, "symmetric")
    compiled = _replays_like_eager(lambda x: tuple(layer(x) for layer in shared + [other]), (1, 1, 128))
    (entry,) = compiled._cache.values()
    kernels = entry.compiled._replay.__globals__
    names = [kernels[f"k{i}"].__name__ for i in range(len(entry.compiled.graph.nodes))]
    assert names == ["quantized_linear_many", "quantized_linear"]


def test_quantized_replay_follows_a_replaced_weight():
    """A replay plans each quantized product once for the weights it meets; a weight whose
    array is replaced after that (new scales loaded into a layer) is planned again, so the
    replay keeps computing what eager computes."""
    from mindnlp.core.backends import cpu_jit

    if cpu_jit.quantized() is None or cpu_jit.parallel() is None:
        pytest.skip("the quantized kernels are numba's")
    rng = np.random.default_rng(2)
    layers = [nn.QuantizedLinear.from_float(core.tensor(rng.standard_normal((n, 128)).astype(np.float32)), None,
                                            bits=4, group_size=64, scheme="affine") for n in (64, 32)]
    compiled = _replays_like_eager(lambda x: tuple(layer(x) for layer in layers) + (layers[0](x * 2),),
                                   (1, 1, 128))
    for layer in layers:
        layer.weight_scale.data = layer.weight_scale.data * 3
    x, = _inputs(5, (1, 1, 128))
    with core.no_grad():
        _assert_same(compiled(x), tuple(layer(x) for layer in layers) + (layers[0](x * 2),))
    assert len(compiled.graphs) == 1


def _chain_programs(compiled):
    (entry,) = compiled._cache.values()
    return [node.args[0] for node in entry.compiled.graph.nodes if node.name == "elementwise_chain"]


def _needs_chains():
    from mindnlp.core.backends import cpu_jit

    if cpu_jit.chains() is None:
        pytest.skip("chains are compiled with numba")


def test_elementwise_chains_replay_as_one_loop_with_the_eager_bits():
    """Elementwise ops feeding one another (a hand-written norm, a scaled residual, masked
    scores) replay as one compiled loop per chain, reading inputs of every broadcast (full, a
    row, a column, one element, a block of rows such as a mask) and Python numbers, bit for bit
    as eager, infinities, NaN and signed zeros included. A result the caller also receives
    ends a chain, and a chain keeps one shape (the column statistic is one chain, the rows it
    scales another). Empty results stay op by op."""
    _needs_chains()

    def block(x, w, col, one, r, mask):
        h = x * core.rsqrt(col.abs() + 1e-6) * w
        scaled = x * 3
        return (r + h * 0.5 - one, (x - 1.0) / (x.abs() - 2) * 3, core.sqrt(x.square() + one).reciprocal().neg(),
                scaled, scaled / 2 + 1, (x / 8 + mask) * 2)

    compiled = _replays_like_eager(block, (2, 5, 8), (8,), (2, 5, 1), (), (2, 5, 8), (5, 8))
    programs = _chain_programs(compiled)
    assert [[step[0] for step in program] for program in programs] == [
        ["abs", "add", "rsqrt"], ["mul", "mul", "mul", "add", "sub"], ["sub", "abs", "sub", "div", "mul"],
        ["square", "add", "sqrt", "reciprocal", "neg"], ["div", "add"], ["div", "add", "mul"]]
    _replays_like_eager(block, (2, 5, 0), (0,), (2, 5, 1), (), (2, 5, 0), (5, 0))
    special = core.tensor(np.array([0.0, -0.0, 2.0, -2.0, np.inf, -np.inf, np.nan, 1e-30], np.float32).reshape(1, 1, 8))
    with core.no_grad():
        args = [special, special[0, 0], core.zeros(1, 1, 1), core.tensor(-0.0), special, special[0]]
        _assert_same(compiled(*args), block(*args))


def test_an_elementwise_chain_loop_equals_its_reference_op_by_op():
    """cpu_jit_chains' generated loop, on inputs of every broadcast kind, rows split in two
    ranges as the workers split them, gives the bits of passes.elementwise_chain, the
    instructions computed one by one with the ops' NumPy calls."""
    _needs_chains()
    from mindnlp.core.backends import cpu_jit_chains
    from mindnlp.core.jit import passes

    program = (("mul", ("in", 0), ("in", 1)), ("sub", ("tmp", 0), ("in", 2)), ("div", ("const", 3), ("tmp", 1)),
               ("rsqrt", ("in", 3)), ("add", ("tmp", 2), ("tmp", 3)), ("reciprocal", ("in", 4)),
               ("square", ("tmp", 5)), ("neg", ("tmp", 6)), ("abs", ("tmp", 4)), ("sqrt", ("tmp", 8)),
               ("mul", ("tmp", 9), ("tmp", 7)))
    rng = np.random.default_rng(3)
    shape = (2, 3, 5)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (shape, (5,), (2, 3, 1), (1, 1, 1), (3, 5))]
    arrays[3] = np.abs(arrays[3])
    kinds = tuple(passes.broadcast_kind(a.shape, shape) for a in arrays)
    assert kinds == ("full", "row", "column", "one", "block")
    views = [a.reshape(v) for a, v in zip(arrays, [(6, 5), (5,), (6,), (1,), (-1, 5)])]
    loop = cpu_jit_chains.loop(program, kinds)
    out = np.empty((6, 5), np.float32)
    loop(0, 4, out, *views)
    loop(4, 6, out, *views)
    np.testing.assert_array_equal(out.reshape(shape), passes.elementwise_chain(program, *arrays))


def test_an_elementwise_chain_is_not_moved_past_a_write_into_its_input():
    """A chain whose input is written in place between its first op and its last stays op by
    op: run together at the last op's place, the first would read the written value."""
    _needs_chains()

    def step(x):
        t = x.clone()
        doubled = t * 2
        t.add_(1)
        return doubled - 1, t

    compiled = core.compile(step)
    for seed in range(3):
        x, = _inputs(seed, (4, 3))
        _assert_same(compiled(x), step(x))
    assert compiled.breaks == [] and _chain_programs(compiled) == []


def test_replay_frames_outgrow_a_data_stack_chunk():
    """replay's frame is padded past CPython's 16 KiB frame-stack chunk, so that it gets a
    chunk of its own with room for its kernels' calls (a frame that just fits the first chunk
    makes every kernel call map and unmap one), and the padding changes no result."""
    from mindnlp.core.jit import lower

    compiled = core.compile(lambda x, y: (x * y).exp() + y)
    x, y = _inputs(7, (3, 4), (3, 4))
    compiled(x, y)
    result = compiled(x, y)
    np.testing.assert_array_equal(result.numpy(), ((x * y).exp() + y).numpy())
    (entry,) = compiled._cache.values()
    code = entry.compiled._replay.__code__
    assert code.co_nlocals + code.co_stacksize >= lower._FRAME_CHUNK_WORDS
    assert "frame padding" in entry.compiled.source


def test_replay_drops_each_intermediate_after_its_last_read():
    """An intermediate's array is released as soon as nothing after it reads it (its memory is
    reused while still in cache), never an output, a view an output keeps, or a rebound input."""
    from mindnlp.core.jit import lower

    def step(x, y, cache):
        a = x * y                   # read by b and c only
        b = a + 1.0
        c = (a * b).exp()
        cache.copy_(c)              # an input written in place
        return c.reshape(-1)[:5], b.sum()

    compiled = core.compile(step)
    x, y = _inputs(11, (3, 4), (3, 4))
    caches = [core.zeros(3, 4), core.zeros(3, 4)]
    compiled(x, y, caches[0])
    _assert_same(compiled(x, y, caches[0]), step(x, y, caches[1]))
    _assert_same(caches[0], caches[1])
    (entry,) = compiled._cache.values()
    graph, source = entry.compiled.graph, entry.compiled.source
    released = lower._releases(graph)
    dropped = {slot for slots in released for slot in slots}
    kept = set(graph.output_slots()) | set(graph.rebinds.values())
    assert dropped and not dropped & kept
    for i, slots in enumerate(released):
        for slot in slots:
            assert all(slot not in node.reads() for node in graph.nodes[i + 1:])
    deleted = {name for line in source.splitlines() if line.strip().startswith("del ")
               for name in line.strip()[4:].split(", ")}
    assert deleted == {f"s{slot}" for slot in dropped}


def _planned_step():
    """A decoding-like step whose intermediates the direct kernels write (norms, one-row
    products, an activation, residual adds), returning a view of one of them."""
    rng = np.random.default_rng(3)
    w1, w2, n1, n2 = (core.tensor(rng.standard_normal(s).astype(np.float32))
                      for s in [(256, 128), (128, 256), (128,), (128,)])

    def step(x):
        h = F.rms_norm(x, (128,), n1, 1e-6)
        up = F.gelu(F.linear(h, w1))
        y = x + F.linear(up, w2)
        z = F.rms_norm(y, (128,), n2, 1e-6) + h       # h is alive while the second norm writes
        return z.view(128)[:64], F.layer_norm(y, (128,)) * 2.0
    return step


def test_intermediates_are_planned_into_shared_buffers():
    """The direct kernels' intermediates are written into buffers made once, shared by those
    whose lives do not overlap: a buffer is never an operand's of the node writing it, and no
    output, nor a view an output keeps, is planned."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.core.jit import lower

    if cpu_jit.load() is None or cpu_jit.parallel() is None:
        pytest.skip("the kernels that write into planned buffers are numba's")
    step = _planned_step()
    compiled = core.compile(step)
    with core.no_grad():
        x, = _inputs(0, (1, 1, 128))
        compiled(x)
    (entry,) = compiled._cache.values()
    graph, replay = entry.compiled.graph, entry.compiled
    writes_into = {i: replay._replay.__globals__[f"k{i}"].writes_into for i in range(len(graph.nodes))
                   if getattr(replay._replay.__globals__[f"k{i}"], "writes_into", None)}
    assigned, specs = lower.plan_buffers(graph, writes_into)
    assert specs == replay.buffer_specs and len(specs) < len(assigned)      # some buffers are shared
    escaping = set(graph.output_slots()) | set(graph.rebinds.values())
    assert not {graph.slots[s].root for s in escaping} & set(assigned)
    born, last = {}, {}
    for i, node in enumerate(graph.nodes):
        for s in node.outputs:
            if s is not None:
                born.setdefault(s, i)
        for s in node.reads():
            last[graph.slots[s].root] = i
            assert assigned.get(graph.slots[s].root) not in [assigned.get(o) for o in node.outputs if o in assigned]
    lives = {s: (born[s], last.get(s, born[s])) for s in assigned}
    for s in assigned:
        for t in assigned:
            if s < t and assigned[s] == assigned[t]:
                assert lives[s][1] < lives[t][0] or lives[t][1] < lives[s][0]


def test_planned_replays_keep_earlier_outputs_and_threads_apart():
    """Outputs of a replay are the caller's: later replays (writing their intermediates into
    the same planned buffers) leave them as they were, and replays on two threads at once
    each compute their own call's values."""
    import threading

    step = _planned_step()
    compiled = core.compile(step)
    inputs = [_inputs(seed, (1, 1, 128))[0] for seed in range(6)]
    with core.no_grad():
        expected = [step(x) for x in inputs]
        kept = [compiled(x) for x in inputs]
    for got, want in zip(kept, expected):
        _assert_same(got, want)
    failures = []

    def replay_many(order):
        with core.no_grad():
            for _ in range(20):
                for i in order:
                    got = compiled(inputs[i])
                    if not all(np.array_equal(g.numpy(), w.numpy()) for g, w in zip(got, expected[i])):
                        failures.append(i)
    threads = [threading.Thread(target=replay_many, args=(order,)) for order in ([0, 1, 2, 3, 4, 5], [5, 3, 1, 4, 2, 0])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == [] and compiled.breaks == [] and len(compiled.graphs) == 1


def _reused_under_a_reshape(a, b):
    flat = (a.t() + b.t()).reshape(-1)
    other = a.t() * 2.0 + 1.0          # a result of the same shape, after the sum's last direct read
    return flat * 1.0 + other.reshape(-1)


def _written_through_a_reshape(a, b):
    total = a.t() + b.t()
    flat = total.reshape(-1)
    flat.add_(1.0)                      # in place on what is a copy in eager
    return total * 1.0, flat


def _chain_written_through_a_reshape(a, b):
    chained = a.t() * b.t() + 1.0       # an elementwise chain (passes.fuse_elementwise)
    flat = chained.reshape(-1)
    flat.add_(1.0)
    return chained * 1.0, flat


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize("step", [_reused_under_a_reshape, _written_through_a_reshape,
                                  _chain_written_through_a_reshape])
def test_replays_keep_the_layout_eager_gave(step, validate, monkeypatch):
    """An elementwise result of transposed operands is column-ordered in eager, so reshaping it
    copies; written row-ordered (into a planned buffer, or a new array), the same reshape would
    be a view the graph does not know of, and a later write or reuse would show through it.
    Such results keep eager's layout: the graph replays (no break) and equals eager."""
    from mindnlp.core.jit.compile import config

    monkeypatch.setattr(config, "validate", validate)
    _replays_like_eager(step, (3, 4), (3, 4), calls=4)
