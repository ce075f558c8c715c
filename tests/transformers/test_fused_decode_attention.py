"""The fused decoding attention of compiled replays (transformers.fused_decode_attention).

A rotary decoder's decode step captures its head splits, rotations, cache writes, attention
and output reshapes as twelve nodes per layer; the pass replaces them by one node that must
give the same bits, write the same cache rows, and leave every other graph alone.
"""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit
from mindnlp.core.jit import passes
from mindnlp.transformers import AutoModelForCausalLM
from mindnlp.transformers import fused_decode_attention as fused

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
needs_compiled_loops = pytest.mark.skipif(cpu_jit.load() is None, reason="needs numba's compiled loops")


def _model(name, dtype=None):
    folder = os.path.join(FIXTURES, "decoders", name, "model")
    return AutoModelForCausalLM.from_pretrained(folder, **({"dtype": dtype} if dtype else {})).eval()


def _decode(model, compiled, ids):
    if compiled:
        model.generation_config.cache_implementation = "static"
        model.forward = core.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    out = model.generate(ids, max_new_tokens=8, do_sample=False, return_dict_in_generate=True, output_scores=True)
    return out.sequences.tolist(), np.stack([s.numpy() for s in out.scores]), model.forward


def _decode_graph(forward):
    """The graph a compiled forward replays for decoding steps (one query position)."""
    entries = [e.compiled for e in forward._cache.values() if e.compiled is not None]
    return next(c for c in entries if c.graph.slots[c.graph.inputs[0]].shape[-1] == 1)


def _ops(graph):
    return [node.op for node in graph.nodes]


@needs_compiled_loops
@pytest.mark.parametrize("name", ["llama", "qwen2", "gemma", "opt"])     # OPT: no rotation
def test_fused_decoding_gives_the_unfused_bits(name, monkeypatch):
    ids = core.tensor(np.random.default_rng(0).integers(0, 99, (1, 6)))
    tokens, scores, forward = _decode(_model(name), True, ids)
    graph = _decode_graph(forward).graph
    config = _model(name).config
    # Qwen2's sliding layer shifts its rolling cache's rows before the write: not the pattern
    types = getattr(config, "layer_types", None) or ["full_attention"] * config.num_hidden_layers
    assert _ops(graph).count(fused.decode_attention) == types.count("full_attention") > 0
    if types.count("full_attention") == len(types):
        assert fused._Rotary not in _ops(graph) and fused._SplitHeads not in _ops(graph)

    monkeypatch.setattr(passes, "_REGISTERED", [])
    unfused_tokens, unfused_scores, unfused_forward = _decode(_model(name), True, ids)
    assert fused.decode_attention not in _ops(_decode_graph(unfused_forward).graph)
    assert tokens == unfused_tokens
    np.testing.assert_array_equal(scores, unfused_scores)
    eager_tokens, eager_scores, _ = _decode(_model(name), False, ids)
    assert tokens == eager_tokens
    np.testing.assert_allclose(scores, eager_scores, atol=1e-5)


def _gpt2():
    from mindnlp.transformers import GPT2Config, GPT2LMHeadModel

    core.manual_seed(0)
    config = GPT2Config(vocab_size=99, n_positions=64, n_embd=32, n_layer=2, n_head=4, bos_token_id=0,
                        eos_token_id=0)
    return GPT2LMHeadModel(config).eval()


@needs_compiled_loops
def test_gpt2_decoding_is_fused_with_the_unfused_and_eager_results(monkeypatch):
    """GPT-2's heads are sliced from one projection and not rotated, and its output projection
    reshapes the attention's rows first (a view of the fused node's output): still the
    pattern, with the unfused replay's bits and eager's tokens."""
    ids = core.tensor(np.random.default_rng(2).integers(0, 99, (1, 6)))
    tokens, scores, forward = _decode(_gpt2(), True, ids)
    assert _ops(_decode_graph(forward).graph).count(fused.decode_attention) == 2
    monkeypatch.setattr(passes, "_REGISTERED", [])
    unfused_tokens, unfused_scores, _ = _decode(_gpt2(), True, ids)
    eager_tokens, eager_scores, _ = _decode(_gpt2(), False, ids)
    assert tokens == unfused_tokens == eager_tokens
    np.testing.assert_array_equal(scores, unfused_scores)
    np.testing.assert_allclose(scores, eager_scores, atol=1e-5)


@needs_compiled_loops
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_fused_half_decoding_gives_the_unfused_and_eager_bits(dtype, monkeypatch):
    """A half model's fused node widens the query and mask and rounds the output as the unfused
    attention's replay does: the same scores to the bit, which are eager's too."""
    ids = core.tensor(np.random.default_rng(5).integers(0, 99, (1, 5)))
    tokens, scores, forward = _decode(_model("llama", dtype), True, ids)
    assert _ops(_decode_graph(forward).graph).count(fused.decode_attention) == _model("llama").config.num_hidden_layers
    monkeypatch.setattr(passes, "_REGISTERED", [])
    unfused_tokens, unfused_scores, _ = _decode(_model("llama", dtype), True, ids)
    eager_tokens, eager_scores, _ = _decode(_model("llama", dtype), False, ids)
    assert tokens == unfused_tokens == eager_tokens
    np.testing.assert_array_equal(scores, unfused_scores)
    np.testing.assert_array_equal(scores, eager_scores)


@needs_compiled_loops
@pytest.mark.parametrize("name", ["gpt_neox", "phi", "qwen3", "mistral"])
def test_graphs_without_the_pattern_keep_their_nodes(name):
    """Not the pattern, so their attention stays as captured: GPT-NeoX and Phi rotate part of
    each head (a slice, a rotation and a concatenation), Qwen3 normalises each head before
    rotating it, and Mistral's sliding window shifts its rolling cache before the write."""
    ids = core.tensor(np.random.default_rng(1).integers(0, 99, (1, 5)))
    tokens, scores, forward = _decode(_model(name), True, ids)
    assert fused.decode_attention not in _ops(_decode_graph(forward).graph)
    eager_tokens, eager_scores, _ = _decode(_model(name), False, ids)
    assert tokens == eager_tokens
    np.testing.assert_allclose(scores, eager_scores, atol=1e-5)


def _rotate(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


def _inputs(rng, batch=1, heads=4, kv_heads=2, depth=8, keys=6):
    f32 = np.float32
    xq = rng.standard_normal((batch, 1, heads * depth)).astype(f32)
    xk, xv = (rng.standard_normal((batch, 1, kv_heads * depth)).astype(f32) for _ in range(2))
    angles = rng.standard_normal((1, 1, depth // 2)).astype(f32)
    cos, sin = np.cos(np.concatenate([angles] * 2, -1)), np.sin(np.concatenate([angles] * 2, -1))
    k_cache, v_cache = (rng.standard_normal((batch, kv_heads, keys, depth)).astype(f32) for _ in range(2))
    mask = np.where(np.arange(keys) < 4, 0.0, np.finfo(f32).min).astype(f32).reshape(1, 1, 1, keys)
    return [xq, xk, xv, cos, sin, k_cache, v_cache, np.array([3]), mask]


@pytest.mark.parametrize("rotated", [True, False])
def test_decode_attention_is_rotary_attention_over_the_written_cache(rotated):
    """The node's own function against rotary embedding (or none: cos and sin None), the cache
    write and grouped-query attention spelled out in float64."""
    rng = np.random.default_rng(2)
    xq, xk, xv, cos, sin, k_cache, v_cache, position, mask = _inputs(rng)
    if not rotated:
        cos = sin = None
    k_before = k_cache.copy()
    out = fused.decode_attention(xq, xk, xv, cos, sin, k_cache, v_cache, position, mask, 0.5, 2, 8)

    q = xq.reshape(1, 1, 4, 8).transpose(0, 2, 1, 3).astype(np.float64)
    k_new = xk.reshape(1, 1, 2, 8).transpose(0, 2, 1, 3).astype(np.float64)
    if rotated:
        q, k_new = _rotate(q, cos, sin), _rotate(k_new, cos, sin)
    keys, values = k_before.astype(np.float64), v_cache.astype(np.float64).copy()
    keys[:, :, 3:4], values[:, :, 3:4] = k_new, xv.reshape(1, 2, 1, 8)
    np.testing.assert_allclose(k_cache, keys, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(v_cache[:, :, 3], xv.reshape(1, 2, 8))
    keys, values = np.repeat(keys, 2, axis=1), np.repeat(values, 2, axis=1)
    scores = q @ keys.transpose(0, 1, 3, 2) * 0.5 + mask
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (probs / probs.sum(-1, keepdims=True)) @ values
    np.testing.assert_allclose(out, expected.transpose(0, 2, 1, 3).reshape(1, 1, 32), rtol=1e-5, atol=1e-6)


@needs_compiled_loops
@pytest.mark.parametrize("name,dtype", [("llama", None), ("llama", "bfloat16"), ("opt", None)])
def test_the_replay_kernel_gives_the_function_bits_and_its_errors(name, dtype):
    """The kernel the replay calls against the node's function on the same arrays: the same
    output and cache rows to the bit; a position past the cache raises as the cache write
    did, and a negative one writes where NumPy's index puts it. OPT rotates nothing: its node
    reads no cos and sin."""
    ids = core.tensor(np.random.default_rng(3).integers(0, 99, (1, 4)))
    _, _, forward = _decode(_model(name, dtype), True, ids)
    compiled = _decode_graph(forward)
    index = _ops(compiled.graph).index(fused.decode_attention)
    node, kernel = compiled.graph.nodes[index], compiled._replay.__globals__[f"k{index}"]
    reads = node.reads()
    shapes = [compiled.graph.slots[s].shape for s in reads]
    types = [compiled.graph.slots[s].dtype for s in reads]
    out_shape, out_type = compiled.graph.slots[node.outputs[0]].shape, compiled.graph.slots[node.outputs[0]].dtype
    scale, groups, depth = node.args[9:]
    k_at, v_at, position_at, mask_at = (reads.index(node.args[i].slot) for i in (5, 6, 7, 8))
    rng = np.random.default_rng(4)
    keys = shapes[k_at][2]

    def function(arrays):       # the node's function on the kernel's arrays, cos and sin None where not read
        given = dict(zip(reads, arrays))
        return fused.decode_attention(*[None if a is None else given[a.slot] for a in node.args[:9]], scale, groups,
                                      depth)

    for position in (2, -1, keys):
        arrays = [rng.standard_normal(s).astype(t) for s, t in zip(shapes, types)]
        arrays[position_at] = np.array([position])
        arrays[mask_at] = np.where(np.arange(keys) <= position % keys, 0.0, -np.inf).astype(
            types[mask_at]).reshape(shapes[mask_at])
        mine = [a.copy() for a in arrays]
        if position == keys:
            with pytest.raises(IndexError):
                function(arrays)
            with pytest.raises(IndexError):
                kernel(*mine, np.empty(out_shape, out_type))
            continue
        want = function(arrays)
        got = kernel(*mine, np.empty(out_shape, out_type))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(mine[k_at], arrays[k_at])
        np.testing.assert_array_equal(mine[v_at], arrays[v_at])
