"""Weight-only quantization: int8 / int4 weights with float32 scales, float32 activations.

The formats are cpu_jit_quant's (int8: one scale per output row or per group of the row;
int4: two values a byte, in groups with one scale each, llama.cpp's Q4_0 layout).
`quantize_weight` makes them from a float weight, `dequantize_weight` is the reference
the compiled products are tested against, and `quantized_linear` is y = x w^T + b with
the backend's compiled product where it has one and the reference otherwise. Its gradient
flows to the input and the bias (QLoRA trains adapters on a frozen quantized base), never
to the integer weight.
"""
import numpy as np

from ... import ops
from ..._tensor import Tensor, _wrap
from ...autograd.function import Function
from ...backends import backend_for_array
from ...ops._helpers import xp_of

__all__ = ["dequantize_weight", "quantize_weight", "quantized_linear"]

_F32 = np.float32


def _groups(in_features, bits, group_size):
    if bits not in (8, 4):
        raise ValueError(f"weights are quantized to 8 or 4 bits, not {bits}")
    if group_size is None:
        if bits == 4:
            raise ValueError("int4 weights need a group_size (an even divisor of in_features, e.g. 32 to 128)")
        return 1
    if group_size <= 0 or in_features % group_size or (bits == 4 and group_size % 2):
        raise ValueError(f"group_size {group_size} must be a positive{' even' if bits == 4 else ''} divisor of "
                         f"in_features ({in_features})")
    return in_features // group_size


def quantize_weight(weight, bits, group_size=None):
    """(q, scales) of a float weight (out_features, in_features), symmetric per output row
    (int8 without group_size) or per group of `group_size` inputs.

    int8: scale = max|w| / 127 and q = round(w / scale). int4 (Q4_0's rule): the value of
    largest magnitude maps to -8, scale = that value / -8, and q + 8 is stored as a nibble,
    so all sixteen levels are used. An all-zero group gets scale 0.
    """
    w = weight.detach().float()._data if isinstance(weight, Tensor) else np.asarray(weight, _F32)
    if w.ndim != 2:
        raise ValueError(f"expected a 2-D weight (out_features, in_features), got shape {tuple(w.shape)}")
    xp = xp_of(weight) if isinstance(weight, Tensor) else np
    n, k = w.shape
    groups = _groups(k, bits, group_size)
    blocks = w.reshape(n, groups, k // groups)
    if bits == 8:
        scales = xp.abs(blocks).max(axis=2) / _F32(127.0)
        inverse = xp.where(scales > 0, 1 / xp.where(scales > 0, scales, 1), 0).astype(_F32)
        q = xp.clip(xp.rint(blocks * inverse[:, :, None]), -127, 127).astype(np.int8).reshape(n, k)
    else:
        top = xp.take_along_axis(blocks, xp.abs(blocks).argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
        scales = (top / _F32(-8.0)).astype(_F32)
        inverse = xp.where(scales != 0, 1 / xp.where(scales != 0, scales, 1), 0).astype(_F32)
        levels = xp.clip(xp.rint(blocks * inverse[:, :, None]) + 8, 0, 15).astype(np.uint8)
        half = levels.shape[2] // 2
        q = (levels[:, :, :half] | (levels[:, :, half:] << 4)).reshape(n, k // 2)
    return _wrap(q), _wrap(scales.astype(_F32))


def _dequantize_arrays(xp, q, scales, bits):
    n, groups = scales.shape
    scales = scales.astype(_F32)
    if bits == 8:
        blocks = q.reshape(n, groups, -1).astype(_F32)
    else:
        packed = q.reshape(n, groups, -1)
        blocks = xp.concatenate([packed & 15, packed >> 4], axis=2).astype(_F32) - _F32(8.0)
    return (blocks * scales[:, :, None]).reshape(n, -1)


def dequantize_weight(q, scales, bits):
    """The float32 weight (out_features, in_features) that (q, scales) stand for."""
    return _wrap(_dequantize_arrays(xp_of(q), q._data, scales._data, bits))


class _QuantizedLinear(Function):
    @staticmethod
    def forward(ctx, x, q, scales, bias, bits):
        ctx.save_for_backward(q, scales)
        ctx.bits = bits
        n = scales.shape[0]
        rows = x._data.reshape(-1, x.shape[-1])
        bias_data = None if bias is None else bias._data
        kernel = backend_for_array(rows).fused("quantized_matmul", rows, work=rows.size * n)
        out = None if kernel is None else kernel(rows, q._data, scales._data.astype(_F32, copy=False), bits,
                                                 bias_data)
        if out is None:
            xp = xp_of(x)
            out = xp.matmul(rows, _dequantize_arrays(xp, q._data, scales._data, bits).T)
            if bias_data is not None:
                out += bias_data
        return out.reshape(tuple(x.shape[:-1]) + (n,))

    @staticmethod
    def backward(ctx, grad):
        q, scales = ctx.saved_tensors
        n = scales.shape[0]
        grad2d = grad.reshape(-1, n)
        gx = None
        if ctx.needs_input_grad[0]:
            weight = dequantize_weight(q, scales, ctx.bits).to(grad.dtype)
            gx = ops.matmul(grad2d, weight).reshape(tuple(grad.shape[:-1]) + (weight.shape[1],))
        gb = ops.sum(grad2d, dim=0) if ctx.needs_input_grad[3] else None
        return gx, None, None, gb, None


def quantized_linear(input, q, scales, bits, bias=None):
    """y = x w^T + b for the weight (q, scales) quantized to `bits` (8 or 4).

    float32 inputs use the backend's compiled product; float16/bfloat16 ones are computed in
    float32 (and so returned), float64 ones by the reference (gradient checks)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"quantized_linear needs a floating-point input, got {input.dtype}")
    in_features = q.shape[1] * (2 if bits == 4 else 1)
    if input.ndim == 0 or input.shape[-1] != in_features:
        raise RuntimeError(f"quantized_linear: input's last dim {input.shape[-1] if input.ndim else None} does not "
                           f"match the weight's in_features {in_features}")
    if input.dtype.itemsize < 4:
        input = input.float()
    return _QuantizedLinear.apply(input, q, scales, bias, bits)
