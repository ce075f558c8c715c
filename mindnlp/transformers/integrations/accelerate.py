# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Module sizes, as accelerate's helpers compute them for device placement."""
from collections import defaultdict


def compute_module_sizes(model, hf_quantizer=None, buffers_only=False, only_modules=True):
    """Bytes held by each module (key "" is the whole model) and by each leaf module.

    Parameters and buffers both count (non-persistent buffers take memory too); tied weights
    count once. With only_modules=False the first mapping also holds each tensor's own size.
    """
    if hf_quantizer is not None:
        raise NotImplementedError("compute_module_sizes: mindnlp has no quantizers")
    tensors = list(model.named_buffers())
    if not buffers_only:
        tensors = list(model.named_parameters()) + tensors
    tied = getattr(model, "all_tied_weights_keys", {}) or {}
    all_sizes, leaf_sizes = defaultdict(int), defaultdict(int)
    for name, tensor in tensors:
        if name in tied:
            continue
        size = tensor.numel() * tensor.element_size()
        parts = name.split(".")
        for i in range(len(parts)):
            all_sizes[".".join(parts[:i])] += size
        if "." in name:
            leaf_sizes[name.rsplit(".", 1)[0]] += size
        if not only_modules:
            all_sizes[name] += size
    return all_sizes, leaf_sizes
