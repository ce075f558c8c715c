# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Rotary position embeddings applied to queries and keys, as one autograd node per tensor.

x·cos + rotate_half(x)·sin spelled with core ops costs seven dispatched ops per tensor and
layer; at decode time, where each op touches a few kilobytes, that dispatch dominates. The
fused node computes the same expression on the arrays and writes its backward with core
ops (so higher-order gradients still work). `RotaryEmbedding` computes those cos/sin once per
forward call for every layer of a decoder.

Partial rotary (Phi, GPT-NeoX, Phi-4-mini: `partial_rotary_factor` < 1) rotates only the first
`rotary_dim` features of each head and passes the rest through; the frequencies of every rope
type are computed over that `rotary_dim`, so the two compose.
"""
import threading

import numpy as np

from .. import core
from ..core import nn
from ..core.autograd.function import Function
from ..core.backends import cpu_kernels
from ..core.jit.kernels import host_operands, writing_into
from ..core.jit.lower import generic_kernel, kernel_for
from ..core.ops._helpers import HALF_NP, fused_kernel, narrow, xp_of
from .modeling_rope_utils import nested_rope_parameter_keys, rope_init


def rotate_half(x):
    """(x1, x2) → (-x2, x1) over the two halves of the last dim."""
    half = x.shape[-1] // 2
    return core.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rotate_half_transposed(y):
    """The transpose of rotate_half: (y1, y2) → (y2, -y1)."""
    half = y.shape[-1] // 2
    return core.cat((y[..., half:], -y[..., :half]), dim=-1)


class _Rotary(Function):
    """cos/sin come without the head axis; it is inserted at `head_dim` on the arrays."""

    @staticmethod
    def forward(ctx, x, cos, sin, head_dim):
        ctx.save_for_backward(x, cos, sin)
        ctx.head_dim = head_dim
        kernel = fused_kernel("rotary", x) if head_dim == 1 else None
        if kernel is not None:
            out = kernel(x._data, cos._data, sin._data)
            if out is not None:
                return out
        xp = xp_of(x)
        xa, ca, sa = x._data, xp.expand_dims(cos._data, head_dim), xp.expand_dims(sin._data, head_dim)
        dtype = xa.dtype
        if dtype in HALF_NP:
            # each product and the sum rounded to the half dtype, as torch's op-by-op
            # expression rounds them, computed in float32 (NumPy's half arithmetic is slow)
            xa, ca, sa = xa.astype(np.float32), ca.astype(np.float32), sa.astype(np.float32)
        half = xa.shape[-1] // 2
        rotated = xp.concatenate((-xa[..., half:], xa[..., :half]), axis=-1)
        if dtype in HALF_NP:
            first = narrow(xa * ca, dtype).astype(np.float32)
            return narrow(first + narrow(rotated * sa, dtype).astype(np.float32), dtype)
        out = xa * ca
        out += rotated * sa
        return out

    @staticmethod
    def backward(ctx, grad):
        x, cos, sin = ctx.saved_tensors
        dim = ctx.head_dim
        grad_x = grad_cos = grad_sin = None
        if ctx.needs_input_grad[0]:
            grad_x = grad * cos.unsqueeze(dim) + _rotate_half_transposed(grad * sin.unsqueeze(dim))
        if ctx.needs_input_grad[1]:
            grad_cos = (grad * x).sum(dim)
        if ctx.needs_input_grad[2]:
            grad_sin = (grad * rotate_half(x)).sum(dim)
        return grad_x, grad_cos, grad_sin, None


@kernel_for(_Rotary)
def _rotary_kernel(node, graph):
    """The compiled rotation called directly in a replay (twice per layer and decoding step),
    into the (B, L, H, D) array the replay hands it (float32 or a half dtype, as the forward's
    kernel takes them); the forward where it declines the arrays."""
    refs = host_operands(node, graph)
    if refs is None or len(refs) != 3 or node.args[3] != 1 or len(graph.slots[node.outputs[0]].shape) != 4:
        return None
    fallback = generic_kernel(node, graph)
    batch, heads, length, depth = graph.slots[node.outputs[0]].shape
    dtype = graph.slots[refs[0].slot].dtype
    if any(graph.slots[r.slot].dtype != dtype for r in refs):
        return None
    if dtype != np.float32 and dtype not in HALF_NP:
        return None
    rotary = cpu_kernels.rotary

    def rotate(x, cos, sin, out):
        result = rotary(x, cos, sin, out)
        return fallback(x, cos, sin) if result is None else result
    return writing_into(rotate, ((batch, length, heads, depth), dtype))


def apply_rotary(x, cos, sin, unsqueeze_dim=1):
    """x·cos + rotate_half(x)·sin, where cos/sin (of x's dtype) lack x's head axis `unsqueeze_dim`.

    When cos/sin are narrower than x's last dim (partial rotary), only that many leading
    features are rotated and the others are passed through unchanged.
    """
    if cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise TypeError(f"rotary cos/sin ({cos.dtype}, {sin.dtype}) must have the dtype of x ({x.dtype})")
    rotary_dim = cos.shape[-1]
    if rotary_dim < x.shape[-1]:
        rotated = _Rotary.apply(x[..., :rotary_dim].contiguous(), cos, sin, unsqueeze_dim)
        return core.cat((rotated, x[..., rotary_dim:]), dim=-1)
    return _Rotary.apply(x, cos, sin, unsqueeze_dim)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Rotate query and key by their positions' angles; cos/sin gain a head axis at `unsqueeze_dim`."""
    return apply_rotary(q, cos, sin, unsqueeze_dim), apply_rotary(k, cos, sin, unsqueeze_dim)


_SWITCHING_FREQUENCIES = threading.Lock()


class RotaryEmbedding(nn.Module):
    """cos/sin of position · inv_freq for the positions of a forward call, for every rope type of
    `modeling_rope_utils` (default, linear, dynamic, yarn, longrope, llama3).

    `inv_freq` is a non-persistent buffer (checkpoints do not store it). As HF's
    `dynamic_rope_update` does, with "dynamic" RoPE the frequencies are recomputed when a
    position beyond every one seen so far arrives (and reset once sequences are short again),
    and with "longrope" they switch to the long factors while a position lies past the
    pretraining length.

    When `config.rope_parameters` holds one dict per layer type (Gemma 3's local and global
    bases), the module keeps one such embedding per type (`by_layer_type`) and `forward`
    takes the `layer_type` to compute for, as HF's per-type rotary modules do.
    """

    def __init__(self, config, device=None, layer_type=None):
        super().__init__()
        self.config = config
        self.layer_type = layer_type
        nested = nested_rope_parameter_keys(config, config.rope_parameters) if layer_type is None else []
        self.by_layer_type = nn.ModuleDict({
            kind: type(self)(config, device, layer_type=kind) for kind in nested
            if config.rope_parameters[kind] is not None}) if nested else None
        if nested:
            return
        self.rope_parameters = config.rope_parameters[layer_type] if layer_type else config.rope_parameters
        self.rope_type = self.rope_parameters["rope_type"]
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        inv_freq, self.attention_scaling = rope_init(config, layer_type=layer_type)
        self.register_buffer("inv_freq", core.tensor(inv_freq, device=device), persistent=False)
        self.register_buffer("original_inv_freq", core.tensor(inv_freq, device=device), persistent=False)
        if self.rope_type == "longrope":
            original = self.rope_parameters["original_max_position_embeddings"]
            long_inv_freq, _ = rope_init(config, seq_len=original + 1, layer_type=layer_type)
            self.register_buffer("long_inv_freq", core.tensor(long_inv_freq, device=device), persistent=False)

    def __getattr__(self, name):
        """HF's names for the per-type state, `<layer type>_inv_freq` (or `_original_inv_freq`,
        `_attention_scaling`), read from that layer type's embedding."""
        by_layer_type = self.__dict__.get("_modules", {}).get("by_layer_type")
        if by_layer_type is not None:
            for kind, embedding in by_layer_type.items():
                if name.startswith(kind + "_"):
                    return getattr(embedding, name[len(kind) + 1:])
        return super().__getattr__(name)

    def _update_dynamic_frequencies(self, position_ids):
        seq_len = int(position_ids.max()) + 1
        if seq_len > self.max_seq_len_cached:
            inv_freq, self.attention_scaling = rope_init(self.config, seq_len=seq_len, layer_type=self.layer_type)
            self.inv_freq = core.tensor(inv_freq, device=self.inv_freq.device)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len < self.max_seq_len_cached:
            self.inv_freq = self.original_inv_freq
            self.max_seq_len_cached = self.original_max_seq_len

    def _update_longrope_frequencies(self, position_ids):
        original = self.rope_parameters["original_max_position_embeddings"]
        if int(position_ids.max()) + 1 <= original:
            self.inv_freq = self.original_inv_freq
        else:
            self.inv_freq = self.long_inv_freq

    def _longrope_frequencies_in_graph(self, position_ids):
        """The long or short factors chosen inside a captured graph (one where instead of a
        value read), so that the graph serves every length and no guard pins a position."""
        beyond = position_ids.max() + 1 > self.rope_parameters["original_max_position_embeddings"]
        return core.where(beyond, self.long_inv_freq, self.original_inv_freq)

    def forward(self, x, position_ids, layer_type=None):
        """(cos, sin), each (batch, seq, rotary_dim) in x's dtype."""
        if self.by_layer_type is not None:
            return self.by_layer_type[layer_type](x, position_ids)
        # Forwards may run on several threads at once (SentenceTransformer.encode's batches):
        # the frequencies this call uses are switched and read as one step.
        with _SWITCHING_FREQUENCIES:
            if "dynamic" in self.rope_type:
                self._update_dynamic_frequencies(position_ids)
            elif self.rope_type == "longrope" and not core.compiler.is_compiling():
                self._update_longrope_frequencies(position_ids)
            inv_freq, scaling = self.inv_freq, self.attention_scaling
            if self.rope_type == "longrope" and core.compiler.is_compiling():
                inv_freq = self._longrope_frequencies_in_graph(position_ids)
        with core.no_grad():
            freqs = position_ids[..., None].float() * inv_freq.float()
            emb = core.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            if scaling != 1.0:
                cos, sin = cos * scaling, sin * scaling
        return cos.to(x.dtype), sin.to(x.dtype)

    def for_layer_types(self, x, position_ids, layer_types):
        """{layer type: (cos, sin)} for each of `layer_types`, computed once per distinct rope."""
        if self.by_layer_type is None:
            shared = self(x, position_ids)
            return dict.fromkeys(layer_types, shared)
        return {kind: self(x, position_ids, kind) if kind in self.by_layer_type else None for kind in layer_types}
