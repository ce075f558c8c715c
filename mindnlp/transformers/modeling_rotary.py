"""Rotary position embeddings applied to queries and keys, as one autograd node per tensor.

x·cos + rotate_half(x)·sin spelled with core ops costs seven dispatched ops per tensor and
layer; at decode time, where each op touches a few kilobytes, that dispatch dominates. The
fused node computes the same expression on the arrays and writes its backward with core
ops (so higher-order gradients still work). `RotaryEmbedding` computes those cos/sin once per
forward call for every layer of a decoder.
"""
from .. import core
from ..core import nn
from ..core.autograd.function import Function
from ..core.ops._helpers import fused_kernel, xp_of
from .modeling_rope_utils import rope_init


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
        xa = x._data
        half = xa.shape[-1] // 2
        rotated = xp.concatenate((-xa[..., half:], xa[..., :half]), axis=-1)
        out = xa * xp.expand_dims(cos._data, head_dim)
        out += rotated * xp.expand_dims(sin._data, head_dim)
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


def apply_rotary(x, cos, sin, unsqueeze_dim=1):
    """x·cos + rotate_half(x)·sin, where cos/sin (of x's dtype) lack x's head axis `unsqueeze_dim`."""
    if cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise TypeError(f"rotary cos/sin ({cos.dtype}, {sin.dtype}) must have the dtype of x ({x.dtype})")
    return _Rotary.apply(x, cos, sin, unsqueeze_dim)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Rotate query and key by their positions' angles; cos/sin gain a head axis at `unsqueeze_dim`."""
    return apply_rotary(q, cos, sin, unsqueeze_dim), apply_rotary(k, cos, sin, unsqueeze_dim)


class RotaryEmbedding(nn.Module):
    """cos/sin of position · inv_freq for the positions of a forward call, for every rope type of
    `modeling_rope_utils` (default, linear, dynamic, yarn, longrope, llama3).

    `inv_freq` is a non-persistent buffer (checkpoints do not store it). As HF's
    `dynamic_rope_update` does, with "dynamic" RoPE the frequencies are recomputed when a
    position beyond every one seen so far arrives (and reset once sequences are short again),
    and with "longrope" they switch to the long factors while a position lies past the
    pretraining length.
    """

    def __init__(self, config, device=None):
        super().__init__()
        self.config = config
        self.rope_type = config.rope_parameters["rope_type"]
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        inv_freq, self.attention_scaling = rope_init(config)
        self.register_buffer("inv_freq", core.tensor(inv_freq, device=device), persistent=False)
        self.register_buffer("original_inv_freq", core.tensor(inv_freq, device=device), persistent=False)

    def _update_dynamic_frequencies(self, position_ids):
        seq_len = int(position_ids.max()) + 1
        if seq_len > self.max_seq_len_cached:
            inv_freq, self.attention_scaling = rope_init(self.config, seq_len=seq_len)
            self.inv_freq = core.tensor(inv_freq, device=self.inv_freq.device)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len < self.max_seq_len_cached:
            self.inv_freq = self.original_inv_freq
            self.max_seq_len_cached = self.original_max_seq_len

    def _update_longrope_frequencies(self, position_ids):
        original = self.config.rope_parameters["original_max_position_embeddings"]
        if int(position_ids.max()) + 1 <= original:
            self.inv_freq = self.original_inv_freq
            return
        long_inv_freq = getattr(self, "_long_inv_freq", None)  # computed on the first long input
        if long_inv_freq is None:
            inv_freq, _ = rope_init(self.config, seq_len=original + 1)
            long_inv_freq = self._long_inv_freq = core.tensor(inv_freq, device=self.inv_freq.device)
        self.inv_freq = long_inv_freq

    def forward(self, x, position_ids):
        """(cos, sin), each (batch, seq, head_dim) in x's dtype."""
        if "dynamic" in self.rope_type:
            self._update_dynamic_frequencies(position_ids)
        elif self.rope_type == "longrope":
            self._update_longrope_frequencies(position_ids)
        with core.no_grad():
            freqs = position_ids[..., None].float() * self.inv_freq.float()
            emb = core.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            if self.attention_scaling != 1.0:
                cos, sin = cos * self.attention_scaling, sin * self.attention_scaling
        return cos.to(x.dtype), sin.to(x.dtype)
