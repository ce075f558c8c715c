"""The fused rotary node equals the composed expression and has correct gradients."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.autograd import gradcheck, gradgradcheck
from mindnlp.transformers.modeling_rotary import apply_rotary, apply_rotary_pos_emb, rotate_half


def _inputs(dtype=core.float64, requires_grad=True):
    rng = np.random.default_rng(0)
    x = core.tensor(rng.standard_normal((2, 3, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    cos = core.tensor(rng.standard_normal((2, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    sin = core.tensor(rng.standard_normal((2, 4, 6)), dtype=dtype, requires_grad=requires_grad)
    return x, cos, sin


def test_fused_equals_composed():
    x, cos, sin = _inputs(core.float32, requires_grad=False)
    expected = x * cos[:, None] + rotate_half(x) * sin[:, None]
    np.testing.assert_allclose(apply_rotary(x, cos, sin).numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [core.bfloat16, core.float16])
@pytest.mark.parametrize("heads_split", [False, True])
def test_half_precision_rounds_each_step_as_the_composed_expression(dtype, heads_split, monkeypatch):
    """In float16/bfloat16 each product and the sum round to the dtype, as torch's op-by-op
    expression rounds them (computed in float32 here): bit for bit the composed ops' result.
    x split into heads from a projection's rows ((B, L, H, D) in memory, as attention layers
    hand it) takes the compiled loop on the 16-bit values where numba is there."""
    from mindnlp.core.backends import cpu_jit

    x, cos, sin = (t.to(dtype) for t in _inputs(core.float32, requires_grad=False))
    if heads_split:
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
    bits, calls = cpu_jit.half_bits(), []
    if bits is not None:
        monkeypatch.setattr(bits, "rotary_half", lambda *a, f=bits.rotary_half: calls.append(1) or f(*a))
    expected = x * cos[:, None] + rotate_half(x) * sin[:, None]
    got = apply_rotary(x, cos, sin)
    assert got.dtype == dtype
    assert bool(calls) == (heads_split and bits is not None)
    np.testing.assert_array_equal(got.float().numpy(), expected.float().numpy())


def test_gradients_of_every_input():
    x, cos, sin = _inputs()
    assert gradcheck(apply_rotary, (x, cos, sin))
    assert gradgradcheck(apply_rotary, (x, cos, sin))
    # cos/sin broadcast over the batch too (one set of positions for every row)
    x, cos, sin = _inputs()
    assert gradcheck(apply_rotary, (x, cos[:1].detach().requires_grad_(), sin[:1].detach().requires_grad_()))


def test_query_and_key_share_the_angles():
    rng = np.random.default_rng(1)
    q = core.tensor(rng.standard_normal((1, 4, 3, 8)), dtype=core.float32)
    k = core.tensor(rng.standard_normal((1, 2, 3, 8)), dtype=core.float32)
    cos = core.tensor(rng.standard_normal((1, 3, 8)), dtype=core.float32)
    sin = core.tensor(rng.standard_normal((1, 3, 8)), dtype=core.float32)
    rq, rk = apply_rotary_pos_emb(q, k, cos, sin)
    np.testing.assert_allclose(rq.numpy(), (q * cos[:, None] + rotate_half(q) * sin[:, None]).numpy(), atol=1e-6)
    np.testing.assert_allclose(rk.numpy(), (k * cos[:, None] + rotate_half(k) * sin[:, None]).numpy(), atol=1e-6)


def test_split_heads_is_the_view_and_transpose_it_replaces():
    from mindnlp.transformers.modeling_attention import split_heads

    rng = np.random.default_rng(2)
    x = core.tensor(rng.standard_normal((2, 3, 8)), requires_grad=True)
    np.testing.assert_array_equal(split_heads(x, 4).detach().numpy(),
                                  x.detach().view(2, 3, -1, 4).transpose(1, 2).numpy())
    assert gradcheck(lambda t: split_heads(t, 4), (x,))


@pytest.mark.parametrize("rows_contiguous", [True, False])
def test_compiled_replay_calls_the_head_split_and_rotation_kernels_directly(rows_contiguous):
    """In a compiled decoding step the head split is the view itself and the rotation calls the
    compiled loop (not the ops' forward), bit for bit as eager; heads whose rows the loop cannot
    read (a (B, H, L, D) array of its own) go back to the forward inside the same kernel."""
    from mindnlp.core.backends import cpu_jit
    from mindnlp.transformers.modeling_attention import split_heads

    if cpu_jit.load() is None:
        pytest.skip("the rotation kernel is numba's")
    rng = np.random.default_rng(3)

    def step(x, cos, sin):
        heads = split_heads(x, 8) if rows_contiguous else split_heads(x, 8).contiguous()
        return apply_rotary(heads, cos, sin)

    compiled = core.compile(step)
    with core.no_grad():
        for _ in range(3):
            x, cos, sin = (core.tensor(rng.standard_normal(shape), dtype=core.float32)
                           for shape in ((1, 3, 32), (1, 3, 8), (1, 3, 8)))
            got, want = compiled(x, cos, sin), step(x, cos, sin)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    (entry,) = compiled._cache.values()
    kernels = entry.compiled._replay.__globals__
    names = {node.name: kernels[f"k{i}"].__name__ for i, node in enumerate(entry.compiled.graph.nodes)}
    assert names["_SplitHeads"] == "<lambda>" and names["_Rotary"] == "rotate"


def test_dynamic_frequencies_are_switched_and_read_as_one_step_across_threads():
    """Forwards on several threads (encode's concurrent batches) share one rotary module:
    each call gets the frequencies of its own length, long (dynamic NTK) or short (reset)."""
    import sys
    import threading

    from mindnlp.transformers import LlamaConfig
    from mindnlp.transformers.modeling_rotary import RotaryEmbedding

    config = LlamaConfig(hidden_size=32, num_attention_heads=2, max_position_embeddings=16,
                         rope_scaling={"rope_type": "dynamic", "factor": 4.0})
    x = core.zeros(1, dtype=core.float32)
    positions = {n: core.arange(n)[None] for n in (8, 40)}
    expected = {n: RotaryEmbedding(config)(x, p)[0].numpy() for n, p in positions.items()}
    shared, wrong = RotaryEmbedding(config), []

    def run(first):
        for i in range(400):
            n = (8, 40)[(i + first) % 2]
            if not np.array_equal(shared(x, positions[n])[0].numpy(), expected[n]):
                wrong.append(n)

    threads = [threading.Thread(target=run, args=(first,)) for first in (0, 1)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)        # hand the GIL over as often as possible
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong and not np.array_equal(expected[8], expected[40][:, :8])
