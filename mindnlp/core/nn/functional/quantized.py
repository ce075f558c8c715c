# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Weight-only quantization: 8- or 4-bit weights with float32 scales, float32 activations.

The formats are cpu_jit_quant's; each holds a weight (out_features, in_features) in groups
of `group_size` inputs (int8 may use one group per row), one float32 scale per group, and
reads its integers one of four ways (`scheme`):

- "symmetric": w = scale * q, q int8 in -127..127, or int4 in -8..7 (llama.cpp's Q4_0 rule).
- "affine": w = scale * q + offset, q unsigned (0..15 for int4), one float32 offset per
  group: optimum-quanto's qint4 (scale = (max - min) / 15, offset = min, q = round((w - min)
  / scale)), which spends all sixteen levels on the group's range where the symmetric rule
  wastes half of them on the side of zero the group barely reaches; GGUF's Q4_1/Q4_K/Q5_K.
- "nf4" / "fp4": w = scale * CODEBOOKS[scheme][q] with scale the group's largest magnitude
  (bitsandbytes' 4-bit types: 16 values in [-1, 1], blocks of 64).

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

__all__ = ["CODEBOOKS", "SCHEMES", "dequantize_blockwise", "dequantize_weight", "dynamic_code", "quantize_blockwise",
           "quantize_weight", "quantized_linear"]

_F32 = np.float32
# bitsandbytes' 4-bit codebooks, as its get_4bit_type writes them (bitsandbytes/functional.py;
# also bitsandbytes/backends/utils.py's _NF4_QUANT_TABLE / _FP4_QUANT_TABLE). NF4: the quantiles
# of a standard normal with an exact zero, scaled to [-1, 1] (QLoRA, arXiv:2305.14314; the test
# recomputes them with scipy as bitsandbytes' create_normal_map does). FP4: the values of a float
# with a sign, 2 exponent and 1 mantissa bits, divided by the largest (12).
CODEBOOKS = {
    "nf4": np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
                     -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
                     0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                     0.7229568362236023, 1.0], _F32),
    # code 8 is the sign bit with a zero magnitude: bitsandbytes writes it +0.0 (its saved quant_map too)
    "fp4": np.array([0.0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0, 0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0],
                    _F32) / _F32(12.0),
}
SCHEMES = ("symmetric", "affine") + tuple(CODEBOOKS)


def _groups(in_features, bits, group_size, scheme="symmetric"):
    if bits not in (8, 4):
        raise ValueError(f"weights are quantized to 8 or 4 bits, not {bits}")
    if scheme not in SCHEMES:
        raise ValueError(f"unknown quantization scheme {scheme!r}; known: {list(SCHEMES)}")
    if scheme in CODEBOOKS and bits != 4:
        raise ValueError(f"{scheme} is a 4-bit codebook, not {bits}-bit")
    if group_size is None:
        if bits == 4:
            raise ValueError("int4 weights need a group_size (an even divisor of in_features, e.g. 32 to 128)")
        return 1
    if group_size <= 0 or in_features % group_size or (bits == 4 and group_size % 2):
        raise ValueError(f"group_size {group_size} must be a positive{' even' if bits == 4 else ''} divisor of "
                         f"in_features ({in_features})")
    return in_features // group_size


def _inverse(xp, scales):
    return xp.where(scales != 0, 1 / xp.where(scales != 0, scales, 1), 0).astype(_F32)


def _levels(xp, blocks, scales):
    """blocks / scale per group (0 where the scale is 0), divided as optimum-quanto divides:
    weights read from a GGUF file lie on a grid, so many fall exactly half-way between two
    levels, where multiplying by the reciprocal instead rounds some of them the other way."""
    nonzero = (scales != 0)[:, :, None]
    return xp.where(nonzero, blocks / xp.where(nonzero, scales[:, :, None], 1), 0)


def _nearest_code(xp, values, codebook):
    """The index of the codebook entry nearest to each value (ties to the lower entry)."""
    order = np.argsort(codebook, kind="stable")
    ascending = codebook[order]
    midpoints = xp.asarray((ascending[1:] + ascending[:-1]) / 2)
    return xp.asarray(order.astype(np.uint8))[xp.searchsorted(midpoints, values)]


def _pack_nibbles(levels):
    """(n, groups, size) values 0..15 -> bytes: low nibble first half of a group, high the second."""
    half = levels.shape[2] // 2
    return levels[:, :, :half] | (levels[:, :, half:] << 4)


def quantize_weight(weight, bits, group_size=None, scheme="symmetric"):
    """(q, scales, offsets) of a float weight (out_features, in_features) in one of SCHEMES;
    offsets is None except for "affine".

    symmetric int8: scale = max|w| / 127, q = round(w / scale). symmetric int4 (Q4_0's rule):
    the value of largest magnitude maps to -8, scale = that value / -8, and q + 8 is stored as
    a nibble, so all sixteen levels are used. affine: scale = (max - min) / (2^bits - 1),
    offset = min, q = round((w - min) / scale). nf4/fp4: scale = max|w| and q the nearest
    codebook entry to w / scale. A constant group gets scale 0 (affine: its value as offset).
    """
    w = weight.detach().float()._data if isinstance(weight, Tensor) else np.asarray(weight, _F32)
    if w.ndim != 2:
        raise ValueError(f"expected a 2-D weight (out_features, in_features), got shape {tuple(w.shape)}")
    xp = xp_of(weight) if isinstance(weight, Tensor) else np
    # Row-major whatever the source (GPT-2's Conv1D weight arrives transposed): elementwise ops
    # keep their input's layout, and the kernels stream each output row's bytes contiguously.
    w = xp.ascontiguousarray(w)
    n, k = w.shape
    groups = _groups(k, bits, group_size, scheme)
    blocks = w.reshape(n, groups, k // groups)
    offsets = None
    if scheme == "affine":
        low, high = blocks.min(axis=2), blocks.max(axis=2)
        scales = ((high - low) / _F32(2 ** bits - 1)).astype(_F32)
        offsets = low.astype(_F32)
        levels = xp.clip(xp.rint(_levels(xp, blocks - offsets[:, :, None], scales)), 0, 2 ** bits - 1)
        q = levels.astype(np.uint8).reshape(n, k) if bits == 8 else _pack_nibbles(levels.astype(np.uint8))
    elif scheme in CODEBOOKS:
        scales = xp.abs(blocks).max(axis=2).astype(_F32)
        codes = _nearest_code(xp, blocks * _inverse(xp, scales)[:, :, None], CODEBOOKS[scheme])
        q = _pack_nibbles(codes)
    elif bits == 8:
        scales = (xp.abs(blocks).max(axis=2) / _F32(127.0)).astype(_F32)
        q = xp.clip(xp.rint(_levels(xp, blocks, scales)), -127, 127).astype(np.int8).reshape(n, k)
    else:
        top = xp.take_along_axis(blocks, xp.abs(blocks).argmax(axis=2)[:, :, None], axis=2)[:, :, 0]
        scales = (top / _F32(-8.0)).astype(_F32)
        levels = xp.clip(xp.rint(blocks * _inverse(xp, scales)[:, :, None]) + 8, 0, 15).astype(np.uint8)
        q = _pack_nibbles(levels)
    q = q.reshape(n, -1)
    return _wrap(q), _wrap(scales.astype(_F32)), None if offsets is None else _wrap(offsets)


def dynamic_code():
    """bitsandbytes' signed 8-bit dynamic map (create_dynamic_map): 256 sorted values in
    [-1, 1], for each exponent 10^-6 .. 10^0 the midpoints of an evenly split [0.1, 1] (2^i of
    them for the i-th), both signs, and 0 and 1. Computed in float64 and rounded once; torch's
    float32 linspace leaves some of bitsandbytes' own entries one unit in the last place off,
    and a checkpoint carries its map (nested_quant_map), which loading keeps."""
    values = [0.0, 1.0]
    for i in range(7):
        bounds = np.linspace(0.1, 1.0, 2 ** i + 1)
        means = (bounds[:-1] + bounds[1:]) / 2 * 10.0 ** (i - 6)
        values += list(means) + list(-means)
    return np.sort(np.array(values, _F32))


def quantize_blockwise(values, code, block_size=256):
    """(codes uint8, absmax float32 per block) of a float32 tensor, as bitsandbytes' CPU
    quantize_blockwise computes them: each value divided by its block's largest magnitude,
    then the index of the nearest entry of the sorted 256-entry `code` (its first entry taken
    as -1; on a tie, the lower one)."""
    xp = xp_of(values)
    flat = values._data.astype(_F32).reshape(-1)
    count = -(-flat.size // block_size)
    padded = xp.zeros(count * block_size, _F32)
    padded[:flat.size] = flat
    absmax = xp.abs(padded.reshape(count, block_size)).max(axis=1)
    divisor = xp.where(absmax > 0, absmax, _F32(1))[:, None]
    normed = (padded.reshape(count, block_size) / divisor).reshape(-1)[:flat.size]
    code = xp.array(code._data if isinstance(code, Tensor) else code, dtype=_F32)
    code[0] = -1.0
    left = xp.clip(xp.searchsorted(code, normed, side="right") - 1, 0, code.size - 2)
    right_is_nearer = xp.abs(normed - code[left + 1]) < xp.abs(normed - code[left])
    codes = (left + right_is_nearer).astype(np.uint8)
    return _wrap(codes.reshape(values.shape)), _wrap(absmax.astype(_F32))


def dequantize_blockwise(codes, absmax, code, block_size=256):
    """The float32 values (codes' shape) that blockwise `codes` with `absmax` per block stand for."""
    xp = xp_of(codes)
    flat = codes._data.reshape(-1)
    blocks = xp.arange(flat.size) // block_size
    values = xp.asarray(code._data if isinstance(code, Tensor) else code, dtype=_F32)[flat] * absmax._data[blocks]
    return _wrap(values.astype(_F32).reshape(codes.shape))


def _dequantize_arrays(xp, q, scales, bits, offsets=None, codebook=None):
    n, groups = scales.shape
    scales = scales.astype(_F32)
    if bits == 8:
        blocks = q.reshape(n, groups, -1).astype(_F32)
    else:
        packed = q.reshape(n, groups, -1)
        nibbles = xp.concatenate([packed & 15, packed >> 4], axis=2)
        if codebook is not None:
            blocks = xp.asarray(CODEBOOKS[codebook])[nibbles]
        else:
            blocks = nibbles.astype(_F32) - _F32(0.0 if offsets is not None else 8.0)
    blocks = blocks * scales[:, :, None]
    if offsets is not None:
        blocks += offsets.astype(_F32)[:, :, None]
    return blocks.reshape(n, -1)


def dequantize_weight(q, scales, bits, offsets=None, codebook=None):
    """The float32 weight (out_features, in_features) that (q, scales[, offsets]) stand for;
    `codebook` names the 4-bit codebook ("nf4", "fp4") of a codebook format."""
    return _wrap(_dequantize_arrays(xp_of(q), q._data, scales._data, bits, None if offsets is None else offsets._data,
                                    codebook))


def quantized_product(rows, q, scales, bits, bias, offsets, codebook):
    """rows (m, K) @ w.T (+ bias) on arrays, w the weight (q, scales[, offsets]) of `bits`
    (`codebook` its name or None): the backend's compiled product where it has one, else the
    dequantized weight multiplied."""
    kernel = backend_for_array(rows).fused("quantized_matmul", rows, work=rows.size * scales.shape[0])
    out = None if kernel is None else kernel(rows, q, scales.astype(_F32, copy=False), bits, bias, offsets,
                                             None if codebook is None else CODEBOOKS[codebook])
    if out is None:
        xp = backend_for_array(rows).xp
        out = xp.matmul(rows, _dequantize_arrays(xp, q, scales, bits, offsets, codebook).astype(rows.dtype, copy=False).T)
        if bias is not None:
            out += bias
    return out


class _QuantizedLinear(Function):
    @staticmethod
    def forward(ctx, x, q, scales, bias, bits, offsets, codebook):
        ctx.save_for_backward(q, scales, offsets)
        ctx.bits, ctx.codebook = bits, codebook
        rows = x._data.reshape(-1, x.shape[-1])
        out = quantized_product(rows, q._data, scales._data, bits, None if bias is None else bias._data,
                                None if offsets is None else offsets._data, codebook)
        return out.reshape(tuple(x.shape[:-1]) + (scales.shape[0],))

    @staticmethod
    def backward(ctx, grad):
        q, scales, offsets = ctx.saved_tensors
        n = scales.shape[0]
        grad2d = grad.reshape(-1, n)
        gx = None
        if ctx.needs_input_grad[0]:
            weight = dequantize_weight(q, scales, ctx.bits, offsets, ctx.codebook).to(grad.dtype)
            gx = ops.matmul(grad2d, weight).reshape(tuple(grad.shape[:-1]) + (weight.shape[1],))
        gb = ops.sum(grad2d, dim=0) if ctx.needs_input_grad[3] else None
        return gx, None, None, gb, None, None, None


def quantized_linear(input, q, scales, bits, bias=None, offsets=None, codebook=None):
    """y = x w^T + b for the weight (q, scales[, offsets]) quantized to `bits` (8 or 4);
    `offsets` for an affine format, `codebook` ("nf4", "fp4") for a codebook one.

    float32 inputs use the backend's compiled product; float16/bfloat16 ones are computed in
    float32 and returned in their own dtype (as bitsandbytes' and quanto's layers return
    them), float64 ones by the reference (gradient checks)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"quantized_linear needs a floating-point input, got {input.dtype}")
    if codebook is not None and codebook not in CODEBOOKS:
        raise ValueError(f"unknown 4-bit codebook {codebook!r}; known: {sorted(CODEBOOKS)}")
    in_features = q.shape[1] * (2 if bits == 4 else 1)
    if input.ndim == 0 or input.shape[-1] != in_features:
        raise RuntimeError(f"quantized_linear: input's last dim {input.shape[-1] if input.ndim else None} does not "
                           f"match the weight's in_features {in_features}")
    if input.dtype.itemsize < 4:  # float16/bfloat16 are storage dtypes on CPU
        dtype = input.dtype
        return _QuantizedLinear.apply(input.float(), q, scales, bias, bits, offsets, codebook).to(dtype)
    return _QuantizedLinear.apply(input, q, scales, bias, bits, offsets, codebook)
