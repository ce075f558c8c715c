# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Relative positions mapped to a bounded set of buckets, as position-aware attention biases read them.

`relative_position_bucket` is Mesh TensorFlow's scheme, which T5 and MPNet use for their learned
per-head attention biases (`bucket_bias` and `bucket_bias_at` look the biases up); `log_bucket_position` is
DeBERTa-v2's, whose buckets index relative position embeddings.
"""
import math

from .. import core
from ..core.jit import capture


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    """Bucket of each (key position - query position), Mesh TensorFlow's scheme.

    Half the buckets (per direction when bidirectional; a decoder only looks back) hold
    distances 0 .. n/2 - 1 exactly; the other half cover n/2 .. max_distance on a log
    scale, and farther distances share the last bucket.
    """
    buckets = core.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).to(core.int64) * num_buckets
        relative_position = relative_position.abs()
    else:
        relative_position = (-relative_position).clamp(min=0)
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    # Small distances are discarded by the `where` below; raising them to max_exact only keeps
    # log() finite there.
    distance = relative_position.clamp(min=max_exact).float()
    if_large = max_exact + (core.log(distance / max_exact) / math.log(max_distance / max_exact)
                            * (num_buckets - max_exact)).to(core.int64)
    if_large = if_large.clamp(max=num_buckets - 1)
    return buckets + core.where(is_small, relative_position, if_large)


_BUCKET_TABLES = {}


def _buckets_of(distances, **bucket_options):
    """relative_position_bucket(distances), read from a table of the buckets of the distances
    -max_distance .. max_distance computed once: farther distances fall in their direction's
    last bucket, so the clamped distance's entry is theirs. Three ops instead of a dozen at
    every decoding step."""
    max_distance = bucket_options.get("max_distance", 128)
    if max_distance < bucket_options.get("num_buckets", 32):
        # Log-spaced buckets that do not reach max_distance: no saturation to rely on.
        return relative_position_bucket(distances, **bucket_options)
    key = (str(distances.device), tuple(sorted(bucket_options.items())))
    table = _BUCKET_TABLES.get(key)
    if table is None:
        with capture.paused():      # a constant to every capture, the first one included
            reach = core.arange(-max_distance, max_distance + 1, dtype=core.int64, device=distances.device)
            table = _BUCKET_TABLES[key] = relative_position_bucket(reach, **bucket_options)
    return table[distances.clamp(-max_distance, max_distance) + max_distance]


def bucket_bias(embedding, query_length, key_length, past_length=0, device=None, **bucket_options):
    """(1, heads, query_length, key_length): `embedding`'s learned bias (one value per head) of
    the bucket of each key position j - query position i, query i sitting at past_length + i.
    `bucket_options` are relative_position_bucket's.

    The bias depends on the distance only, so the buckets and the lookup are computed once
    per distance (query_length + key_length - 1 of them, not their product), and each query
    row is a window of that table: one pass lays the bias out heads first in memory, as
    every layer's attention reads it row by row.
    """
    distances = core.arange(-(past_length + query_length - 1), key_length - past_length, dtype=core.int64,
                            device=device)
    per_distance = embedding(_buckets_of(distances, **bucket_options))     # (distances, heads)
    # Row i reads distances -(past_length + i) .. key_length - 1 - past_length: the window
    # starting at query_length - 1 - i, so the unfolded windows are the rows in reverse.
    return per_distance.t().unfold(1, key_length, 1).flip(1).unsqueeze(0)


def bucket_bias_at(embedding, query_positions, key_length, **bucket_options):
    """bucket_bias for queries at the positions a tensor holds (`cache_position`), keys at 0 ..
    key_length - 1: the layout of a static cache, whose buffer holds unwritten positions after
    the queries, and where the positions are a tensor so that one compiled decoding step
    serves every position. Bucketed pair by pair (a decoding step has one query row)."""
    keys = core.arange(key_length, dtype=core.int64, device=query_positions.device)
    buckets = _buckets_of(keys[None, :] - query_positions.long()[:, None], **bucket_options)
    return embedding(buckets).permute(2, 0, 1).unsqueeze(0)


def log_bucket_position(relative_position, bucket_size, max_position):
    """DeBERTa-v2's signed buckets: distances below bucket_size / 2 are kept exactly, larger ones
    are spread on a log scale that reaches bucket_size / 2 - 1 steps further at max_position.

    Computed in float32 as DeBERTa's code does, so the rounding of ceil() matches its buckets.
    """
    mid = bucket_size // 2
    sign = core.sign(relative_position)
    inside = (relative_position < mid) & (relative_position > -mid)
    # Distances inside the exact range are discarded by the last `where`; mid - 1 keeps log() finite there.
    distance = core.where(inside, core.full_like(relative_position, mid - 1), relative_position.abs()).float()
    scale = core.log(core.tensor((max_position - 1) / mid, dtype=core.float32))
    log_position = core.ceil(core.log(distance / mid) / scale * (mid - 1)) + mid
    return core.where(distance <= mid, relative_position.float(), log_position * sign).to(core.long)
