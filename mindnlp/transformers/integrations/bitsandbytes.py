# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""bitsandbytes' quantized linear layers, in its on-disk format, on core.nn.QuantizedLinear's CPU kernels.

A checkpoint that HF transformers saved with `BitsAndBytesConfig` (the `*-bnb-4bit` repos on
the Hub) holds, per quantized layer:

- 4-bit: `weight`, uint8 (out * in / 2, 1), the weight flattened row-major and cut into blocks
  of `blocksize` (64) values, two 4-bit codes a byte (the first in the high nibble);
  `weight.absmax`, each block's largest magnitude (float32, or with double quantization its
  8-bit code beside `weight.nested_absmax`, `weight.nested_quant_map` and the `nested_offset`
  added back); `weight.quant_map`, the 16-entry NF4/FP4 table; and
  `weight.quant_state.bitsandbytes__<nf4|fp4>`, JSON bytes with the shape, dtype and blocksize.
- 8-bit: `weight`, int8 (out, in); `SCB`, each row's largest magnitude; `weight_format` (0, rows).

Linear4bit and Linear8bitLt read and write exactly those keys (their state_dict is
bitsandbytes'), so such checkpoints load here and what mindnlp saves loads in HF. In memory the
codes are regrouped for the kernels: a row's codes in groups of gcd(in_features, blocksize),
each with the float32 absmax of the block that holds it (a block may span two rows).
"""
import json
import math

import numpy as np

from ... import core
from ...core import nn
from ...core.nn.functional import quantized as Q
from ...core.nn.functional.quantized import _inverse, _nearest_code, _pack_nibbles

__all__ = ["Linear4bit", "Linear8bitLt"]

_F32 = np.float32
# bitsandbytes' int8 dequantization multiplies by this float (1/127)
_INV_127 = _F32(7.874015718698502e-3)
_NESTED_BLOCKSIZE = 256


def _unpack_groups(packed, group_size):
    """(out, in/2) bytes in the kernels' layout -> (out, in) codes 0..15."""
    n = packed.shape[0]
    grouped = packed.reshape(n, -1, group_size // 2)
    return np.concatenate([grouped & 15, grouped >> 4], axis=2).reshape(n, -1)


def _pack_groups(codes, group_size):
    n = codes.shape[0]
    return _pack_nibbles(codes.reshape(n, -1, group_size)).reshape(n, -1)


def _to_bytes(array):
    """A weight tensor's bytes as uint8 (bnb_4bit_quant_storage may store them as another dtype)."""
    array = np.ascontiguousarray(array)
    return array.reshape(-1).view(np.uint8)


class Linear4bit(nn.QuantizedLinear):
    """bitsandbytes' 4-bit linear layer (NF4 or FP4 codes, one absmax per block of 64 weights,
    optionally double-quantized), computed in float32 by the 4-bit codebook kernels."""

    def __init__(self, in_features, out_features, bias=True, quant_type="fp4", compress_statistics=False,
                 blocksize=64, device=None, weight_dtype="float32", quant_storage=None):
        group_size = math.gcd(in_features, blocksize)
        if group_size % 2:
            raise ValueError(f"4-bit layers need an even in_features to pack two codes a byte, got {in_features}")
        super().__init__(in_features, out_features, bias, bits=4, group_size=group_size, device=device,
                         scheme=quant_type)
        self.blocksize, self.compress_statistics = blocksize, compress_statistics
        self.weight_dtype = weight_dtype  # the float dtype bitsandbytes records for dequantizing
        # the dtype whose elements hold the packed bytes on disk (bnb_4bit_quant_storage)
        self.quant_storage = quant_storage or core.uint8
        blocks = -(-in_features * out_features // blocksize)
        nested = -(-blocks // _NESTED_BLOCKSIZE)
        zeros = dict(device=device)
        # double quantization: each block's absmax less their mean, in 8-bit blocks of 256
        self.register_buffer("absmax_codes", core.zeros(blocks, dtype=core.uint8, **zeros)
                             if compress_statistics else None)
        self.register_buffer("nested_absmax", core.zeros(nested, **zeros) if compress_statistics else None)
        self.register_buffer("nested_quant_map", core.tensor(Q.dynamic_code(), **zeros)
                             if compress_statistics else None)
        self.register_buffer("nested_offset", core.zeros((), **zeros) if compress_statistics else None)

    @classmethod
    def from_float(cls, weight, bias=None, quant_type="fp4", compress_statistics=False, blocksize=64,
                   quant_storage=None):
        layer = cls(weight.shape[1], weight.shape[0], bias is not None, quant_type, compress_statistics, blocksize,
                    device=weight.device, weight_dtype=weight.dtype.name, quant_storage=quant_storage)
        layer.requantize_(weight)
        if bias is not None:
            layer.bias = nn.Parameter(bias.detach().float().clone(), requires_grad=bias.requires_grad)
        return layer

    def requantize_(self, weight):
        """Quantize a float weight (out, in) as bitsandbytes' quantize_4bit does: the weight
        flattened into blocks of `blocksize`, each scaled by its largest magnitude to the
        nearest code of the table (and those maxima double-quantized when asked)."""
        w = weight.detach().float().numpy().reshape(-1)
        count = -(-w.size // self.blocksize)
        padded = np.zeros(count * self.blocksize, _F32)
        padded[:w.size] = w
        blocks = padded.reshape(count, self.blocksize)
        absmax = np.abs(blocks).max(axis=1).astype(_F32)
        codes = _nearest_code(np, blocks * _inverse(np, absmax[:, None]), Q.CODEBOOKS[self.scheme])
        self._set_codes(codes.reshape(-1)[:w.size])
        if self.compress_statistics:
            self._nest(absmax)
        self._set_scales(absmax)
        return self

    def _set_codes(self, codes):
        codes = codes.reshape(self.out_features, self.in_features).astype(np.uint8)
        self.weight = core.tensor(_pack_groups(codes, self.group_size), device=self.weight.device)

    def _nest(self, absmax):
        """Double quantization: the blocks' absmax less their mean, in 8-bit blocks of 256."""
        offset = _F32(absmax.mean(dtype=np.float64))
        self.absmax_codes, self.nested_absmax = Q.quantize_blockwise(core.tensor(absmax - offset),
                                                                     self.nested_quant_map, _NESTED_BLOCKSIZE)
        self.nested_offset = core.tensor(offset)

    def _set_scales(self, absmax):
        """Give each group the absmax of its block (decoded from the nested codes when
        double-quantized, which is what bitsandbytes computes with)."""
        if self.compress_statistics:
            absmax = Q.dequantize_blockwise(self.absmax_codes, self.nested_absmax, self.nested_quant_map,
                                            _NESTED_BLOCKSIZE).numpy() + self.nested_offset.numpy()
        starts = np.arange(0, self.out_features * self.in_features, self.group_size)
        scales = absmax.astype(_F32)[starts // self.blocksize].reshape(self.out_features, -1)
        self.weight_scale = core.tensor(scales, device=self.weight.device)

    def _block_absmax(self):
        """Each block's absmax, read back from the groups' scales."""
        starts = np.arange(0, -(-self.out_features * self.in_features // self.blocksize)) * self.blocksize
        return self.weight_scale.numpy().reshape(-1)[starts // self.group_size]

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        codes = _unpack_groups(self.weight.numpy(), self.group_size).reshape(-1)
        if codes.size % 2:
            codes = np.append(codes, np.uint8(0))
        state = {"quant_type": self.scheme, "blocksize": self.blocksize, "dtype": self.weight_dtype,
                 "shape": [self.out_features, self.in_features]}
        packed = ((codes[0::2] << 4) | codes[1::2]).view(self.quant_storage.np_dtype)
        tensors = {"weight": core.tensor(packed[:, None])}
        if self.compress_statistics:
            tensors.update({"weight.absmax": self.absmax_codes, "weight.nested_absmax": self.nested_absmax,
                            "weight.nested_quant_map": self.nested_quant_map})
            state.update(nested_blocksize=_NESTED_BLOCKSIZE, nested_dtype="float32",
                         nested_offset=float(self.nested_offset))
        else:
            tensors["weight.absmax"] = core.tensor(self._block_absmax())
        tensors["weight.quant_map"] = core.tensor(Q.CODEBOOKS[self.scheme])
        tensors[f"weight.quant_state.bitsandbytes__{self.scheme}"] = core.tensor(
            np.frombuffer(json.dumps(state).encode(), np.uint8).copy())
        if self.bias is not None:
            tensors["bias"] = self.bias if keep_vars else self.bias.detach()
        destination.update({prefix + key: value for key, value in tensors.items()})

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        state_key = prefix + f"weight.quant_state.bitsandbytes__{self.scheme}"
        needed = [prefix + "weight", prefix + "weight.absmax", state_key]
        if self.compress_statistics:
            needed += [prefix + "weight.nested_absmax", prefix + "weight.nested_quant_map"]
        if self.bias is not None:
            needed.append(prefix + "bias")
        absent = [key for key in needed if key not in state_dict]
        if absent:
            missing_keys.extend(absent)
            return
        state = json.loads(bytes(_to_bytes(state_dict[state_key].numpy())).decode("utf-8"))
        expected = {"shape": [self.out_features, self.in_features], "blocksize": self.blocksize,
                    "quant_type": self.scheme}
        found = {key: state.get(key) for key in expected}
        if found != expected or (("nested_offset" in state) != self.compress_statistics):
            error_msgs.append(f"{prefix}weight holds bitsandbytes' {found} (double quantization "
                              f"{'nested_offset' in state}), the model's layer expects {expected} (double "
                              f"quantization {self.compress_statistics})")
            return
        self.weight_dtype = state.get("dtype", self.weight_dtype)
        packed = _to_bytes(state_dict[prefix + "weight"].numpy())
        codes = np.empty(packed.size * 2, np.uint8)
        codes[0::2], codes[1::2] = packed >> 4, packed & 15
        self._set_codes(codes[:self.out_features * self.in_features])
        absmax = state_dict[prefix + "weight.absmax"].detach()
        if self.compress_statistics:
            self.absmax_codes = absmax.clone()
            self.nested_absmax = state_dict[prefix + "weight.nested_absmax"].detach().float().clone()
            self.nested_quant_map = state_dict[prefix + "weight.nested_quant_map"].detach().float().clone()
            self.nested_offset = core.tensor(_F32(state["nested_offset"]))
        self._set_scales(absmax.float().numpy())
        if self.bias is not None:
            with core.no_grad():
                self.bias.copy_(state_dict[prefix + "bias"])

    def extra_repr(self):
        return super().extra_repr() + (", compress_statistics=True" if self.compress_statistics else "")


class Linear8bitLt(nn.QuantizedLinear):
    """bitsandbytes' 8-bit linear layer (LLM.int8's weight: int8 rows scaled by each row's
    absmax, `SCB`). Activations stay float32: the int8 matrix product with its fp16 outlier
    columns (llm_int8_threshold) is not reproduced; the weight and its rounding are."""

    def __init__(self, in_features, out_features, bias=True, device=None):
        super().__init__(in_features, out_features, bias, bits=8, device=device)
        self.register_buffer("SCB", core.zeros(out_features, device=device))

    @classmethod
    def from_float(cls, weight, bias=None):
        layer = cls(weight.shape[1], weight.shape[0], bias is not None, device=weight.device)
        layer.requantize_(weight)
        if bias is not None:
            layer.bias = nn.Parameter(bias.detach().float().clone(), requires_grad=bias.requires_grad)
        return layer

    def requantize_(self, weight):
        """bitsandbytes' Int8Params quantization: the weight rounded to float16 first, then
        round(w * 127 / absmax) per row (int8_vectorwise_quant)."""
        w = weight.detach().float().numpy().astype(np.float16).astype(_F32)
        absmax = np.abs(w).max(axis=1).astype(_F32)
        # torch evaluates 127.0 / absmax as reciprocal(absmax) * 127: two roundings, kept here
        ratio = np.where(absmax > 0, (_F32(1.0) / np.where(absmax > 0, absmax, 1)) * _F32(127.0), 0).astype(_F32)
        self._set(np.rint(w * ratio[:, None]).astype(np.int8), absmax)
        return self

    def _set(self, q, absmax):
        self.weight = core.tensor(np.ascontiguousarray(q), device=self.weight.device)
        self.SCB = core.tensor(absmax, device=self.weight.device)
        self.weight_scale = core.tensor((absmax * _INV_127)[:, None], device=self.weight.device)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"] = self.weight
        if self.bias is not None:
            destination[prefix + "bias"] = self.bias if keep_vars else self.bias.detach()
        destination[prefix + "SCB"] = self.SCB
        destination[prefix + "weight_format"] = core.tensor(0, dtype=core.uint8)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        needed = [prefix + "weight", prefix + "SCB"] + ([prefix + "bias"] if self.bias is not None else [])
        absent = [key for key in needed if key not in state_dict]
        if absent:
            missing_keys.extend(absent)
            return
        weight = state_dict[prefix + "weight"]
        if tuple(weight.shape) != (self.out_features, self.in_features) or weight.dtype != core.int8:
            error_msgs.append(f"{prefix}weight: expected int8 {(self.out_features, self.in_features)}, got "
                              f"{weight.dtype} {tuple(weight.shape)}")
            return
        layout = state_dict.get(prefix + "weight_format")
        if layout is not None and int(layout) != 0:
            error_msgs.append(f"{prefix}weight_format {int(layout)}: only bitsandbytes' row layout (0) is read")
            return
        self._set(weight.numpy(), state_dict[prefix + "SCB"].float().numpy())
        if self.bias is not None:
            with core.no_grad():
                self.bias.copy_(state_dict[prefix + "bias"])
