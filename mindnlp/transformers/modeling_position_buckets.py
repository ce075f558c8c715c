"""Relative positions mapped to a bounded set of buckets, as position-aware attention biases read them.

`relative_position_bucket` is Mesh TensorFlow's scheme, which T5 and MPNet use for their learned
per-head attention biases (`bucket_bias` looks the biases up); `log_bucket_position` is DeBERTa-v2's, whose buckets index relative
position embeddings.
"""
import math

from .. import core


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


def bucket_bias(embedding, buckets):
    """The learned bias of each bucket as (1, heads, queries, keys), heads outermost in memory.

    `embedding` maps a bucket to one value per head. Its output puts the heads innermost;
    the bias is computed once per forward pass and read by every layer's attention one
    (head, query) row at a time, so it is laid out once for that instead of being gathered
    through a transposed view by each layer.
    """
    return embedding(buckets).permute(2, 0, 1).contiguous().unsqueeze(0)


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
