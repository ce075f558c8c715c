# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""A decoding step's attention for query heads that share key/value heads (grouped-query
attention), a few queries per head against a cache, in vector code (imported only with
numba, used where the CPU has AVX-512 or AVX2 and the heads' depths are whole vectors).

cpu_jit_parallel's loops read a key/value head once for every query head it serves: with a
long cache the head no longer fits the core's second-level cache, and each read comes from
memory again (SmolLM2-135M, 3 query heads per key/value head, 2000 positions: 512 KB of keys
per head). Here each key and value row is read once for its whole group, in passes split
over numba's threads:

- scores: blocks of _BLOCK key rows a band's worth apart (as many sequential streams from
  memory, which this kind of CPU reads faster than one), each query row of the group dotted
  with the block's rows at once (cpu_jit_ir.dot: eight sums in flight); the threads take
  bands of blocks, so a model with fewer key/value heads than threads keeps them all busy;
- softmax: cpu_jit's masked_softmax on each query's row of scores;
- values: chunks of _CHUNK value rows (read from memory once, then from the core's first
  cache for the group's other queries), each query's probabilities times the chunk's rows
  summed in registers (eight vectors in flight per query row, three rows to a load of a value
  row with AVX-512) into a partial output per chunk; the threads take bands of (key/value
  head, chunk) items;
- the partial outputs summed, chunk after chunk.

Each score and partial output is the same sum however the work is banded (the banded
blocks and chunks are whole and start at multiples of their size; the keys after the last
whole block are dotted one by one), and the partials are added in the chunks' order: the
results are the same bits on one thread or split over numba's, and a query row's results the
same whichever rows share its loads. Three rows to a load halve the values pass (SmolLM2's
9 over 3 heads, 560 keys, in a core's caches: 14.6 -> 7.4 us); in the scores pass, whose
cost is summing each product's lanes, they made no difference (16-18 us).

Measured on a two-core AVX2 EPYC, a compiled SmolLM-135M-shaped decoding step (30 layers of
9 query heads over 3 key/value heads), attention against the loops: 8.3 against 11.9 ms a
step at 2000 positions (the step 40.5 against 45.1 ms), 3.5 against 3.75 at 512. Heads that
share nothing (GPT-2's) gain nothing from reading once and keep the loops: 5.6 against 5.3 ms
at 1000 positions here.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .cpu_jit_ir import FLOAT, I64, WIDTH, by_kind, checked_once, dot, fma_function, load_floats, loop_phis
from .cpu_jit_ir import I8, next_iteration, prefetch, splat
from .cpu_jit import load
from .cpu_jit_parallel import _FLOAT32, _attention_items, _launch, _split_attention, live_keys, parts, softmax_heads

_BLOCK = 8          # key rows a query row is dotted with at once
_CHUNK = 64         # value rows of a values item (16 KB of 64-value float32 rows: within the core's first cache)
_IN_FLIGHT = 8      # vector sums a weighted sum keeps going, per query row
# Query rows of a group that one load of a value row serves: three rows' accumulators
# (eight each) and the operands fill AVX-512's 32 vector registers; AVX2's 16 hold one row's.
_TOGETHER = 3 if WIDTH == 16 else 1
# Bytes ahead of each key and value row read that the CPU is asked to fetch: one stream's
# loop leaves the hardware prefetcher too few loads in flight (as cpu_jit_lut4's groups).
_AHEAD = 2048


def _weighted_sum(columns, unroll, width, xrows):
    """An intrinsic: out[o + t, band] = sum over s < n of p[r + t, s0 + s] v[row0 + s0 + s, band]
    for t < xrows (query rows of one key/value head, whose probabilities and partial outputs
    are rows after one another) and the band of vector columns col .. col + columns - 1 of
    `width` lanes (v float32, or a half array's bits of cpu_jit_bits' `kind`, widened where
    loaded), n >= 1. Each vector of a value row is loaded once for the xrows query rows.

    The sums stay in registers over the n keys, stored once. Each accumulator's additions
    form a chain, key after key, that waits on the addition's latency: with fewer than
    _IN_FLIGHT columns the key loop is unrolled `unroll` times into as many sets of
    accumulators (key s adds into set s % unroll, the keys after the last whole round into set
    0), added set by set at the end. A query row's sums are the same bits whichever rows come
    with it."""
    per_set = xrows * columns          # accumulator t columns + c of a set: query row t, column c

    @intrinsic
    def weighted_sum(typingctx, p, r, s0, n, v, row0, col, out, o, kind):
        signature = types.none(p, r, s0, n, v, row0, col, out, o, kind)

        def codegen(context, builder, sig, args):
            p_arr, v_arr, o_arr = (context.make_array(sig.args[k])(context, builder, args[k]) for k in (0, 4, 7))
            p_width = cgutils.unpack_tuple(builder, p_arr.shape, 2)[1]
            depth = cgutils.unpack_tuple(builder, v_arr.shape, 2)[1]
            o_width = cgutils.unpack_tuple(builder, o_arr.shape, 2)[1]
            vf, fma = ir.VectorType(FLOAT, width), fma_function(builder, width)
            r, s0, n, row0, col, o = args[1], args[2], args[3], args[5], args[6], args[8]
            first = builder.mul(col, I64(width))
            p_rows = [builder.gep(p_arr.data, [builder.add(builder.mul(builder.add(r, I64(t)), p_width), s0)])
                      for t in range(xrows)]
            v_band = builder.gep(v_arr.data, [builder.add(builder.mul(builder.add(row0, s0), depth), first)])
            rounds = builder.sdiv(n, I64(unroll))

            def add_key(kind, s, accs):
                """accs (one set) updated with key s's products."""
                row = builder.gep(v_band, [builder.mul(s, depth)])
                for line in range(0, columns * width * (4 if kind is None else 2), 64):
                    prefetch(builder, builder.gep(builder.bitcast(row, I8.as_pointer()), [I64(line)]), _AHEAD)
                weights = [splat(builder, builder.load(builder.gep(p_row, [s])), width) for p_row in p_rows]
                updated = [None] * per_set
                for c in range(columns):
                    values = load_floats(builder, builder.gep(row, [I64(c * width)]), kind, width)
                    for t in range(xrows):
                        updated[t * columns + c] = builder.call(fma, [values, weights[t], accs[t * columns + c]])
                return updated

            def emit(kind):
                function, entry, zero = builder.function, builder.block, ir.Constant(vf, None)
                round_loop, after_rounds, key_loop, done = (function.append_basic_block(name)
                                                            for name in ("round", "after", "key", "done"))
                builder.cbranch(builder.icmp_signed(">", rounds, I64(0)), round_loop, after_rounds)

                builder.position_at_end(round_loop)
                g = builder.phi(I64)
                g.add_incoming(I64(0), entry)
                sets = loop_phis(builder, vf, per_set * unroll, zero, entry)
                updated = []
                for u in range(unroll):
                    s = builder.add(builder.mul(g, I64(unroll)), I64(u))
                    updated += add_key(kind, s, sets[u * per_set:(u + 1) * per_set])
                next_iteration(builder, g, rounds, sets, updated, round_loop, after_rounds)

                builder.position_at_end(after_rounds)
                carried = []
                for k in range(per_set * unroll):
                    phi = builder.phi(vf)
                    phi.add_incoming(zero, entry)
                    phi.add_incoming(updated[k], round_loop)
                    carried.append(phi)
                start = builder.mul(rounds, I64(unroll))
                builder.cbranch(builder.icmp_signed("<", start, n), key_loop, done)

                builder.position_at_end(key_loop)
                s = builder.phi(I64)
                s.add_incoming(start, after_rounds)
                accs = loop_phis(builder, vf, per_set, carried[:per_set], after_rounds)
                following = add_key(kind, s, accs)
                next_iteration(builder, s, n, accs, following, key_loop, done)

                builder.position_at_end(done)
                totals = []
                for k in range(per_set):
                    phi = builder.phi(vf)
                    phi.add_incoming(carried[k], after_rounds)
                    phi.add_incoming(following[k], key_loop)
                    totals.append(phi)
                for u in range(1, unroll):
                    totals = [builder.fadd(total, carried[u * per_set + k]) for k, total in enumerate(totals)]
                for t in range(xrows):
                    o_row = builder.gep(o_arr.data, [builder.add(builder.mul(builder.add(o, I64(t)), o_width), first)])
                    for c in range(columns):
                        builder.store(totals[t * columns + c],
                                      builder.bitcast(builder.gep(o_row, [I64(c * width)]), vf.as_pointer()), align=4)
                return []
            by_kind(builder, sig.args[4], args[9], emit)
            return context.get_dummy_value()
        return signature, codegen
    return weighted_sum


if WIDTH is not None:
    _dot_block, _dot_one = dot(_BLOCK, 1, WIDTH, _AHEAD), dot(1, 1, WIDTH)
    # bands of 8, 4, 2 or 1 vector columns, the narrower ones unrolled over keys: eight sums in
    # flight for each query row, of one row or of _TOGETHER
    _sum8, _sum4, _sum2, _sum1 = (_weighted_sum(columns, _IN_FLIGHT // columns, WIDTH, 1) for columns in (8, 4, 2, 1))
    _rows8, _rows4, _rows2, _rows1 = ((_weighted_sum(columns, _IN_FLIGHT // columns, WIDTH, _TOGETHER)
                                       for columns in (8, 4, 2, 1)) if _TOGETHER > 1 else (_sum8, _sum4, _sum2, _sum1))

    @numba.njit(nogil=True, cache=True)
    def _scores(q2, k2, kind, scores2, heads, kv_heads, length, cache, keys, lo, hi):
        """Each (batch entry, key/value head)'s scores of the keys in blocks [lo, hi) of
        _BLOCK (the last may be short, its keys then one at a time): each query row of its
        group of query heads dotted with the block's key rows. (The intrinsics are called
        here, not in a helper: a compiled helper taking the arrays counts references to them
        on every call, atomic operations that took longer than the block's products.)"""
        groups = heads // kv_heads
        rows = groups * length
        for item in range(q2.shape[0] // (heads * length) * kv_heads):
            b, g = item // kv_heads, item % kv_heads
            x0, key0 = (b * heads + g * groups) * length, item * cache
            whole = min(hi, keys // _BLOCK)
            spread = whole - lo          # the band's whole blocks: _BLOCK streams, a block's keys spread apart
            for j in range(lo * _BLOCK, lo * _BLOCK + spread):
                for r in range(x0, x0 + rows):
                    row = scores2[r]
                    a0, a1, a2, a3, a4, a5, a6, a7 = _dot_block(k2, key0 + j, spread, q2, r, kind)
                    row[j], row[j + spread], row[j + 2 * spread], row[j + 3 * spread] = a0, a1, a2, a3
                    row[j + 4 * spread], row[j + 5 * spread], row[j + 6 * spread], row[j + 7 * spread] = a4, a5, a6, a7
            if hi * _BLOCK > keys:
                for one in range(max(lo, whole) * _BLOCK, keys):
                    for r in range(x0, x0 + rows):
                        scores2[r, one] = _dot_one(k2, key0 + one, 1, q2, r, kind)[0]

    @numba.njit(nogil=True, cache=True)
    def _partial_values(probs, v2, kind, partial, heads, kv_heads, length, cache, keys, lo, hi):
        """partial[chunk rows + row] = the query row's probabilities times the chunk's value
        rows, for the (batch entry, key/value head, chunk of _CHUNK keys) items in [lo, hi):
        every query row of the head's group, every band of vector columns."""
        groups = heads // kv_heads
        rows, columns, total_rows = groups * length, v2.shape[1] // WIDTH, probs.shape[0]
        chunks = (keys + _CHUNK - 1) // _CHUNK
        for item in range(lo, hi):
            head, chunk = item // chunks, item % chunks
            b, g = head // kv_heads, head % kv_heads
            x0, key0, s0 = (b * heads + g * groups) * length, head * cache, chunk * _CHUNK
            n = min(_CHUNK, keys - s0)
            r = x0
            while r < x0 + rows:
                o, many = chunk * total_rows + r, _TOGETHER > 1 and r + _TOGETHER <= x0 + rows
                col = 0
                while col + 8 <= columns:
                    if many:
                        _rows8(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    else:
                        _sum8(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    col += 8
                if col + 4 <= columns:
                    if many:
                        _rows4(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    else:
                        _sum4(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    col += 4
                if col + 2 <= columns:
                    if many:
                        _rows2(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    else:
                        _sum2(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    col += 2
                if col < columns:
                    if many:
                        _rows1(probs, r, s0, n, v2, key0, col, partial, o, kind)
                    else:
                        _sum1(probs, r, s0, n, v2, key0, col, partial, o, kind)
                r += _TOGETHER if many else 1

    @numba.njit(nogil=True, cache=True)
    def _add_partials(partial, chunks, out2, lo, hi):
        """out2[r] = the sum of the chunks' partial outputs of row r, in the chunks' order,
        for the rows [lo, hi)."""
        total_rows = out2.shape[0]
        for r in range(lo, hi):
            row = out2[r]
            row[:] = partial[r]
            for chunk in range(1, chunks):
                other = partial[chunk * total_rows + r]
                for j in range(row.shape[0]):
                    row[j] += other[j]

    @numba.njit(nogil=True, cache=True, inline="always")
    def _rows_of(q, k, v, out, scores):
        """The arrays as the passes read them: a row per query, key, value, output or scores."""
        batch, heads, length, depth = q.shape
        rows, cached = batch * heads * length, k.shape[0] * k.shape[1] * k.shape[2]
        return (q.reshape(rows, depth), k.reshape(cached, depth), v.reshape(cached, v.shape[3]),
                out.reshape(rows, v.shape[3]), scores.reshape(rows, scores.shape[2]))

    @numba.njit(nogil=True, cache=True, inline="always")
    def _counts(q, k, keys):
        """The passes' units: blocks of keys, query heads, chunks of keys, (key/value head,
        chunk) items, output rows."""
        chunks = (keys + _CHUNK - 1) // _CHUNK
        return ((keys + _BLOCK - 1) // _BLOCK, q.shape[0] * q.shape[1], chunks, k.shape[0] * k.shape[1] * chunks,
                q.shape[0] * q.shape[1] * q.shape[2])

    @numba.njit(nogil=True, cache=True)
    def _on_one_thread(q, k, v, kind, mask, scale, scores, partial, out, keys):
        """The passes on the calling thread."""
        q2, k2, v2, out2, scores2 = _rows_of(q, k, v, out, scores)
        blocks, heads_total, chunks, items, rows = _counts(q, k, keys)
        heads, kv_heads, length, cache = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
        _scores(q2, k2, kind, scores2, heads, kv_heads, length, cache, keys, 0, blocks)
        softmax_heads(scores, mask, scale, 0, heads_total)
        _partial_values(scores2, v2, kind, partial, heads, kv_heads, length, cache, keys, 0, items)
        _add_partials(partial, chunks, out2, 0, rows)

    @numba.njit(nogil=True, cache=True, parallel=True)
    def _split(q, k, v, kind, mask, scale, scores, partial, out, keys, parts):
        """The passes, each split into `parts` bands over numba's threads."""
        q2, k2, v2, out2, scores2 = _rows_of(q, k, v, out, scores)
        blocks, heads_total, chunks, items, rows = _counts(q, k, keys)
        heads, kv_heads, length, cache = q.shape[1], k.shape[1], q.shape[2], k.shape[2]
        for part in numba.prange(parts):
            _scores(q2, k2, kind, scores2, heads, kv_heads, length, cache, keys, blocks * part // parts,
                    blocks * (part + 1) // parts)
        for part in numba.prange(parts):
            softmax_heads(scores, mask, scale, heads_total * part // parts, heads_total * (part + 1) // parts)
        for part in numba.prange(parts):
            _partial_values(scores2, v2, kind, partial, heads, kv_heads, length, cache, keys, items * part // parts,
                            items * (part + 1) // parts)
        for part in numba.prange(parts):
            _add_partials(partial, chunks, out2, rows * part // parts, rows * (part + 1) // parts)


    _rotary = load().rotary

    @numba.njit(nogil=True, cache=True)
    def decode_step(xq, xk, xv, cos, sin, k_cache, v_cache, position, mask, scale, dead, split_bytes, parts, q_rows,
                    k_rows, out):
        """A decoding step's whole attention in one call: the query and key rows xq (B, 1, H D)
        and xk (B, 1, KV D) rotated (cpu_jit's rotary, cos and sin (B or 1, 1, D); None for a
        model without rotary embeddings, the rows copied) into q_rows and k_rows (B, 1, H or KV,
        D), the key and value rows written into the float32 caches (B, KV, S, D) at position[0],
        and the attention of the queries over the caches' live keys (mask None or (1, 1, 1, S),
        additive; cpu_jit_parallel.live_keys with `dead`) written into out (B, H, 1, D): the bits
        of those steps taken one call each (query heads sharing key/value heads by this module's
        passes, others by cpu_jit_parallel's loops), split over `parts` of numba's threads where
        the live keys and values reach `split_bytes` (the caller holds the pool's launch lock).
        The Python between those calls cost a step more than their work, run where streaming the
        weights has pushed it out of the CPU's caches (SmolLM2-135M-shaped, 30 layers: ~45 us a
        layer against ~14 us for the attention alone in a core's caches). False, writing
        nothing, where the position is outside the caches."""
        batch, kv_heads, cache, depth = k_cache.shape
        heads, i = xq.shape[2] // depth, position[0]
        if i < 0 or i >= cache:
            return False
        if cos is None:
            q_rows[...] = xq.reshape(batch, 1, heads, depth)
            k_rows[...] = xk.reshape(batch, 1, kv_heads, depth)
        else:
            _rotary(xq.reshape(batch, 1, heads, depth), cos, sin, q_rows)
            _rotary(xk.reshape(batch, 1, kv_heads, depth), cos, sin, k_rows)
        k_cache[:, :, i] = k_rows[:, 0]
        v_cache[:, :, i] = xv.reshape(batch, kv_heads, depth)
        if mask is None:
            rows_mask, keys = None, cache
        else:
            rows_mask = mask.reshape(1, 1, cache)
            keys = live_keys(rows_mask, cache, dead)
        split = parts > 1 and 8 * batch * kv_heads * keys * depth >= split_bytes
        q = q_rows.reshape(batch, heads, 1, depth)
        scores = np.empty((batch * heads, 1, keys), np.float32)
        if heads == kv_heads and split:
            _split_attention(q, k_cache, v_cache, _FLOAT32, rows_mask, scale, scores, out, parts)
        elif heads == kv_heads:
            _attention_items(q, k_cache, v_cache, _FLOAT32, rows_mask, scale, scores, out, 0, batch * heads)
        else:
            partial = np.empty(((keys + _CHUNK - 1) // _CHUNK * batch * heads, depth), np.float32)
            if split:
                _split(q, k_cache, v_cache, _FLOAT32, rows_mask, scale, scores, partial, out, keys, parts)
            else:
                _on_one_thread(q, k_cache, v_cache, _FLOAT32, rows_mask, scale, scores, partial, out, keys)
        return True


def serves(depth, value_depth, keys):
    """Whether these kernels serve heads of these depths over `keys` keys (whole vectors)."""
    return usable() and keys > 0 and depth > 0 and value_depth > 0 and not (depth % WIDTH or value_depth % WIDTH)


def attention(q, k, v, kind, mask, scale, out, split, keys):
    """cpu_jit_parallel.attention's result (its arguments, `kind` its kind of k and v, `keys`
    the keys read) computed here; the caller checks `serves` first."""
    rows = q.shape[0] * q.shape[1] * q.shape[2]
    scores = np.empty((q.shape[0] * q.shape[1], q.shape[2], keys), np.float32)
    partial = np.empty(((keys + _CHUNK - 1) // _CHUNK * rows, v.shape[3]), np.float32)
    if split:
        with _launch:
            _split(q, k, v, kind, mask, np.float32(scale), scores, partial, out, keys, parts())
    else:
        _on_one_thread(q, k, v, kind, mask, np.float32(scale), scores, partial, out, keys)


def _computes():
    """Two query heads sharing a key/value head, five keys (a short block), against float64."""
    rng = np.random.default_rng(0)
    q = rng.random((1, 2, 1, 2 * WIDTH), dtype=np.float32)
    k, v = (rng.random((1, 1, 5, 2 * WIDTH), dtype=np.float32) for _ in range(2))
    out = np.empty((1, 2, 1, 2 * WIDTH), np.float32)
    attention(q, k, v, _FLOAT32, None, 0.5, out, False, 5)
    scores = np.einsum("hd,sd->hs", q[0, :, 0].astype(np.float64), k[0, 0].astype(np.float64)) * 0.5
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    expected = (probs / probs.sum(-1, keepdims=True)) @ v[0, 0].astype(np.float64)
    return bool(np.allclose(out[0, :, 0], expected, rtol=1e-5))


# Whether the kernels compile and compute here (tried once on a small case).
usable = checked_once(WIDTH is not None, _computes)
