"""KV caches: contents equal to Hugging Face's DynamicCache / DynamicSlidingWindowLayer /
StaticSlidingWindowLayer (fixtures), and growth by writing into preallocated storage."""
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import MistralConfig, Qwen2Config
from mindnlp.transformers.cache_utils import (
    DynamicCache, DynamicLayer, DynamicSlidingWindowLayer, EncoderDecoderCache, SlidingWindowCache, StaticCache,
    StaticLayer, StaticSlidingWindowLayer,
)

from .tiny_lm import FIXTURES

ARRAYS = np.load(os.path.join(FIXTURES, "cache.npz"))
with open(os.path.join(FIXTURES, "cache.json")) as _fh:
    META = json.load(_fh)


def test_dynamic_and_sliding_caches_match_transformers():
    cache = DynamicCache()
    layer = DynamicSlidingWindowLayer(sliding_window=4)
    for i, step in enumerate(META["steps"]):
        k, v = core.tensor(ARRAYS[f"k{i}"]), core.tensor(ARRAYS[f"v{i}"])
        for layer_idx in (0, 1):
            keys, values = cache.update(k + layer_idx, v - layer_idx, layer_idx)
        np.testing.assert_array_equal(keys.numpy(), ARRAYS[f"dyn_keys{i}"])
        np.testing.assert_array_equal(values.numpy(), ARRAYS[f"dyn_values{i}"])
        assert cache.get_seq_length() == step["dyn_seq_length"]
        assert list(cache.get_mask_sizes(1, 0)) == step["dyn_mask_sizes"]
        swk, swv = layer.update(k, v)
        np.testing.assert_array_equal(swk.numpy(), ARRAYS[f"sw_keys{i}"])
        np.testing.assert_array_equal(swv.numpy(), ARRAYS[f"sw_values{i}"])
        assert layer.get_seq_length() == step["sw_seq_length"]
        assert list(layer.get_mask_sizes(2)) == step["sw_mask_sizes"]
        if i == 4:
            cache.reorder_cache(core.tensor([1, 0]))
            np.testing.assert_array_equal(cache.layers[1].keys.numpy(), ARRAYS["reordered_keys"])
        if i == 6:
            cache.crop(-3)
            np.testing.assert_array_equal(cache.layers[0].keys.numpy(), ARRAYS["cropped_keys"])
    assert len(cache) == 2


@pytest.mark.parametrize("recording", [False, True], ids=["in_place", "autograd"])
@pytest.mark.parametrize("run", range(len(META["static_sliding"])))
def test_static_sliding_layer_matches_transformers(run, recording):
    """Mask sizes before each update, returned states and the buffer after it equal HF's, for
    single tokens filling and rolling the window, several tokens into a full window, prompts
    crossing it and a buffer shorter than the window; also while autograd records."""
    spec = META["static_sliding"][run]
    layer = StaticSlidingWindowLayer(max_cache_len=spec["max_cache_len"], sliding_window=spec["sliding_window"])
    for i, step in enumerate(spec["steps"]):
        prefix = f"ssw{run}_{i}_"
        k, v = core.tensor(ARRAYS[prefix + "k"], requires_grad=recording), core.tensor(ARRAYS[prefix + "v"])
        assert [int(size) for size in layer.get_mask_sizes(step["n"])] == step["mask_sizes"]
        keys, values = layer.update(k, v)
        for name, got in (("keys", keys), ("values", values), ("buffer_keys", layer.keys),
                          ("buffer_values", layer.values)):
            np.testing.assert_array_equal(got.detach().numpy(), ARRAYS[prefix + name], err_msg=f"step {i} {name}")
        assert layer.get_seq_length() == layer.cumulative_length == step["seq_length"]


def test_static_sliding_layer_keeps_its_storage():
    """Decode steps write into the buffer allocated at the first update, before and after it is full."""
    layer = StaticSlidingWindowLayer(max_cache_len=10, sliding_window=3)
    layer.update(core.randn(1, 1, 2, 2), core.randn(1, 1, 2, 2))
    storage = layer._key_storage
    for _ in range(4):
        keys, _ = layer.update(core.randn(1, 1, 1, 2), core.randn(1, 1, 1, 2))
        assert keys is storage and storage.shape == (1, 1, 3, 2)
    length, offset = layer.get_mask_sizes(1)
    assert length == 3 and isinstance(offset, core.Tensor) and int(offset) == 4
    with pytest.raises(ValueError, match="sliding_window"):
        StaticSlidingWindowLayer(max_cache_len=10, sliding_window=0)


def test_growth_writes_into_preallocated_storage():
    layer = DynamicLayer()
    first = core.randn(1, 2, 20, 4)
    layer.update(first, first)
    storage, capacity = layer._key_storage, layer.capacity
    assert capacity == 40  # doubled storage: the prompt plus as many new tokens
    steps = [core.randn(1, 2, 1, 4) for _ in range(25)]
    for n, step in enumerate(steps, start=1):
        keys, values = layer.update(step, step * 2)
        if 20 + n <= capacity:
            assert layer._key_storage is storage  # written in place, not concatenated
        assert keys.shape == (1, 2, 20 + n, 4)
    assert layer.capacity == 2 * (capacity + 1)  # reallocated once, when position 41 did not fit
    expected = core.cat([first] + steps, dim=2)
    np.testing.assert_array_equal(layer.keys.numpy(), expected.numpy())
    np.testing.assert_array_equal(layer.values.numpy()[:, :, 20:], (core.cat(steps, dim=2) * 2).numpy())


def test_returned_states_are_views_of_the_storage():
    layer = DynamicLayer()
    k = core.randn(1, 1, 3, 2)
    keys, _ = layer.update(k, k)
    keys_again, _ = layer.update(core.randn(1, 1, 1, 2), core.randn(1, 1, 1, 2))
    assert np.shares_memory(keys_again.numpy(), layer._key_storage.numpy())
    np.testing.assert_array_equal(keys_again.numpy()[:, :, :3], k.numpy())


def test_sliding_window_storage_stays_bounded():
    layer = DynamicSlidingWindowLayer(sliding_window=8)
    history = []
    for step in range(100):
        k = core.randn(1, 1, 1, 2)
        history.append(k)
        keys, _ = layer.update(k, k)
        expected = core.cat(history[-8:], dim=2)
        np.testing.assert_array_equal(keys.numpy(), expected.numpy())
    assert layer.get_seq_length() == 100
    assert layer.capacity <= 2 * 8 + 16


def test_crop_reorder_select_repeat():
    cache = DynamicCache()
    k = core.arange(2 * 1 * 6 * 1, dtype=core.float32).reshape(2, 1, 6, 1)
    cache.update(k, -k, 0)
    cache.crop(-2)
    assert cache.get_seq_length() == 4
    cache.crop(3)  # a positive value keeps that many positions (the pre-v5 meaning)
    assert cache.layers[0].keys[:, 0, :, 0].tolist() == [[0, 1, 2], [6, 7, 8]]
    cache.reorder_cache(core.tensor([1, 1]))
    assert cache.layers[0].keys[:, 0, :, 0].tolist() == [[6, 7, 8], [6, 7, 8]]
    cache.batch_repeat_interleave(2)
    assert cache.layers[0].keys.shape == (4, 1, 3, 1)
    cache.batch_select_indices(core.tensor([0, 3]))
    assert cache.layers[0].keys.shape == (2, 1, 3, 1)
    keys, values = cache.update(core.ones(2, 1, 1, 1), core.ones(2, 1, 1, 1), 0)
    assert keys[:, 0, :, 0].tolist() == [[6, 7, 8, 1], [6, 7, 8, 1]]
    assert values[:, 0, :, 0].tolist() == [[-6, -7, -8, 1], [-6, -7, -8, 1]]


def test_layers_follow_the_config():
    cache = DynamicCache(config=MistralConfig(num_hidden_layers=3, sliding_window=16))
    assert [type(layer) for layer in cache.layers] == [DynamicSlidingWindowLayer] * 3
    assert cache.layers[0].sliding_window == 16
    qwen = Qwen2Config(num_hidden_layers=4, use_sliding_window=True, sliding_window=8, max_window_layers=2)
    assert [type(layer) for layer in DynamicCache(config=qwen).layers] == [DynamicLayer, DynamicLayer,
                                                                          DynamicSlidingWindowLayer,
                                                                          DynamicSlidingWindowLayer]
    static = StaticCache(config=MistralConfig(num_hidden_layers=2, sliding_window=None), max_cache_len=10)
    assert [type(layer) for layer in static.layers] == [StaticLayer, StaticLayer]
    static = StaticCache(config=qwen, max_cache_len=20)
    assert [type(layer) for layer in static.layers] == [StaticLayer, StaticLayer, StaticSlidingWindowLayer,
                                                       StaticSlidingWindowLayer]
    assert static.layers[2].max_cache_len == 8 and static.is_compileable and static.is_sliding == [False, False,
                                                                                                    True, True]
    assert static.get_max_length() == 20 and static.get_max_length(2) == 8
    assert SlidingWindowCache is StaticCache


def test_static_cache_is_allocated_once_and_refuses_overflow():
    """Each update writes its positions after the filled ones, into storage allocated once."""
    cache = StaticCache(config=MistralConfig(num_hidden_layers=1, sliding_window=None), max_cache_len=5)
    first = [core.randn(1, 2, 3, 4) for _ in range(2)]
    cache.update(*first, 0)
    storage = cache.layers[0]._key_storage
    assert storage.shape == (1, 2, 5, 4)
    second = [core.randn(1, 2, 2, 4) for _ in range(2)]
    keys, values = cache.update(*second, 0)
    assert keys.shape == (1, 2, 5, 4) and cache.layers[0]._key_storage is storage
    for held, (a, b) in zip((keys, values), zip(first, second)):
        np.testing.assert_array_equal(held.numpy(), np.concatenate([a.numpy(), b.numpy()], axis=2))
    assert cache.get_max_length() == 5 and cache.get_seq_length() == 5
    with pytest.raises(IndexError, match="StaticCache is full"):
        cache.update(core.randn(1, 2, 1, 4), core.randn(1, 2, 1, 4), 0)


def test_bad_updates_raise():
    cache = DynamicCache()
    with pytest.raises(ValueError, match="shape"):
        cache.update(core.randn(2, 3, 4), core.randn(2, 3, 4), 0)
    cache.update(core.randn(1, 2, 3, 4), core.randn(1, 2, 3, 4), 0)
    with pytest.raises(ValueError, match="head_dim"):
        cache.update(core.randn(1, 2, 1, 5), core.randn(1, 2, 1, 5), 0)


def test_sliding_crop_after_window_refused():
    layer = DynamicSlidingWindowLayer(sliding_window=3)
    layer.update(core.randn(1, 1, 4, 2), core.randn(1, 1, 4, 2))
    with pytest.raises(RuntimeError, match="sliding window"):
        layer.crop(-1)


def test_gradients_flow_through_the_cache():
    """While autograd records, the cache concatenates, so every step's keys get gradients."""
    cache = DynamicCache()
    k1 = core.randn(1, 1, 2, 2, requires_grad=True)
    k2 = core.randn(1, 1, 1, 2, requires_grad=True)
    cache.update(k1, k1, 0)
    keys, values = cache.update(k2, k2, 0)
    (keys.sum() + 2 * values.sum()).backward()
    np.testing.assert_array_equal(k1.grad.numpy(), np.full((1, 1, 2, 2), 3.0, dtype=np.float32))
    np.testing.assert_array_equal(k2.grad.numpy(), np.full((1, 1, 1, 2), 3.0, dtype=np.float32))


def test_iteration_rebuilds_the_cache():
    """Iterating yields (keys, values, window) per layer, which `ddp_cache_data` accepts back."""
    cache = DynamicCache(config=Qwen2Config(num_hidden_layers=2, use_sliding_window=True, sliding_window=3,
                                            max_window_layers=1))
    for layer_idx in range(2):
        cache.update(core.randn(1, 1, 5, 2), core.randn(1, 1, 5, 2), layer_idx)
    rebuilt = DynamicCache(ddp_cache_data=iter(cache))
    assert [type(layer) for layer in rebuilt.layers] == [DynamicLayer, DynamicSlidingWindowLayer]
    for old, new in zip(cache.layers, rebuilt.layers):
        np.testing.assert_array_equal(old.keys.numpy(), new.keys.numpy())


def test_encoder_decoder_cache():
    """Self-attention keys grow and are cropped; cross-attention keys are stored once, both reorder."""
    cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
    assert cache.is_updated == {}
    encoder_keys = core.randn(2, 1, 4, 2)
    cache.cross_attention_cache.update(encoder_keys, encoder_keys, 0)
    cache.is_updated[0] = True
    cache.self_attention_cache.update(core.randn(2, 1, 3, 2), core.randn(2, 1, 3, 2), 0)
    assert cache.get_seq_length() == 3 and len(cache) == 1
    cache.crop(-1)
    assert cache.get_seq_length() == 2 and cache.cross_attention_cache.get_seq_length() == 4
    cache.reorder_cache(core.tensor([1, 0]))
    np.testing.assert_array_equal(cache.cross_attention_cache.layers[0].keys.numpy(), encoder_keys.numpy()[::-1])
    rebuilt = EncoderDecoderCache(iter(cache))
    assert rebuilt.is_updated == {0: True}
    np.testing.assert_array_equal(rebuilt.cross_attention_cache.layers[0].keys.numpy(), encoder_keys.numpy()[::-1])
    with pytest.raises(ValueError, match="1 or 2 arguments"):
        EncoderDecoderCache()


def test_encoder_decoder_cache_as_a_compiled_steps_argument():
    """Two static caches stand for their storage in a compiled call once every layer holds the
    encoder's keys; before that (and after a reset) the call runs eagerly; a dynamic half says why
    it cannot be captured."""
    config = MistralConfig(num_hidden_layers=2, sliding_window=None)
    cache = EncoderDecoderCache(StaticCache(config=config, max_cache_len=6),
                                StaticCache(config=config, max_cache_len=4))
    assert cache.compile_leaves() is None and cache.is_updated == {0: False, 1: False}
    for layer_idx in range(2):
        cache.self_attention_cache.update(core.randn(1, 2, 1, 3), core.randn(1, 2, 1, 3), layer_idx)
        cache.cross_attention_cache.update(core.randn(1, 2, 4, 3), core.randn(1, 2, 4, 3), layer_idx)
        cache.is_updated[layer_idx] = True
        assert (cache.compile_leaves() is None) == (layer_idx == 0)
    leaves = cache.compile_leaves()
    assert len(leaves) == 12 and leaves[:6] == cache.self_attention_cache.compile_leaves()
    assert leaves[6:] == cache.cross_attention_cache.compile_leaves()
    cache.reset()
    assert cache.compile_leaves() is None and cache.get_seq_length() == 0
    dynamic = EncoderDecoderCache(StaticCache(config=config, max_cache_len=6), DynamicCache())
    assert "DynamicCache" in dynamic.compile_leaves()


def test_indexing_gives_a_layers_keys_and_values():
    cache = DynamicCache()
    k, v = core.randn(1, 2, 3, 4), core.randn(1, 2, 3, 4)
    cache.update(k, v, 0)
    keys, values = cache[0]
    np.testing.assert_array_equal(keys.numpy(), k.numpy())
    np.testing.assert_array_equal(values.numpy(), v.numpy())
    with pytest.raises(KeyError, match="only has 1 layers"):
        cache[1]


def test_a_layers_states_can_be_assigned():
    """HF's layers hold keys/values as plain attributes that callers replace (its tests copy a
    cache that way); the assigned tensors become the valid states, copied before a write."""
    cache = DynamicCache()
    cache.update(core.ones(1, 2, 3, 4), core.ones(1, 2, 3, 4), 0)
    keys, values = core.zeros(1, 2, 5, 4), core.full((1, 2, 5, 4), 2.0)
    cache.layers[0].keys, cache.layers[0].values = keys, values
    assert cache.get_seq_length() == 5
    np.testing.assert_array_equal(cache.layers[0].keys.numpy(), keys.numpy())
    cache.update(core.full((1, 2, 1, 4), 3.0), core.full((1, 2, 1, 4), 3.0), 0)
    assert cache.layers[0].values[0, 0, :, 0].tolist() == [2.0] * 5 + [3.0]
    assert keys.abs().sum().item() == 0 and values[0, 0, :, 0].tolist() == [2.0] * 5  # untouched
    assert cache.get_max_cache_shape() == -1
    static = StaticCache(config=MistralConfig(num_hidden_layers=1, sliding_window=None), max_cache_len=7)
    assert static.get_max_cache_shape() == 7
