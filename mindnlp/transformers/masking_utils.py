# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Attention masks as models consume them: additive float masks of shape (batch, 1, q, kv).

A 0/1 padding mask (batch, kv) from the tokenizer becomes 0 where a key may be attended and
the dtype's most negative finite value where it may not (finite, so a fully masked row
gives a uniform softmax instead of NaN, as Hugging Face's eager attention does). Causal
and sliding-window masks add position constraints: query i sits at absolute position
past_length + i and sees keys at positions <= its own (and > its own - window).
"""
from .. import core


def _min_value(dtype):
    return core.finfo(dtype).min


def _padding_allowed(attention_mask, kv_length):
    """(batch, kv) bool of keys that are not padding, or None when nothing is padded. A longer
    mask is read for its first kv_length columns, as transformers indexes it."""
    if attention_mask is None:
        return None
    if attention_mask.shape[-1] < kv_length:
        raise ValueError(
            f"attention_mask has length {attention_mask.shape[-1]} but the keys have length {kv_length}"
        )
    if attention_mask.shape[-1] > kv_length:
        attention_mask = attention_mask[..., :kv_length]
    return attention_mask.to(core.bool)


def _to_additive(allowed, dtype):
    zero = core.zeros((), dtype=dtype, device=allowed.device)
    return core.where(allowed, zero, _min_value(dtype))


def create_bidirectional_mask(config=None, inputs_embeds=None, attention_mask=None, encoder_hidden_states=None,
                              **kwargs):
    """Padding-only mask (encoders, cross-attention); None when no key is padding."""
    if attention_mask is None:
        return None
    dtype = inputs_embeds.dtype
    if attention_mask.ndim == 4:
        return attention_mask if attention_mask.is_floating_point() else _to_additive(attention_mask.to(core.bool), dtype)
    # Without encoder states the keys are as long as the mask says, as in transformers: an encoder
    # given prefix-tuning keys/values attends over more positions than it has inputs.
    kv_length = encoder_hidden_states.shape[1] if encoder_hidden_states is not None else attention_mask.shape[-1]
    allowed = _padding_allowed(attention_mask, kv_length)
    if bool(allowed.all()):
        return None
    if attention_mask.ndim == 3:
        return _to_additive(allowed[:, None, :, :], dtype)
    return _to_additive(allowed[:, None, None, :], dtype)


def create_bidirectional_sliding_window_mask(config=None, inputs_embeds=None, attention_mask=None, **kwargs):
    """Padding mask of an encoder's local layers: query i also ignores keys more than
    `config.sliding_window` positions away on either side (ModernBERT)."""
    if attention_mask is not None and attention_mask.ndim == 4:
        return create_bidirectional_mask(config, inputs_embeds, attention_mask)
    length = inputs_embeds.shape[1]
    positions = core.arange(length, device=inputs_embeds.device)
    allowed = ((positions[:, None] - positions[None, :]).abs() <= config.sliding_window)[None, None, :, :]
    padding = _padding_allowed(attention_mask, length)
    if padding is not None:
        allowed = allowed & padding[:, None, None, :]
    return _to_additive(allowed, inputs_embeds.dtype)


def _first_layer(past_key_values, sliding):
    """Index of the cache's first sliding (or full-attention) layer, 0 when it has none."""
    kinds = getattr(past_key_values, "is_sliding", None) or []
    return kinds.index(sliding) if sliding in kinds else 0


def find_packed_sequence_indices(position_ids):
    """Which packed sequence each token belongs to, from position_ids that restart at each one:
    [[0, 1, 0, 1, 2, 0]] → [[0, 0, 1, 1, 1, 2]]. None when every row holds one sequence."""
    first = position_ids[:, :1] - 1
    starts = core.diff(position_ids, prepend=first, dim=-1) != 1
    sequence = starts.to(core.int64).cumsum(-1)
    if bool((sequence[:, -1] == 0).all()):
        return None
    return sequence


def _key_columns(attention_mask, key_positions, kv_offset, kv_length, static):
    """The columns of a 2-D padding mask that belong to the `kv_length` keys a cache returns.

    A static cache returns its whole buffer and generate() pads its mask to the cache's
    width, so the mask may be longer than the keys (cut) or shorter (padded with zeros:
    positions not written yet). A static sliding layer's decode step gives its offset as a
    tensor: the columns are gathered, those past the mask's end being slots that the causal
    part of the mask hides anyway.
    """
    if isinstance(kv_offset, core.Tensor):
        return attention_mask.index_select(-1, key_positions.clamp(max=attention_mask.shape[-1] - 1))
    if kv_offset:
        attention_mask = attention_mask[:, kv_offset:]
    width = attention_mask.shape[-1]
    if static and width > kv_length:
        return attention_mask[:, :kv_length]
    if width < kv_length:
        return core.cat([attention_mask, attention_mask.new_zeros((attention_mask.shape[0], kv_length - width))],
                        dim=-1)
    return attention_mask


def create_causal_mask(config=None, inputs_embeds=None, attention_mask=None, past_key_values=None,
                       cache_position=None, sliding_window=None, layer_idx=None, position_ids=None, **kwargs):
    """Causal (optionally sliding-window) mask combined with padding, shape (batch, 1, q, kv).

    With a cache, the keys are those its layer `layer_idx` (default: the first layer of the
    matching kind) returns from `update`: a sliding-window layer returns only the window, so
    the key axis starts at absolute position `kv_offset`, as `get_mask_sizes` reports (a 0-d
    tensor for a static sliding-window layer's decode step, so a compiled step reads no length).

    Without a padding mask and without a cache, position_ids that restart mark several
    sequences packed into one row (padding-free batches): tokens then attend only within
    their own sequence.

    None when nothing is hidden: one new token without padding after every key a growing
    cache holds (a decoding step). A static cache returns unwritten positions too, which
    the mask hides.
    """
    dtype = inputs_embeds.dtype
    batch, q_length = inputs_embeds.shape[0], inputs_embeds.shape[1]
    if attention_mask is not None and attention_mask.ndim == 4:
        return attention_mask if attention_mask.is_floating_point() else _to_additive(attention_mask.to(core.bool), dtype)
    if q_length == 1 and attention_mask is None and sliding_window is None \
            and not getattr(past_key_values, "is_compileable", False):
        return None
    past_length, kv_offset = 0, 0
    kv_length = q_length  # without a cache the keys are the queries' own
    if past_key_values is not None:
        if layer_idx is None:
            layer_idx = _first_layer(past_key_values, sliding_window is not None)
        kv_length, kv_offset = past_key_values.get_mask_sizes(q_length, layer_idx)
        # Asked only when needed: a static cache keeps its length in a tensor, and a compiled
        # decoding step must not read it back into Python.
        if cache_position is None or (position_ids is not None and attention_mask is None and kv_length == q_length):
            past_length = past_key_values.get_seq_length(layer_idx)
        else:
            past_length = None
    if cache_position is None:
        cache_position = core.arange(past_length, past_length + q_length, device=inputs_embeds.device)
    if isinstance(kv_offset, core.Tensor):
        key_positions = core.arange(kv_length, device=inputs_embeds.device) + kv_offset
    else:
        key_positions = core.arange(kv_offset, kv_offset + kv_length, device=inputs_embeds.device)
    query_positions = cache_position.reshape(-1, 1)
    allowed = key_positions[None, :] <= query_positions
    if sliding_window is not None:
        allowed = allowed & (key_positions[None, :] > query_positions - sliding_window)
    allowed = allowed[None, None, :, :]
    if attention_mask is not None and past_key_values is not None:
        attention_mask = _key_columns(attention_mask, key_positions, kv_offset, kv_length,
                                      getattr(past_key_values, "is_compileable", False))
    padding = _padding_allowed(attention_mask, kv_length)
    if padding is not None:
        allowed = allowed & padding[:, None, None, :]
    else:
        allowed = allowed.expand(batch, 1, q_length, kv_length)
    if position_ids is not None and attention_mask is None and past_length == 0 and kv_length == q_length:
        sequence = find_packed_sequence_indices(position_ids.expand(batch, -1))
        if sequence is not None:
            allowed = allowed & (sequence[:, None, :, None] == sequence[:, None, None, :])
    return _to_additive(allowed, dtype)


def create_sliding_window_causal_mask(config=None, inputs_embeds=None, attention_mask=None, past_key_values=None,
                                      cache_position=None, layer_idx=None, position_ids=None, **kwargs):
    """Causal mask where query i also ignores keys more than `config.sliding_window - 1` positions back."""
    return create_causal_mask(config, inputs_embeds, attention_mask, past_key_values, cache_position=cache_position,
                              sliding_window=config.sliding_window, layer_idx=layer_idx, position_ids=position_ids)
