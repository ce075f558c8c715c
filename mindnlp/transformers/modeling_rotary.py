"""Rotary position embeddings applied to queries and keys, as one autograd node per tensor.

x·cos + rotate_half(x)·sin spelled with core ops costs seven dispatched ops per tensor and
layer; at decode time, where each op touches a few kilobytes, that dispatch dominates. The
fused node computes the same expression on the arrays and writes its backward with core
ops (so higher-order gradients still work).
"""
from .. import core
from ..core.autograd.function import Function
from ..core.ops._helpers import xp_of


def rotate_half(x):
    """(x1, x2) → (-x2, x1) over the two halves of the last dim."""
    half = x.shape[-1] // 2
    return core.cat((-x[..., half:], x[..., :half]), dim=-1)


def _rotate_half_transposed(y):
    """The transpose of rotate_half: (y1, y2) → (y2, -y1)."""
    half = y.shape[-1] // 2
    return core.cat((y[..., half:], -y[..., :half]), dim=-1)


class _Rotary(Function):
    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(x, cos, sin)
        xa = x._data
        half = xa.shape[-1] // 2
        rotated = xp_of(x).concatenate((-xa[..., half:], xa[..., :half]), axis=-1)
        out = xa * cos._data
        out += rotated * sin._data
        return out

    @staticmethod
    def backward(ctx, grad):
        x, cos, sin = ctx.saved_tensors
        grad_x = grad * cos + _rotate_half_transposed(grad * sin) if ctx.needs_input_grad[0] else None
        grad_cos = grad * x if ctx.needs_input_grad[1] else None
        grad_sin = grad * rotate_half(x) if ctx.needs_input_grad[2] else None
        return grad_x, grad_cos, grad_sin


def apply_rotary(x, cos, sin):
    """x·cos + rotate_half(x)·sin, with cos/sin broadcastable to x and of x's dtype."""
    if cos.dtype != x.dtype or sin.dtype != x.dtype:
        raise TypeError(f"rotary cos/sin ({cos.dtype}, {sin.dtype}) must have the dtype of x ({x.dtype})")
    return _Rotary.apply(x, cos, sin)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Rotate query and key by their positions' angles; cos/sin gain a head axis at `unsqueeze_dim`."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
