# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""A decoding step's attention block as one node of a compiled replay.

A decoder's layer captures, between its query/key/value projections and its output
projection, ten to twelve small nodes per decoding step: three head splits, two rotations
(rotary models), the key and value reshaped and written into the static cache at the step's
position, the attention, and its output permuted and reshaped back into rows. Each costs its kernel
call, paid where the weights streamed just before have pushed everything else out of the
CPU's caches: in a SmolLM2-135M-shaped float32 step the twelve took about 2 of 22 ms, most
of it the attention reading its cache rows back from memory, which fusing cannot save; the
fused node saves 0.2-0.6 ms a step (measured in one process, fused and unfused graphs
taking turns).

`fuse_decode_attention` (a graph pass registered with core.jit.passes) replaces such a
chain by one `decode_attention` node at the attention's place, which writes the cache rows
and the attention's rows itself with the kernels the twelve nodes called (each result the
same bits). It fuses only the exact pattern: one query position, host arrays of one dtype
(float32, or a half one, whose query and mask are widened and output rounded as the unfused
attention's replay does), the full-width rotation (cos/sin as wide as a head) or none, keys and
values written at one position of a cache the attention reads whole, and no other reader
of anything in between; any other graph keeps its nodes.
"""
import math

import numpy as np

from ..core import _tensor
from ..core.autograd import function as _function
from ..core.backends import cpu_jit, cpu_kernels
from ..core.jit import passes
from ..core.jit.graph import NO_GUARD, Node, SlotRef
from ..core.jit.kernels import host_operands, writing_into
from ..core.jit.lower import generic_kernel, kernel_for
from ..core.nn.functional.attention import ScaledDotProductAttention
from ..core.ops import inplace, shape
from ..core.ops._helpers import HALF_NP
from .modeling_attention import _SplitHeads
from .modeling_rotary import _Rotary

_F32 = np.dtype(np.float32)


def decode_attention(xq, xk, xv, cos, sin, k_cache, v_cache, position, mask, scale, groups, head_dim):
    """The attention of one query position, from the projections' rows xq (B, 1, H D), xk and
    xv (B, 1, KV D): queries and keys rotated (cos, sin (B or 1, 1, D); both None for a model
    without rotary embeddings), keys and values written into the caches (B, KV, S, D) at
    `position` (an index array of one entry), the attention over the caches (`mask` None or
    additive), as rows (B, 1, H D); each step by the op the unfused graph ran."""
    wrap = _tensor._wrap

    def split(x):
        return x.reshape(x.shape[0], x.shape[1], -1, head_dim).transpose(0, 2, 1, 3)

    def rotate(x):
        if cos is None:
            return x
        return _Rotary.forward(_function.Node(_Rotary), wrap(x), wrap(cos), wrap(sin), 1)

    q, k, v = rotate(split(xq)), rotate(split(xk)), split(xv)
    at = (slice(None), slice(None), position)
    inplace.assign(k_cache, k, at)
    inplace.assign(v_cache, v, at)
    ctx = _function.Node(ScaledDotProductAttention)
    ctx.needs_input_grad = (False,) * 7
    out = ScaledDotProductAttention.forward(ctx, wrap(q), wrap(k_cache), wrap(v_cache),
                                            None if mask is None else wrap(mask), None, scale, groups)
    return out.transpose(0, 2, 1, 3).reshape(xq.shape)


@kernel_for(decode_attention)
def _decode_attention_kernel(node, graph):
    """The fused node's replay: the compiled rotation into two small row buffers, the cache
    rows written as slices, and the decoding attention planned once for the shapes
    (cpu_kernels.decode_attention_plan) writing into the output rows; for a half model the
    query and mask widened and the output rounded around it, as the unfused attention's
    replay does. A float32 step with one row of mask for every head runs all of that in one
    compiled call (cpu_kernels.decode_step_plan), the same bits. The eager function where a
    position falls outside the cache (it wraps or raises as the cache write did), or a rotation
    the compiled loop declines."""
    compiled, bits = cpu_jit.load(), cpu_jit.half_bits()
    refs = host_operands(node, graph)
    xq, xk, xv, cos, sin, k_cache, v_cache, position, mask, scale, groups, depth = node.args
    if compiled is None or refs is None:
        return None
    rotated = cos is not None
    dtype = graph.slots[xq.slot].dtype
    kind = None if dtype == _F32 or bits is None else bits.kind_of(dtype)
    if dtype != _F32 and kind is None:
        return None
    shape_of = {r.slot: graph.slots[r.slot].shape for r in refs}
    batch, heads = shape_of[xq.slot][0], shape_of[xq.slot][2] // depth
    kv_heads, keys = shape_of[k_cache.slot][1], shape_of[k_cache.slot][2]
    step = cpu_kernels.decode_attention_plan((batch, heads, 1, depth), shape_of[k_cache.slot],
                                             shape_of[v_cache.slot], None if mask is None else shape_of[mask.slot],
                                             scale, half=kind)
    if step is None:
        return None
    unfused = generic_kernel(node, graph)

    def fallback(xq, xk, xv, cos, sin, *rest):
        return unfused(xq, xk, xv, cos, sin, *rest) if rotated else unfused(xq, xk, xv, *rest)

    rotary = cpu_kernels.rotary
    q_rows, k_rows = np.empty((batch, 1, heads, depth), dtype), np.empty((batch, 1, kv_heads, depth), dtype)
    q_heads = q_rows.reshape(batch, heads, 1, depth)    # one position: the same memory as the rows

    def rows_of(xq, xk, cos, sin):
        """The query and key rows rotated (or copied) into q_rows and k_rows; False where the
        compiled rotation declines them."""
        if not rotated:
            q_rows[...] = xq.reshape(q_rows.shape)
            k_rows[...] = xk.reshape(k_rows.shape)
            return True
        return rotary(_heads(xq, batch, depth), cos, sin, q_rows) is not None and \
            rotary(_heads(xk, batch, depth), cos, sin, k_rows) is not None

    whole = None if kind is not None else cpu_kernels.decode_step_plan(
        (shape_of[xq.slot], shape_of[xk.slot]), shape_of[cos.slot] if rotated else None, shape_of[k_cache.slot],
        None if mask is None else shape_of[mask.slot], scale)
    if whole is not None:
        def attend_whole(xq, xk, xv, cos, sin, k_cache, v_cache, position, *mask_and_out):
            out = mask_and_out[-1]
            if whole(xq, xk, xv, cos, sin, k_cache, v_cache, position, *mask_and_out[:-1], q_rows, k_rows,
                     out.reshape(batch, heads, 1, depth)):
                return out
            return attend(xq, xk, xv, cos, sin, k_cache, v_cache, position, *mask_and_out)
    if kind is not None:
        q32, out32 = np.empty((batch, heads, 1, depth), _F32), np.empty((batch, heads, 1, depth), _F32)
        mask32 = None if mask is None else np.empty(shape_of[mask.slot], _F32)

    def attend(xq, xk, xv, cos, sin, k_cache, v_cache, position, *mask_and_out):
        out = mask_and_out[-1]
        i = int(position[0])
        if not (0 <= i < keys and k_cache.flags.c_contiguous and v_cache.flags.c_contiguous and
                rows_of(xq, xk, cos, sin)):
            out[...] = fallback(xq, xk, xv, cos, sin, k_cache, v_cache, position, *mask_and_out[:-1])
            return out
        k_cache[:, :, i] = k_rows[:, 0]
        v_cache[:, :, i] = xv.reshape(batch, kv_heads, depth)
        if kind is None:
            step(q_heads, k_cache, v_cache, *mask_and_out[:-1], out.reshape(batch, heads, 1, depth))
            return out
        bits.widen_into(q_rows.reshape(-1).view(np.uint16), kind, q32.reshape(-1))
        if mask32 is not None:
            bits.widen_into(cpu_kernels._flat_bits(mask_and_out[0]), kind, mask32.reshape(-1))
        step(q32, k_cache, v_cache, *(() if mask32 is None else (mask32,)), out32)
        bits.narrow_into(out32.reshape(-1), kind, out.reshape(-1).view(np.uint16))
        return out
    kernel = attend if whole is None else attend_whole
    if not rotated:
        def unrotated(xq, xk, xv, k_cache, v_cache, position, *mask_and_out):
            return kernel(xq, xk, xv, None, None, k_cache, v_cache, position, *mask_and_out)
        return writing_into(unrotated, (graph.slots[node.outputs[0]].shape, dtype))
    return writing_into(kernel, (graph.slots[node.outputs[0]].shape, dtype))


def _heads(rows, batch, depth):
    """A projection's rows (B, 1, n D) as the heads view (B, n, 1, D) that rotary reads."""
    return rows.reshape(batch, 1, -1, depth).transpose(0, 2, 1, 3)


@passes.register
def fuse_decode_attention(graph):
    """Replace each decoding attention chain the module docstring describes by one
    decode_attention node at the attention's place."""
    if cpu_jit.load() is None:
        return
    context = _Context(graph)
    fused = {}
    for node in graph.nodes:
        match = context.match(node) if node.op is ScaledDotProductAttention else None
        if match is None or any(id(n) in fused for n in match[1]):
            continue
        replacement, removed, derived = match
        for n in removed:
            fused[id(n)] = None
        fused[id(node)] = replacement
        out = replacement.outputs[0]
        # rows of its own now, no longer a view of the attention's output; so are its views
        for slot in (out,) + derived:
            graph.slots[slot].root = out
        graph.slots[out].c_contiguous = True
    if fused:
        graph.nodes = [fused.get(id(n), n) for n in graph.nodes if fused.get(id(n), n) is not None]


class _Context:
    """What matching needs to know about the graph, computed once per pass."""

    def __init__(self, graph):
        self.graph, self.slots = graph, graph.slots
        self.producer = {o: n for n in graph.nodes for o in n.outputs if o is not None}
        self.readers = passes.slot_readers(graph)
        self.escaping = graph.escaping_slots()
        self.position = {id(n): i for i, n in enumerate(graph.nodes)}
        self.views = {}
        for slot in graph.slots:
            if slot.root != slot.index:
                self.views.setdefault(slot.root, []).append(slot.index)

    def made_by(self, slot, op, reader):
        """The plain node of `op` making `slot` when `reader` is its only reader, else None."""
        node = self.producer.get(slot)
        if node is None or node.op is not op or node.kwargs or node.writes is not None or \
                node.expect is not NO_GUARD or slot in self.escaping:
            return None
        return node if self.readers.get(slot, []) == [reader] else None

    def only_reader(self, slot, op):
        """The plain node of `op` that alone reads `slot` (not an output of the graph), else None."""
        users = self.readers.get(slot, [])
        if len(users) != 1 or slot in self.escaping:
            return None
        node = users[0]
        plain = node.op is op and not node.kwargs and node.writes is None and node.expect is NO_GUARD
        return node if plain else None

    def cache_write(self, cache, attention):
        """The assign node writing the rows `attention` reads from `cache`: the last write into
        the cache's memory before it, of one position; (node, position slot) or None."""
        root, at = self.slots[cache].root, self.position[id(attention)]
        writes = [n for n in self.graph.nodes[:at] if n.writes and any(self.slots[w].root == root for w in n.writes)]
        if not writes:
            return None
        node = writes[-1]
        if node.op is not inplace.assign or node.kwargs or tuple(node.outputs) != (cache,) or len(node.args) != 3:
            return None
        target, value, key = node.args
        if type(target) is not SlotRef or target.slot != cache or type(value) is not SlotRef or \
                type(key) is not tuple or len(key) != 3 or key[:2] != (slice(None), slice(None)) or \
                type(key[2]) is not SlotRef:
            return None
        index = self.slots[key[2].slot]
        if index.shape != (1,) or index.dtype.kind not in "iu":
            return None
        return node, key[2].slot

    def match(self, attention):
        """(the decode_attention node, the nodes it replaces) for a matching attention node."""
        slots = self.slots
        if attention.kwargs or attention.writes is not None or attention.expect is not NO_GUARD or \
                host_operands(attention, self.graph) is None:
            return None
        q, k_cache, v_cache, mask, keep, scale, groups = attention.args
        if keep is not None or any(r.array for r in (q, k_cache, v_cache)) or (mask is not None and mask.array):
            return None
        dtype = slots[q.slot].dtype
        if (dtype != _F32 and dtype not in HALF_NP) or \
                any(slots[r.slot].dtype != dtype for r in (k_cache, v_cache) + ((mask,) if mask else ())):
            return None
        batch, heads, length, depth = slots[q.slot].shape if len(slots[q.slot].shape) == 4 else (0,) * 4
        if length != 1 or len(slots[k_cache.slot].shape) != 4 or k_cache.slot == v_cache.slot:
            return None
        kv_heads = slots[k_cache.slot].shape[1]
        # the output: permuted to (B, 1, H, D) and reshaped to rows (B, 1, H D)
        permute = self.only_reader(attention.outputs[0], shape.Permute)
        rows = permute and self.only_reader(permute.outputs[0], shape.Reshape)
        if rows is None or tuple(permute.args[1]) != (0, 2, 1, 3) or \
                slots[rows.outputs[0]].shape != (batch, 1, heads * depth):
            return None
        # the query: heads split from its projection's rows, rotated where the model rotates
        rotate_q = self.made_by(q.slot, _Rotary, attention)
        split_q = self.made_by((rotate_q.args[0] if rotate_q else q).slot, _SplitHeads, rotate_q or attention)
        if split_q is None:
            return None
        # the keys and values: written at one position of the caches the attention reads
        k_write, v_write = self.cache_write(k_cache.slot, attention), self.cache_write(v_cache.slot, attention)
        if k_write is None or v_write is None or k_write[1] != v_write[1]:
            return None
        (k_write, index), (v_write, _) = k_write, v_write
        k_rows = self.made_by(k_write.args[1].slot, shape.Reshape, k_write)
        rotate_k = k_rows and self.made_by(k_rows.args[0].slot, _Rotary, k_rows)
        split_k = k_rows and self.made_by((rotate_k.args[0] if rotate_k else k_rows.args[0]).slot, _SplitHeads,
                                          rotate_k or k_rows)
        v_rows = self.made_by(v_write.args[1].slot, shape.Reshape, v_write)
        split_v = v_rows and self.made_by(v_rows.args[0].slot, _SplitHeads, v_rows)
        if split_k is None or split_v is None or (rotate_q is None) != (rotate_k is None):
            return None
        cos = sin = None
        if rotate_q is not None:
            cos, sin = rotate_q.args[1:3]
            if any(type(r) is not SlotRef or r.array for r in (cos, sin) + tuple(rotate_k.args[1:3])) or \
                    [r.slot for r in rotate_k.args[1:3]] != [cos.slot, sin.slot] or rotate_q.args[3] != 1 or \
                    rotate_k.args[3] != 1:
                return None
        projections = [split.args[0] for split in (split_q, split_k, split_v)]
        if any(type(p) is not SlotRef or p.array or split.args[1] != depth
               for p, split in zip(projections, (split_q, split_k, split_v))):
            return None
        expected = [(batch, 1, heads * depth), (batch, 1, kv_heads * depth), (batch, 1, kv_heads * depth)]
        rotations = [] if cos is None else [cos, sin]
        if [slots[p.slot].shape for p in projections] != expected or \
                any(slots[p.slot].dtype != dtype for p in projections + rotations) or \
                (rotations and (slots[cos.slot].shape != slots[sin.slot].shape or
                                slots[cos.slot].shape[-2:] != (1, depth))) or \
                math.prod(slots[v_cache.slot].shape) != math.prod(slots[k_cache.slot].shape):
            return None
        removed = [n for n in (split_q, rotate_q, split_k, rotate_k, k_rows, k_write, split_v, v_rows, v_write, permute,
                               rows) if n is not None]
        derived = self._views_of(rows.outputs[0], slots[attention.outputs[0]].root)
        if not self._private(removed, attention, rows.outputs[0], derived) or \
                not self._undisturbed(removed, attention, k_cache, v_cache):
            return None
        args = (*projections, cos, sin, k_cache, v_cache, SlotRef(index, array=True), mask, scale, groups, depth)
        return Node(decode_attention, args, {}, [rows.outputs[0]], False, writes=(k_cache.slot, v_cache.slot)), \
            removed, derived

    def _views_of(self, output, root):
        """The views of `root` made from `output` (a view made from it, and so on): GPT-2's
        Conv1D reshapes the attention's rows before its product."""
        derived = {output}
        for slot in sorted(self.views.get(root, ())):
            node = self.producer.get(slot)
            if node is not None and any(r in derived for r in node.reads()):
                derived.add(slot)
        return tuple(sorted(derived - {output}))

    def _private(self, removed, attention, output, derived):
        """Whether only the removed nodes see what they and the attention make: no other slot
        views it but the output and the views `derived` from it, no other node reads it (the
        caches excepted, whose writes move, not vanish)."""
        made = {o for n in removed if n.writes is None for o in n.outputs if o is not None}
        made = (made | {attention.outputs[0]}) - {output}
        seen = made | {output} | set(derived)
        return not any(slot in self.escaping or any(v not in seen for v in self.views.get(slot, ())) for slot in made)

    def _undisturbed(self, removed, attention, k_cache, v_cache):
        """Whether moving the removed nodes' reads and cache writes to the attention's place
        keeps every value: nothing in between reads or writes the caches, or writes what the
        fused node reads."""
        start = min(self.position[id(n)] for n in removed)
        end = self.position[id(attention)]
        members = {id(n) for n in removed}
        caches = {self.slots[k_cache.slot].root, self.slots[v_cache.slot].root}
        for node in self.graph.nodes[start:end]:
            if id(node) in members:
                continue
            if any(self.slots[s].root in caches for s in node.reads()):
                return False
        read = {self.slots[s].root for n in removed + [attention] for s in n.reads()} - caches
        return not passes.written_between(self.graph, start, end, read)
