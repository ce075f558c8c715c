"""HF's compiled-generation recipe: a static cache and `core.compile(model.forward, fullgraph=True)`.

Each decode step must replay one captured graph (its cache writes replayed in place) and
generate exactly the ids eager decoding does, with and without padding, and for
sliding-window models before and after their window fills.
"""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import AutoModelForCausalLM
from mindnlp.transformers.cache_utils import DynamicCache, StaticCache

from ..models.decoder_parity import PAD, Case

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")
# Mixtral's experts run without host-side grouping in the graph (gathering the chosen experts'
# weights for a decode step); LongRoPE picks its factors inside the graph; Falcon's ALiBi bias,
# built over the attention mask's keys, spans a static cache's slots.
MODELS = {"gpt2": os.path.join(FIXTURES, "gpt2", "gpt2", "model"),
          **{name: os.path.join(FIXTURES, "decoders", name, "model")
             for name in ("llama", "mixtral", "llama_rope_longrope", "falcon_alibi")}}


def _input_shapes(compiled):
    """The (batch, length) of the ids each captured graph takes: (rows, 1) for a decode step,
    a prompt's for a prefill replayed in a reused static cache."""
    return sorted(tuple(g.slots[g.inputs[0]].shape) for g in compiled.graphs)


def _compiled(model):
    model.generation_config.cache_implementation = "static"
    model.forward = core.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    return model.forward


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_static_decoding_equals_eager(name):
    eager = AutoModelForCausalLM.from_pretrained(MODELS[name]).eval()
    model = AutoModelForCausalLM.from_pretrained(MODELS[name]).eval()
    compiled = _compiled(model)
    model.generation_config.max_cache_len = 32      # one cache shape for every prompt below
    rng = np.random.default_rng(0)
    kwargs = dict(max_new_tokens=10, do_sample=False, return_dict_in_generate=True, output_scores=True)
    caches = []
    for length in (5, 5, 8):
        ids = core.tensor(rng.integers(0, eager.config.vocab_size, (1, length)))
        want = eager.generate(ids, **kwargs)
        got = model.generate(ids, **kwargs)
        assert got.sequences.tolist() == want.sequences.tolist()
        for a, b in zip(got.scores, want.scores):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-4)
        assert isinstance(got.past_key_values, StaticCache)
        caches.append(got.past_key_values)
    assert compiled.breaks == []
    # As HF, the model keeps its static cache across calls, reset: the first prompt allocates
    # it (an eager call), later prompts replay a graph per length, every decode step one graph.
    assert caches[0] is caches[1] is caches[2] is model._cache
    assert _input_shapes(compiled) == [(1, 1), (1, 5), (1, 8)]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_compiled_half_decoding_equals_eager_bit_for_bit(dtype):
    """A model loaded in a half dtype (what dtype="auto" gives most checkpoints) decodes compiled
    exactly as eagerly: its projections, norms' casts, rotations, attention over the half cache
    and residual adds replay through kernels that round as the ops do, so every score is the
    same to the bit."""
    from mindnlp.core.backends import cpu_jit

    eager = AutoModelForCausalLM.from_pretrained(MODELS["llama"], dtype=dtype).eval()
    model = AutoModelForCausalLM.from_pretrained(MODELS["llama"], dtype=dtype).eval()
    compiled = _compiled(model)
    rng = np.random.default_rng(1)
    kwargs = dict(max_new_tokens=10, do_sample=False, return_dict_in_generate=True, output_scores=True)
    for length in (5, 7):
        ids = core.tensor(rng.integers(0, eager.config.vocab_size, (1, length)))
        want, got = eager.generate(ids, **kwargs), model.generate(ids, **kwargs)
        assert got.sequences.tolist() == want.sequences.tolist()
        for a, b in zip(got.scores, want.scores):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert compiled.breaks == []
    if cpu_jit.half() is not None:
        entry = next(iter(compiled._cache.values()))
        kernels = entry.compiled._replay.__globals__
        graph, half = entry.compiled.graph, getattr(core, dtype).np_dtype

        def of_half_arrays(node):       # not the casts of positions to float32 for the rotary angles
            return any(graph.slots[s].dtype == half for s in node.reads() + list(node.outputs[:1]))
        names = {kernels[f"k{i}"].__name__ for i, node in enumerate(graph.nodes)
                 if node.name in ("_Rotary", "linear_many", "Cast", "ScaledDotProductAttention", "decode_attention")
                 and of_half_arrays(node)}
        # the rotations and attention run inside the fused decoding attention's kernel
        # (transformers.fused_decode_attention), not its eager function
        assert names == {"half_linears", "widen", "narrow", "attend"}


# One family of each sliding-window kind (window 4 in the fixtures): Mistral slides on every
# layer, Gemma 2 alternates sliding and full layers, gpt-oss alternates them with attention sinks.
@pytest.mark.parametrize("name", ["mistral", "gemma2", "gpt_oss"])
def test_compiled_sliding_window_decoding_equals_eager_and_hf(name):
    """Prompts shorter and longer than the window, 10 new tokens crossing it: the same ids and
    scores as eager decoding with a dynamic cache, one graph for every step, and HF's greedy
    generations (left-padded batch and single prompt)."""
    case = Case(name, None, None)
    eager = AutoModelForCausalLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    model = AutoModelForCausalLM.from_pretrained(os.path.join(case.dir, "model")).eval()
    compiled = _compiled(model)
    model.generation_config.max_cache_len = 32
    kwargs = dict(max_new_tokens=10, do_sample=False, return_dict_in_generate=True, output_scores=True)
    rng = np.random.default_rng(2)
    for length in (2, eager.config.sliding_window + 5):
        ids = core.tensor(rng.integers(1, eager.config.vocab_size, (1, length)))
        want = eager.generate(ids, **kwargs)
        got = model.generate(ids, **kwargs)
        assert got.sequences.tolist() == want.sequences.tolist()
        for a, b in zip(got.scores, want.scores):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
    # a cache with sliding layers is made anew for each call (its prompt runs eagerly)
    assert compiled.breaks == [] and _input_shapes(compiled) == [(1, 1)]
    single = model.generate(core.tensor([case.prompts[0]]), do_sample=False, max_new_tokens=10, pad_token_id=PAD)
    np.testing.assert_array_equal(single.numpy(), case.expected["greedy_single"])
    ids, mask = case.padded("left")
    batch = model.generate(ids, attention_mask=mask, do_sample=False, max_new_tokens=10, pad_token_id=PAD)
    np.testing.assert_array_equal(batch.numpy(), case.expected["greedy"])
    assert compiled.breaks == [] and _input_shapes(compiled) == [(1, 1), (3, 1)]     # batch 1 and batch 3


def test_compiled_decoding_with_left_padding_equals_eager():
    eager = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    model = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    compiled = _compiled(model)
    ids = core.tensor(np.random.default_rng(1).integers(1, eager.config.vocab_size, (2, 6)))
    mask = core.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    kwargs = dict(attention_mask=mask, max_new_tokens=8, do_sample=False, pad_token_id=0)
    assert model.generate(ids, **kwargs).tolist() == eager.generate(ids, **kwargs).tolist()
    assert model.generate(ids, **kwargs).tolist() == eager.generate(ids, **kwargs).tolist()
    # the second call's padded prompt replays in the first call's cache, reset
    assert compiled.breaks == [] and _input_shapes(compiled) == [(2, 1), (2, 6)]


@pytest.mark.parametrize("path", [MODELS["llama"], os.path.join(FIXTURES, "decoders", "gemma2", "model")],
                         ids=["llama", "gemma2"])
def test_replayed_steps_write_the_static_cache(path):
    """The cache a compiled step leaves equals the one an eager step leaves (positions included),
    for Gemma 2 also its sliding layers' window buffers, rolled once the window (4) is full."""
    model = AutoModelForCausalLM.from_pretrained(path).eval()
    step = core.compile(model.forward, fullgraph=True)
    caches = [StaticCache(config=model.config, max_cache_len=12) for _ in range(2)]
    prompt = core.tensor([[3, 1]])
    with core.no_grad():
        for cache in caches:
            model(prompt, past_key_values=cache, cache_position=core.arange(2))
        for position, token in enumerate((9, 2, 6, 5, 3, 5), start=2):
            args = dict(input_ids=core.tensor([[token]]), cache_position=core.tensor([position]),
                        position_ids=core.tensor([[position]]))
            got = step(past_key_values=caches[0], **args)
            want = model(past_key_values=caches[1], **args)
            np.testing.assert_array_equal(got.logits.numpy(), want.logits.numpy())
            assert got.past_key_values is caches[0]
    assert len(step.graphs) == 1 and step.breaks == []
    for a, b in zip(caches[0].layers, caches[1].layers):
        np.testing.assert_array_equal(a.keys.numpy(), b.keys.numpy())
        np.testing.assert_array_equal(a.values.numpy(), b.values.numpy())
        assert a.get_seq_length() == b.get_seq_length() == 8


def test_a_dynamic_cache_runs_eagerly_with_a_reason():
    model = AutoModelForCausalLM.from_pretrained(MODELS["gpt2"]).eval()
    step = core.compile(model.forward)
    with core.no_grad():
        cache = DynamicCache()
        out = step(core.tensor([[1, 2, 3]]), past_key_values=cache)
    assert out.past_key_values is cache and cache.get_seq_length() == 3
    assert step.graphs == [] and "DynamicCache" in step.breaks[0]
    with pytest.raises(core.compiler.GraphBreak, match="DynamicCache"):
        core.compile(model.forward, fullgraph=True)(core.tensor([[1]]), past_key_values=DynamicCache())


def test_graph_mode_generation_with_a_static_cache():
    """Under mindnlp.set_context(mode=GRAPH_MODE) generate()'s forward calls run compiled."""
    import mindnlp

    eager = AutoModelForCausalLM.from_pretrained(MODELS["gpt2"]).eval()
    ids = core.tensor([[7, 3, 9, 1]])
    want = eager.generate(ids, max_new_tokens=8, do_sample=False)
    mindnlp.set_context(mode=mindnlp.GRAPH_MODE)
    try:
        got = eager.generate(ids, max_new_tokens=8, do_sample=False, cache_implementation="static")
    finally:
        mindnlp.set_context(mode=mindnlp.PYNATIVE_MODE)
    assert got.tolist() == want.tolist()
    compiled = eager.__dict__["_graph_call_fn"]
    assert compiled.breaks == [] and len(compiled.graphs) == 1


def test_generate_compiles_decoding_steps_where_compile_config_asks():
    """HF's automatic compilation: with a static cache and `compile_config._compile_all_devices`
    (on a CPU; HF compiles by itself only on accelerators), generate() runs the decoding steps
    through `get_compiled_call`, the prompt's pass eagerly; the ids are eager's."""
    from mindnlp.transformers import CompileConfig

    eager = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    model = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    ids = core.tensor([[5, 9, 17, 3]])
    kwargs = dict(max_new_tokens=8, do_sample=False, cache_implementation="static")
    want = eager.generate(ids, **kwargs)
    assert "_compiled_call" not in model.__dict__  # a static cache alone leaves a CPU eager, as in HF
    compile_config = CompileConfig(fullgraph=True)
    compile_config._compile_all_devices = True
    got = model.generate(ids, compile_config=compile_config, **kwargs)
    assert got.tolist() == want.tolist()
    compiled = model._compiled_call
    assert compiled.breaks == [] and len(compiled.graphs) == 1
    assert model.get_compiled_call(compile_config) is compiled  # kept while the config is the same
    assert model.get_compiled_call(CompileConfig(fullgraph=False)) is not compiled


def test_generate_keeps_its_static_cache_while_it_fits():
    """As HF's _prepare_static_cache: the model keeps its static cache across generate() calls,
    reset and reused for as many rows and no more positions than it holds; a new one for
    another batch size, more positions, another dtype, or sliding-window layers."""
    model = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    model.generation_config.cache_implementation = "static"
    reference = AutoModelForCausalLM.from_pretrained(MODELS["llama"]).eval()
    rng = np.random.default_rng(3)
    kwargs = dict(do_sample=False, return_dict_in_generate=True)

    def generate(rows, length, new_tokens):
        ids = core.tensor(rng.integers(1, model.config.vocab_size, (rows, length)))
        got = model.generate(ids, max_new_tokens=new_tokens, **kwargs)
        want = reference.generate(ids, max_new_tokens=new_tokens, **kwargs)      # a dynamic cache
        assert got.sequences.tolist() == want.sequences.tolist()
        return got.past_key_values

    first = generate(1, 6, 8)
    assert generate(1, 4, 8) is first and generate(1, 6, 3) is first       # fewer positions fit
    longer = generate(1, 6, 12)
    assert longer is not first and generate(2, 6, 8) is not longer
    model.to(core.bfloat16)
    assert model._cache.layers[0].keys.dtype == core.float32
    ids = core.tensor(rng.integers(1, model.config.vocab_size, (2, 6)))
    assert model.generate(ids, max_new_tokens=4, **kwargs).past_key_values.layers[0].keys.dtype == core.bfloat16

    sliding = AutoModelForCausalLM.from_pretrained(os.path.join(Case("mistral", None, None).dir, "model")).eval()
    sliding.generation_config.cache_implementation = "static"
    ids = core.tensor(rng.integers(1, sliding.config.vocab_size, (1, 6)))
    caches = [sliding.generate(ids, max_new_tokens=4, **kwargs).past_key_values for _ in range(2)]
    assert caches[0] is not caches[1]
