# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Weight-only quantization of a model's linear layers (what HF's quanto and bitsandbytes
quantizers do at load time), onto core.nn.QuantizedLinear.

nn.Linear layers, and GPT-2's Conv1D (as bitsandbytes does; its weight is transposed into
Linear's layout), become QuantizedLinear unless a skip pattern matches their name. The
default skips are HF's: the output embeddings (lm_head), tied weights and the module of
the model's last parameter, which carry the logits' precision.
"""
import re

from ... import core
from ...core import nn
from ..pytorch_utils import Conv1D
from .bitsandbytes import Linear4bit, Linear8bitLt

__all__ = ["get_keys_to_not_convert", "replace_with_quantized_linear", "should_convert_module"]


def get_keys_to_not_convert(model):
    """HF's default skips: tied weights' modules, the last parameter's module and the output embeddings."""
    tied = getattr(model, "all_tied_weights_keys", None) or {}
    keys = set(tied) | set(tied.values())
    names = [name for name, _ in model.named_parameters()]
    if names:
        keys.add(names[-1])
    output = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    keys |= {name for name, module in model.named_modules() if output is not None and module is output}
    return sorted({key.removesuffix(".weight") for key in keys})


def should_convert_module(full_name, patterns):
    """False when a pattern matches the module's name: as a prefix before a dot, as a regex
    matching its start, or as its ending (HF's rule)."""
    if patterns is None:
        return True
    return not any(re.match(f"{key}\\.", full_name) or re.match(key, full_name) or full_name.endswith(key)
                   for key in patterns)


def modules_to_not_convert(model, quantization_config):
    """The config's own skips, or HF's defaults when it names none."""
    skips = quantization_config.skip_modules
    return list(skips) if skips is not None else get_keys_to_not_convert(model)


def replace_with_quantized_linear(model, quantization_config, quantize=True, required=True):
    """Swap the model's linear layers for QuantizedLinear in place; returns the converted names.

    quantize=True quantizes the layers' float weights (loading a float checkpoint);
    quantize=False puts empty quantized layers of the right shapes in their place, for a
    checkpoint that already holds the quantized tensors. With `required`, a model left with
    no layer to convert is an error (not so for a GGUF model whose blocks are kept quantized).
    """
    skips = modules_to_not_convert(model, quantization_config)
    converted = []
    for name, module in list(model.named_modules()):
        if not isinstance(module, (nn.Linear, Conv1D)) or not should_convert_module(name, skips):
            continue
        weight = module.weight.t() if isinstance(module, Conv1D) else module.weight
        layer = _quantized_layer(quantization_config, weight, module.bias, quantize)
        if layer is None:
            continue  # no format fits the layer's width: it stays in float
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, child, layer)
        converted.append(name)
    if required and not converted:
        raise ValueError("quantization_config matched no linear layer of the model: nothing was quantized")
    return converted


def _quantized_layer(config, weight, bias, quantize):
    """The quantized layer standing for a float (out, in) weight: holding it quantized, or
    empty (quantize=False) for a checkpoint's quantized tensors to fill; None if none fits."""
    out_features, in_features = weight.shape
    if config.quant_method == "bitsandbytes":
        if config.load_in_8bit:
            return (Linear8bitLt.from_float(weight, bias) if quantize else
                    Linear8bitLt(in_features, out_features, bias is not None, device=weight.device))
        if in_features % 2:
            return None
        options = dict(quant_type=config.bnb_4bit_quant_type, compress_statistics=config.bnb_4bit_use_double_quant,
                       quant_storage=config.bnb_4bit_quant_storage)
        return (Linear4bit.from_float(weight, bias, **options) if quantize else
                Linear4bit(in_features, out_features, bias is not None, device=weight.device, **options))
    bits, scheme = config.weight_bits, config.scheme
    group_size = config.group_size_for(in_features)
    if bits == 4 and group_size is None:
        return None
    if quantize:
        return nn.QuantizedLinear.from_float(weight, bias, bits, group_size, scheme)
    return nn.QuantizedLinear(in_features, out_features, bias is not None, bits, group_size, device=weight.device,
                              scheme=scheme)


def mark_quantized(model, quantization_config):
    """Record the config on the model and its config.json (HF's attributes, which peft reads)."""
    model.config.quantization_config = quantization_config
    model.quantization_config = quantization_config
    model.is_quantized = True
    model.quantization_method = quantization_config.quant_method
    bits = quantization_config.weight_bits
    model.is_loaded_in_8bit = bits == 8
    model.is_loaded_in_4bit = bits == 4
    return model


def dequantize_model(model):
    """Swap every QuantizedLinear back for an nn.Linear holding its dequantized weight."""
    for name, module in list(model.named_modules()):
        if not isinstance(module, nn.QuantizedLinear):
            continue
        layer = nn.Linear(module.in_features, module.out_features, bias=module.bias is not None)
        with core.no_grad():
            layer.weight.copy_(module.dequantized_weight())
            if module.bias is not None:
                layer.bias.copy_(module.bias)
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, child, layer)
    for attribute in ("quantization_config", "is_quantized", "quantization_method", "is_loaded_in_8bit",
                      "is_loaded_in_4bit"):
        model.__dict__.pop(attribute, None)
    model.__dict__.pop("gguf_quantized_modules", None)
    for attribute in ("quantization_config", "gguf_kept_blocks"):
        model.config.__dict__.pop(attribute, None)
    return model
