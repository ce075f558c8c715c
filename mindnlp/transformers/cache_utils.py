# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Key/value caches for autoregressive decoding, with Hugging Face transformers v5's API.

A `Cache` is a list of per-layer caches. Attention layer `i` calls
`cache.update(key_states, value_states, i)` with its new keys/values of shape
(batch, heads, new_tokens, head_dim) and attends over what comes back: every key/value the
layer may see, in position order.

Unlike Hugging Face's `DynamicLayer`, which concatenates the whole history every step, a
layer here owns preallocated storage and writes each step's keys into the next free slots;
when full it is reallocated at twice the size needed, so a decode step costs O(new tokens),
amortised, and `update` returns a view of the filled part. While autograd is recording (e.g. prefix-tuning with
trainable past keys) a layer falls back to concatenation, so gradients flow to every step's
keys without in-place writes clobbering what backward needs.
"""
from .. import core
from ..core._tensor import _wrap
from .utils.unsupported import unsupported

__all__ = [
    "Cache", "CacheLayerMixin", "DynamicCache", "DynamicLayer", "DynamicSlidingWindowLayer", "EncoderDecoderCache",
    "SlidingWindowCache", "StaticCache", "StaticLayer", "StaticSlidingWindowLayer",
]


def _recording(*tensors):
    return core.is_grad_enabled() and any(t.requires_grad for t in tensors)


class CacheLayerMixin:
    """One layer's keys and values, stored as (batch, heads, seq, head_dim) tensors.

    The valid states are `storage[:, :, start:end]`; `keys`/`values` are views of them.
    """

    is_compileable = False
    is_sliding = False
    is_croppable = False

    def __init__(self):
        self._key_storage = None
        self._value_storage = None
        self._start = 0
        self._end = 0
        # False while the storage is a tensor the caller handed in (autograd path): it is
        # copied before anything is written into it.
        self._owns_storage = False
        self.is_initialized = False

    def __repr__(self):
        return f"{type(self).__name__}(seq_length={self.get_seq_length()})"

    @property
    def keys(self):
        return self._filled(self._key_storage)

    @keys.setter
    def keys(self, states):
        self._hold(states, "_key_storage")

    @property
    def values(self):
        return self._filled(self._value_storage)

    @values.setter
    def values(self, states):
        self._hold(states, "_value_storage")

    def _hold(self, states, storage_name):
        """`layer.keys = states` (HF's layers are plain attributes): the states become the valid
        part; being the caller's tensor, they are copied before anything is written into them."""
        setattr(self, storage_name, states)
        self._start, self._end = 0, states.shape[2]
        self._owns_storage = False
        self.is_initialized = True

    def _filled(self, storage):
        """The valid part of a storage tensor, as a view; sliced on the arrays (no graph node:
        a decoding step asks for it twice per layer) unless the storage carries gradients or
        a graph is being captured."""
        if storage is None:
            return None
        if storage.requires_grad or core.compiler.is_compiling():
            return storage[:, :, self._start:self._end]
        return _wrap(storage._data[:, :, self._start:self._end], version=storage._version)

    @property
    def capacity(self):
        """How many positions the storage holds before it has to be compacted or grown."""
        return 0 if self._key_storage is None else self._key_storage.shape[2]

    def _check_states(self, key_states, value_states):
        if key_states.ndim != 4 or value_states.ndim != 4:
            raise ValueError(
                "key_states and value_states must have shape (batch, num_heads, seq_len, head_dim), got "
                f"{tuple(key_states.shape)} and {tuple(value_states.shape)}"
            )
        if key_states.shape[:3] != value_states.shape[:3]:
            raise ValueError(
                f"key_states {tuple(key_states.shape)} and value_states {tuple(value_states.shape)} differ in batch, "
                "heads or length"
            )
        if self.is_initialized:
            cached = (self._key_storage.shape[0], self._key_storage.shape[1], self._key_storage.shape[3],
                      self._value_storage.shape[3])
            new = (key_states.shape[0], key_states.shape[1], key_states.shape[3], value_states.shape[3])
            if cached != new:
                raise ValueError(
                    f"cached states have (batch, heads, key head_dim, value head_dim) = {cached}, the new ones {new}"
                )

    def _grown_capacity(self, needed):
        """Capacity to allocate when `needed` positions must fit: twice that, so growth is amortised
        O(1) and a prompt leaves room for as many new tokens. Untouched storage costs no memory
        on the host (NumPy's large `empty` arrays are only committed when written)."""
        return max(2 * needed, 16)

    def _append(self, key_states, value_states):
        """Write the new states after the valid ones; returns all valid states (views)."""
        n = key_states.shape[2]
        # Autograd, and a graph being captured (a growing cache's shape is an input of the
        # graph, not storage it writes), need the concatenation as an op.
        if _recording(key_states, value_states) or core.compiler.is_compiling() or (
            self.is_initialized and _recording(self._key_storage, self._value_storage)
        ):
            if self.is_initialized and self._end > self._start:
                key_states = core.cat([self.keys, key_states], dim=2)
                value_states = core.cat([self.values, value_states], dim=2)
            self._key_storage, self._value_storage = key_states, value_states
            self._start, self._end = 0, key_states.shape[2]
            self._owns_storage = False
            self.is_initialized = True
            return key_states, value_states
        if not self.is_initialized:
            capacity = self._grown_capacity(n)
            self._key_storage = _empty_like_states(key_states, capacity)
            self._value_storage = _empty_like_states(value_states, capacity)
            self._start = self._end = 0
            self._owns_storage = self.is_initialized = True
        elif not self._owns_storage or self._end + n > self.capacity:
            self._make_room(n)
        # Owned storage outside autograd: written on the arrays, bumping the version counter
        # as an in-place op would.
        for storage, states in ((self._key_storage, key_states), (self._value_storage, value_states)):
            storage._data[:, :, self._end:self._end + n] = states._data.astype(storage._data.dtype, copy=False)
            storage._version[0] += 1
        self._end += n
        return self.keys, self.values

    def _make_room(self, n):
        """Make the storage hold n more positions after the valid ones: move the valid states to
        the front when the slots before them suffice, otherwise reallocate."""
        length = self._end - self._start
        needed = length + n
        if self._owns_storage and self._start > 0 and needed <= self.capacity:
            # The regions may overlap; NumPy/CuPy then copy through a temporary.
            self._key_storage[:, :, :length] = self._key_storage[:, :, self._start:self._end]
            self._value_storage[:, :, :length] = self._value_storage[:, :, self._start:self._end]
        else:
            capacity = self._grown_capacity(needed)
            self._key_storage = self._copied_to_new_storage(self._key_storage, capacity, length)
            self._value_storage = self._copied_to_new_storage(self._value_storage, capacity, length)
            self._owns_storage = True
        self._start, self._end = 0, length

    def _copied_to_new_storage(self, storage, capacity, length):
        new = _empty_like_states(storage, capacity)
        if length:
            new[:, :, :length] = storage[:, :, self._start:self._start + length]
        return new

    # --- batch manipulation (beam search, contrastive decoding) ---
    def reorder_cache(self, beam_idx):
        """Row i takes the contents of row beam_idx[i] (beam search keeps its best beams)."""
        if not self.is_initialized or self._end == self._start:
            return
        beam_idx = beam_idx.to(self._key_storage.device)
        if _recording(self._key_storage, self._value_storage):
            self._key_storage = self.keys.index_select(0, beam_idx)
            self._value_storage = self.values.index_select(0, beam_idx)
            self._start, self._end = 0, self._key_storage.shape[2]
            return
        if not self._owns_storage:
            self._make_room(0)
        s, e = self._start, self._end
        self._key_storage[:, :, s:e] = self._key_storage[:, :, s:e].index_select(0, beam_idx)
        self._value_storage[:, :, s:e] = self._value_storage[:, :, s:e].index_select(0, beam_idx)

    def batch_repeat_interleave(self, repeats):
        """Repeat every row `repeats` times (a batch of b becomes b * repeats)."""
        if self.is_initialized and self._end > self._start:
            self._replace_rows(self.keys.repeat_interleave(repeats, dim=0),
                               self.values.repeat_interleave(repeats, dim=0))

    def batch_select_indices(self, indices):
        """Keep only the rows `indices`."""
        if self.is_initialized and self._end > self._start:
            self._replace_rows(self.keys[indices, ...], self.values[indices, ...])

    def _replace_rows(self, keys, values):
        self._key_storage, self._value_storage = keys, values
        self._start, self._end = 0, keys.shape[2]
        self._owns_storage = True  # fresh tensors made here

    def reset(self):
        """Forget the cached states; the storage is kept for reuse."""
        self._start = self._end = 0


def _empty_like_states(states, capacity):
    b, h, _, d = states.shape
    return core.empty((b, h, capacity, d), dtype=states.dtype, device=states.device)


class DynamicLayer(CacheLayerMixin):
    """A layer cache that grows without bound: every past position stays visible."""

    is_croppable = True

    def update(self, key_states, value_states, *args, **kwargs):
        """Store the new states and return all keys and values of this layer (a view)."""
        self._check_states(key_states, value_states)
        return self._append(key_states, value_states)

    def get_seq_length(self):
        return self._end - self._start if self.is_initialized else 0

    def get_max_length(self):
        return -1

    def get_mask_sizes(self, query_length):
        """(kv_length, kv_offset) of the keys the next `update` returns, for building the mask."""
        return self.get_seq_length() + query_length, 0

    def crop(self, tokens_to_remove):
        """Drop the last `-tokens_to_remove` positions (HF v5: a negative count).

        A positive value keeps that many positions, as `crop(max_length)` did before v5.
        """
        if not self.is_initialized:
            return
        length = self.get_seq_length()
        keep = tokens_to_remove if tokens_to_remove > 0 else length + tokens_to_remove
        keep = max(0, min(keep, length))
        self._end = self._start + keep


class DynamicSlidingWindowLayer(DynamicLayer):
    """A layer cache for sliding-window attention (Mistral, Qwen2's window layers).

    As in HF v5: a query sees at most `sliding_window` keys, itself included, so only the
    last `sliding_window - 1` positions are kept between steps; `update` returns those plus
    the new ones, and `get_seq_length` counts every position seen so far (the position of
    the next token). Positions that left the window stay in the storage until it is
    compacted, once every ~window steps, so the copying is amortised like the growth.
    """

    is_sliding = True

    def __init__(self, sliding_window, **kwargs):
        super().__init__()
        if not isinstance(sliding_window, int) or sliding_window < 1:
            raise ValueError(f"sliding_window must be a positive integer, got {sliding_window!r}")
        self.sliding_window = sliding_window
        self.cumulative_length = 0

    def _grown_capacity(self, needed):
        # Room for about a window of appends after each compaction.
        return max(needed + self.sliding_window - 1, 2 * (self.sliding_window - 1), 16)

    def update(self, key_states, value_states, *args, **kwargs):
        self._check_states(key_states, value_states)
        keys, values = self._append(key_states, value_states)
        self.cumulative_length += key_states.shape[2]
        self._start = max(self._start, self._end - (self.sliding_window - 1))
        return keys, values

    def get_seq_length(self):
        return self.cumulative_length

    def get_max_length(self):
        return self.sliding_window

    def get_mask_sizes(self, query_length):
        kv_offset = max(self.cumulative_length - self.sliding_window + 1, 0)
        if self.cumulative_length >= self.sliding_window:
            return self.sliding_window - 1 + query_length, kv_offset
        return self.cumulative_length + query_length, kv_offset

    def crop(self, tokens_to_remove):
        """Drop recent positions; only possible while no position has left the window."""
        if self.cumulative_length >= self.sliding_window:
            raise RuntimeError(
                "`crop` was called, but the sliding window size was already reached: the positions that left the "
                "window are gone, so the cache cannot be rolled back"
            )
        super().crop(tokens_to_remove)
        self.cumulative_length = self._end - self._start

    def reset(self):
        super().reset()
        self.cumulative_length = 0


class StaticLayer(CacheLayerMixin):
    """A layer cache of fixed shape: `max_cache_len` positions allocated (zeroed) at the first
    update, written in place, never reallocated; writing past the end is an error.

    As in Hugging Face's StaticLayer, `update` returns the whole buffer, not the filled part,
    and `get_mask_sizes` says so: the unwritten positions lie after every query and the
    causal mask hides them. Every decoding step then has the same shapes, and the number of
    positions written lives in a tensor (`_length`), not a Python int, so a compiled decode
    step (core.compile) is one graph replayed at every token, its cache writes replayed as
    graph writes at the positions that tensor holds.
    """

    is_compileable = True

    def __init__(self, max_cache_len, **kwargs):
        super().__init__()
        if not isinstance(max_cache_len, int) or max_cache_len < 1:
            raise ValueError(f"max_cache_len must be a positive integer, got {max_cache_len!r}")
        self.max_cache_len = max_cache_len
        self._length = None

    def lazy_initialization(self, key_states, value_states):
        """Allocate zeroed storage shaped after the first states (batch, heads, head dims, dtype)."""
        b, h, _, dk = key_states.shape
        device = key_states.device
        self._key_storage = core.zeros((b, h, self.max_cache_len, dk), dtype=key_states.dtype, device=device)
        self._value_storage = core.zeros((b, h, self.max_cache_len, value_states.shape[3]), dtype=value_states.dtype,
                                         device=device)
        self._length = core.zeros((), dtype=core.int64, device=device)
        self._start, self._end = 0, self.max_cache_len
        self._owns_storage = self.is_initialized = True

    def update(self, key_states, value_states, *args, **kwargs):
        self._check_states(key_states, value_states)
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        n = key_states.shape[2]
        start = None if core.compiler.is_compiling() else self.get_seq_length()
        if start is not None and start + n > self.max_cache_len:
            # (A replayed graph that overflows fails on the write's index instead.)
            raise IndexError(
                f"StaticCache is full: it holds {self.max_cache_len} positions, {start} are used and {n} more were given"
            )
        recording = _recording(key_states, value_states, self._key_storage, self._value_storage)
        if start is not None and not recording:
            # the length is known here: a slice copies where an index array scatters (a
            # prompt's keys 2x faster)
            self._key_storage[:, :, start:start + n] = key_states
            self._value_storage[:, :, start:start + n] = value_states
        else:
            # positions from the length tensor: a replay writes where the tensor says, and
            # autograd records an index_copy
            positions = self._length + core.arange(n, device=self._length.device)
            if recording:
                self._key_storage = self._key_storage.index_copy(2, positions, key_states)
                self._value_storage = self._value_storage.index_copy(2, positions, value_states)
            else:
                self._key_storage[:, :, positions] = key_states
                self._value_storage[:, :, positions] = value_states
        self._length += n
        return self.keys, self.values

    @property
    def keys(self):
        return self._key_storage

    @property
    def values(self):
        return self._value_storage

    def get_seq_length(self):
        return int(self._length.item()) if self.is_initialized else 0

    def get_max_length(self):
        return self.max_cache_len

    def get_mask_sizes(self, query_length):
        return self.max_cache_len, 0

    def compile_leaves(self):
        """The tensors a compiled call reads and writes in place (see StaticCache.compile_leaves)."""
        return self._key_storage, self._value_storage, self._length

    def reset(self):
        if self.is_initialized:
            for t in (self._key_storage, self._value_storage, self._length):
                t.zero_()


class StaticSlidingWindowLayer(StaticLayer):
    """A static layer for sliding-window attention: storage for `min(sliding_window,
    max_cache_len)` positions, the most recent ones in position order (Hugging Face's layout).

    Before the window is full a new token is written after the others; once it is full the
    buffer rolls left by one and the token goes in the last slot. A decode step (one new
    token) does both without a Python branch: the roll is a gather whose order, and the
    slot written, are computed from the `_length` tensor, so compiled decoding is one graph
    before and after the window fills. Its mask sizes are then (window, a tensor offset):
    the buffer's first slot holds position `max(length - window + 1, 0)`.

    Several new tokens (a prefill, a continued chat) take Hugging Face's path: when they
    cross the window, `update` returns the kept positions and the new ones together, so
    every query sees its whole window, and the buffer keeps the last `window` positions.
    """

    is_sliding = True

    def __init__(self, max_cache_len, sliding_window, **kwargs):
        if not isinstance(sliding_window, int) or sliding_window < 1:
            raise ValueError(f"sliding_window must be a positive integer, got {sliding_window!r}")
        if not isinstance(max_cache_len, int) or max_cache_len < 1:
            raise ValueError(f"max_cache_len must be a positive integer, got {max_cache_len!r}")
        super().__init__(max_cache_len=min(sliding_window, max_cache_len))
        self.sliding_window = sliding_window

    @property
    def cumulative_length(self):
        """Positions seen so far (the buffer keeps the last `max_cache_len` of them)."""
        return self.get_seq_length()

    def update(self, key_states, value_states, *args, **kwargs):
        self._check_states(key_states, value_states)
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        if key_states.shape[2] == 1 and not _recording(key_states, value_states, self._key_storage,
                                                       self._value_storage):
            return self._decode_step(key_states, value_states)
        return self._update_several(key_states, value_states)

    def _decode_step(self, key_states, value_states):
        window = self.max_cache_len
        slots = core.arange(window, device=self._length.device)
        order = (slots + (self._length >= window).to(core.int64)).clamp(max=window - 1)
        slot = self._length.clamp(max=window - 1).reshape(1)
        for storage, states in ((self._key_storage, key_states), (self._value_storage, value_states)):
            storage.copy_(storage.index_select(2, order))
            storage[:, :, slot] = states
        self._length += 1
        return self._key_storage, self._value_storage

    def _update_several(self, key_states, value_states):
        window, seen = self.max_cache_len, self.get_seq_length()
        if seen + key_states.shape[2] <= window:
            return super().update(key_states, value_states)
        kept = min(seen, window - 1)
        first = window - kept if seen >= window else 0
        keys = core.cat([self._key_storage[:, :, first:first + kept], key_states], dim=2)
        values = core.cat([self._value_storage[:, :, first:first + kept], value_states], dim=2)
        if _recording(keys, values):
            self._key_storage, self._value_storage = keys[:, :, -window:], values[:, :, -window:]
        else:
            self._key_storage.copy_(keys[:, :, -window:])
            self._value_storage.copy_(values[:, :, -window:])
        self._length += key_states.shape[2]
        return keys, values

    def get_mask_sizes(self, query_length):
        """(kv_length, kv_offset) as Hugging Face's layer reports them; for one new token the
        offset is a 0-d tensor (see the class docstring)."""
        window = self.max_cache_len
        if query_length == 1 and self.is_initialized:
            return window, (self._length - (window - 1)).clamp(min=0)
        seen = self.get_seq_length()
        offset = max(seen - window + 1, 0)
        if seen >= window:
            return window - 1 + query_length, offset
        return max(seen + query_length, window), offset


def attention_layer_types(config):
    """Per-layer attention kind from a model config: its `layer_types`, else sliding for every
    layer when `sliding_window` (or `attention_chunk_size`) is set, else full attention."""
    if config is None:
        return None
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        return list(layer_types)
    num_layers = getattr(config, "num_hidden_layers", None)
    if num_layers is None:
        return None
    if getattr(config, "sliding_window", None) is not None:
        return ["sliding_attention"] * num_layers
    if getattr(config, "attention_chunk_size", None) is not None:
        return ["chunked_attention"] * num_layers
    return ["full_attention"] * num_layers


def _window_of(config, layer_type):
    if layer_type == "chunked_attention":
        return config.attention_chunk_size
    return config.sliding_window


class Cache:
    """A list of layer caches, one per decoder layer.

    Built either from explicit `layers`, or with `layer_class_to_replicate`, in which case a
    new layer is appended whenever `update` names a layer index not seen yet.
    """

    def __init__(self, layers=None, layer_class_to_replicate=None, offloading=False, offload_only_non_sliding=True):
        if layers is not None and layer_class_to_replicate is not None:
            raise ValueError("pass either `layers` or `layer_class_to_replicate` to build a Cache, not both")
        if layers is None and layer_class_to_replicate is None:
            raise ValueError("pass one of `layers` or `layer_class_to_replicate` to build a Cache")
        if offloading:
            raise NotImplementedError("cache offloading is not supported")
        self.layers = list(layers) if layers is not None else []
        self.layer_class_to_replicate = layer_class_to_replicate
        self.offloading = False

    def __repr__(self):
        return f"{type(self).__name__}(layers={self.layers})"

    def __len__(self):
        """Number of layers (for a lazily built cache: the layers updated so far)."""
        return len(self.layers)

    def __getitem__(self, layer_idx):
        """(keys, values) of one layer, as code written for transformers v4 indexes a cache."""
        if not -len(self.layers) <= layer_idx < len(self.layers):
            raise KeyError(f"Cache only has {len(self.layers)} layers, attempted to access layer with index {layer_idx}")
        return self.layers[layer_idx].keys, self.layers[layer_idx].values

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None, *args, **kwargs):
        """Store layer `layer_idx`'s new key/value states; returns every key/value it may attend to."""
        if self.layer_class_to_replicate is not None:
            while len(self.layers) <= layer_idx:
                self.layers.append(self.layer_class_to_replicate())
        elif layer_idx >= len(self.layers):
            raise IndexError(f"layer_idx {layer_idx} is out of range for a cache of {len(self.layers)} layers")
        return self.layers[layer_idx].update(key_states, value_states)

    def get_seq_length(self, layer_idx=0):
        """Number of positions seen by layer `layer_idx` (0 before its first update)."""
        if layer_idx >= len(self.layers):
            return 0
        return self.layers[layer_idx].get_seq_length()

    def get_max_length(self, layer_idx=None):
        """The most positions a layer holds; -1 for no limit. Without layer_idx: over all layers."""
        if layer_idx is not None and layer_idx >= len(self.layers):
            return -1
        if layer_idx is None:
            return max((layer.get_max_length() for layer in self.layers), default=-1)
        return self.layers[layer_idx].get_max_length()

    def get_max_cache_shape(self, layer_idx=0):
        """HF v5's name: the most positions layer `layer_idx` holds; -1 for no limit."""
        return self.get_max_length(layer_idx)

    def get_mask_sizes(self, query_length, layer_idx=0):
        """(kv_length, kv_offset): how many keys layer `layer_idx` will attend over for
        `query_length` new tokens, and the absolute position of the first one."""
        if layer_idx >= len(self.layers):
            return query_length, 0
        return self.layers[layer_idx].get_mask_sizes(query_length)

    def get_query_offset(self, layer_idx=0):
        return self.get_seq_length(layer_idx)

    def reset(self):
        for layer in self.layers:
            layer.reset()

    def reorder_cache(self, beam_idx):
        for layer in self.layers:
            layer.reorder_cache(beam_idx)

    def crop(self, tokens_to_remove):
        """Remove the last `-tokens_to_remove` positions of every layer (positive: keep that many)."""
        for layer in self.layers:
            layer.crop(tokens_to_remove)

    def batch_repeat_interleave(self, repeats):
        for layer in self.layers:
            layer.batch_repeat_interleave(repeats)

    def batch_select_indices(self, indices):
        for layer in self.layers:
            layer.batch_select_indices(indices)

    @property
    def batch_size(self):
        sizes = {layer._key_storage.shape[0] for layer in self.layers if layer.is_initialized}
        if not sizes:
            return -1
        if len(sizes) > 1:
            raise ValueError(f"The batch size is not consistent across layers: {sorted(sizes)}")
        return sizes.pop()

    @property
    def is_compileable(self):
        return len(self.layers) > 0 and all(layer.is_compileable for layer in self.layers)

    @property
    def is_initialized(self):
        return len(self.layers) > 0 and all(layer.is_initialized for layer in self.layers)

    @property
    def is_croppable(self):
        return all(layer.is_croppable for layer in self.layers)

    @property
    def is_sliding(self):
        return [layer.is_sliding for layer in self.layers]


class DynamicCache(Cache):
    """The default cache of `generate()`: layers that grow as tokens are generated.

    With a `config`, layers follow its attention pattern (sliding-window layers keep only
    their window). `ddp_cache_data`, an iterable of (keys, values) per layer, pre-fills it.
    """

    def __init__(self, ddp_cache_data=None, config=None, offloading=False, offload_only_non_sliding=False):
        layers = []
        if config is not None:
            text_config = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
            layer_types = attention_layer_types(text_config)
            for layer_type in layer_types or ():
                if layer_type in ("sliding_attention", "chunked_attention"):
                    layers.append(DynamicSlidingWindowLayer(sliding_window=_window_of(text_config, layer_type)))
                else:
                    layers.append(DynamicLayer())
        if ddp_cache_data is not None:
            for layer_idx, states in enumerate(ddp_cache_data):
                key_states, value_states = states[:2]
                if layer_idx >= len(layers):
                    window = states[2] if len(states) == 3 else None
                    if window is not None:
                        window = int(window.item() if isinstance(window, core.Tensor) else window)
                        layers.append(DynamicSlidingWindowLayer(sliding_window=window))
                    else:
                        layers.append(DynamicLayer())
                if key_states is not None and value_states is not None:
                    layers[layer_idx].update(key_states, value_states)
        if layers:
            super().__init__(layers=layers, offloading=offloading)
        else:
            super().__init__(layer_class_to_replicate=DynamicLayer, offloading=offloading)

    def __iter__(self):
        """(keys, values, sliding window as a tensor or None) per layer: what `ddp_cache_data` takes."""
        for layer in self.layers:
            window = getattr(layer, "sliding_window", None)
            yield layer.keys, layer.values, None if window is None else core.tensor(window)


class StaticCache(Cache):
    """A cache of fixed shape: full-attention layers are allocated once for `max_cache_len`
    positions, sliding-window layers for their window (`StaticSlidingWindowLayer`)."""

    def __init__(self, config, max_cache_len, offloading=False, offload_only_non_sliding=True, **kwargs):
        text_config = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
        layer_types = attention_layer_types(text_config)
        if layer_types is None:
            raise ValueError("StaticCache needs a config with num_hidden_layers (or layer_types)")
        layers = []
        for layer_type in layer_types:
            if layer_type in ("sliding_attention", "chunked_attention"):
                layers.append(StaticSlidingWindowLayer(max_cache_len, _window_of(text_config, layer_type)))
            else:
                layers.append(StaticLayer(max_cache_len=max_cache_len))
        super().__init__(layers=layers, offloading=offloading)
        self.max_cache_len = max_cache_len

    def get_max_length(self, layer_idx=None):
        """Without layer_idx: the positions the cache was made for, the width generate() pads
        a static cache's attention mask to (a sliding layer alone holds only its window)."""
        return self.max_cache_len if layer_idx is None else super().get_max_length(layer_idx)

    def compile_leaves(self):
        """The tensors a compiled forward (core.compile) takes this cache as: every layer's
        storage and written-length tensors, which its graph reads and writes in place. None
        while a layer is unallocated (the call that allocates it runs eagerly); a reason
        string when a layer cannot be captured (one that changes shape)."""
        leaves = []
        for layer in self.layers:
            if not isinstance(layer, StaticLayer):
                return f"a {type(layer).__name__} changes shape as it fills"
            if not layer.is_initialized:
                return None
            leaves.extend(layer.compile_leaves())
        return tuple(leaves)


class EncoderDecoderCache(Cache):
    """A decoder's two caches: its self-attention keys (growing each step) and its
    cross-attention keys (computed once from the encoder output, then reused).

    `is_updated[layer_idx]` records whether a layer's cross-attention keys are stored yet.
    Built from two caches, or from one iterable of per-layer (self k, self v[, window],
    cross k, cross v[, window]) tuples as iterating over it yields.
    """

    def __init__(self, *caches):
        if len(caches) == 1:
            self_data, cross_data = [], []
            for states in caches[0]:
                if len(states) not in (4, 6):
                    raise ValueError(f"Expected {len(states) = } to be 4 or 6.")
                half = len(states) // 2
                self_data.append(states[:half])
                cross_data.append(states[half:])
            self.self_attention_cache = DynamicCache(self_data)
            self.cross_attention_cache = DynamicCache(cross_data)
        elif len(caches) == 2:
            if not isinstance(caches[0], Cache) or not isinstance(caches[1], Cache):
                raise TypeError(f"One of the two arguments is not a Cache: {type(caches[0]) = }, {type(caches[1]) = }")
            self.self_attention_cache, self.cross_attention_cache = caches
        else:
            raise ValueError(f"Expected 1 or 2 arguments, got {len(caches)}")
        self.is_updated = {
            layer_idx: self.cross_attention_cache.get_seq_length(layer_idx) > 0
            for layer_idx in range(len(self.cross_attention_cache))
        }

    def __iter__(self):
        for self_states, cross_states in zip(self.self_attention_cache, self.cross_attention_cache):
            yield self_states + cross_states

    def __repr__(self):
        return (f"{type(self).__name__}(self_attention_cache={self.self_attention_cache}, "
                f"cross_attention_cache={self.cross_attention_cache})")

    def __len__(self):
        return len(self.self_attention_cache)

    @property
    def layers(self):
        return self.self_attention_cache.layers

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None, *args, **kwargs):
        return self.self_attention_cache.update(key_states, value_states, layer_idx)

    def get_seq_length(self, layer_idx=0):
        return self.self_attention_cache.get_seq_length(layer_idx)

    def get_max_length(self, layer_idx=None):
        return self.self_attention_cache.get_max_length(layer_idx)

    def get_mask_sizes(self, query_length, layer_idx=0):
        return self.self_attention_cache.get_mask_sizes(query_length, layer_idx)

    def reset(self):
        self.self_attention_cache.reset()
        self.cross_attention_cache.reset()
        for layer_idx in self.is_updated:
            self.is_updated[layer_idx] = False

    def reorder_cache(self, beam_idx):
        self.self_attention_cache.reorder_cache(beam_idx)
        self.cross_attention_cache.reorder_cache(beam_idx)

    def check_dynamic_cache(self, method):
        """Raise unless both parts are dynamic caches (the batch and crop operations need it)."""
        if not (isinstance(self.self_attention_cache, DynamicCache)
                and isinstance(self.cross_attention_cache, DynamicCache)):
            raise TypeError(
                f"`{method}` is only defined for dynamic cache, got {self.self_attention_cache} for the self "
                f"attention cache and {self.cross_attention_cache} for the cross attention cache."
            )

    def crop(self, tokens_to_remove):
        """Only the self-attention keys are cropped: the encoder output does not change."""
        self.check_dynamic_cache("crop")
        self.self_attention_cache.crop(tokens_to_remove)

    def batch_repeat_interleave(self, repeats):
        self.check_dynamic_cache("batch_repeat_interleave")
        self.self_attention_cache.batch_repeat_interleave(repeats)
        self.cross_attention_cache.batch_repeat_interleave(repeats)

    def batch_select_indices(self, indices):
        self.check_dynamic_cache("batch_select_indices")
        self.self_attention_cache.batch_select_indices(indices)
        self.cross_attention_cache.batch_select_indices(indices)

    @property
    def is_sliding(self):
        return self.self_attention_cache.is_sliding

    @property
    def is_compileable(self):
        return self.self_attention_cache.is_compileable

    def compile_leaves(self):
        """The tensors a compiled decoder step takes this cache as (see StaticCache.compile_leaves):
        both halves' storage. None until every cross-attention layer holds the encoder's keys:
        the step that projects them takes another path through the model, so it runs eagerly,
        and only steps that read them back are captured."""
        parts = []
        for cache in (self.self_attention_cache, self.cross_attention_cache):
            part = cache.compile_leaves() if hasattr(cache, "compile_leaves") else \
                f"its {type(cache).__name__} changes shape as it fills"
            if isinstance(part, str):
                return part
            parts.append(part)
        if None in parts or not (self.is_updated and all(self.is_updated.values())):
            return None
        return parts[0] + parts[1]

    @property
    def is_croppable(self):
        return self.self_attention_cache.is_croppable


# HF v5 keeps this name for the static cache of sliding-window models.
SlidingWindowCache = StaticCache


QuantoQuantizedLayer = unsupported("QuantoQuantizedLayer", "the optimum-quanto quantized KV cache")
HQQQuantizedLayer = unsupported("HQQQuantizedLayer", "the HQQ quantized KV cache")


def update_self_attention(past_key_values, key, value, layer_idx):
    """A self-attention layer's keys/values with the cached ones before them (as they are
    without a cache); an EncoderDecoderCache keeps them in its self-attention half."""
    if past_key_values is None:
        return key, value
    cache = past_key_values
    if isinstance(cache, EncoderDecoderCache):
        cache = cache.self_attention_cache
    return cache.update(key, value, layer_idx)


def cross_attention_key_value(past_key_values, layer_idx, compute):
    """The encoder's keys/values for a cross-attention layer. They are the same at every
    decoding step: `compute()` runs once, then they are read from the cross-attention half
    of an EncoderDecoderCache."""
    cache = past_key_values.cross_attention_cache if isinstance(past_key_values, EncoderDecoderCache) else None
    if cache is not None and past_key_values.is_updated.get(layer_idx):
        layer = cache.layers[layer_idx]
        return layer.keys, layer.values
    key, value = compute()
    if cache is not None:
        key, value = cache.update(key, value, layer_idx)
        past_key_values.is_updated[layer_idx] = True
    return key, value
