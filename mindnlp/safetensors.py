# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`safetensors.torch` for mindnlp: the same functions, reading and writing mindnlp.core tensors.

Code written against safetensors changes only its import:
`from mindnlp.safetensors import load_file, save_file, safe_open`. Files are read memory-mapped
and written atomically by mindnlp.core.serialization (no framework, no Rust extension needed).
As in safetensors.torch, saving refuses tensors that share memory and non-contiguous tensors;
`save_model` drops the duplicate names of tied weights first.
"""
import os

from .core.serialization._safetensors import (SafetensorError, load_safetensors_bytes, remove_duplicate_names,
                                              safe_open, safetensors_bytes, save_safetensors)


def load_file(filename, device="cpu"):
    """{name: Tensor} of a safetensors file, on `device` (memory-mapped when cpu)."""
    with safe_open(filename, framework="pt", device=device) as file:
        return file.get_tensors()


def save_file(tensors, filename, metadata=None):
    """Write {name: Tensor} to `filename` in the safetensors format, replacing it atomically."""
    save_safetensors(tensors, filename, metadata=metadata, pack_noncontiguous=False)


def load(data):
    """{name: Tensor} from the bytes of a safetensors file; the tensors are on cpu."""
    return load_safetensors_bytes(data)


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding {name: Tensor}."""
    return safetensors_bytes(tensors, metadata=metadata, pack_noncontiguous=False)


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Save a module's state dict, keeping one name per group of tied tensors.

    Each dropped name is recorded in the metadata as `{dropped: kept}` (unless the caller's
    metadata already has that key), as safetensors.torch does.
    """
    state_dict = model.state_dict()
    for kept, dropped in remove_duplicate_names(state_dict).items():
        for name in dropped:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {name: tensor.contiguous() for name, tensor in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except ValueError as err:
        raise ValueError(f"{err} Or use save_model(..., force_contiguous=True), read the docs for potential "
                         "caveats.") from None


def load_model(model, filename, strict=True, device="cpu"):
    """Load a file written by `save_model` into `model`; returns (missing, unexpected) names.

    Names the file dropped because their tensor is tied to a kept one are neither missing
    nor unexpected.
    """
    state_dict = load_file(os.fspath(filename), device=device)
    to_removes = remove_duplicate_names(model.state_dict(), preferred_names=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    unexpected = list(unexpected)
    for dropped in to_removes.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


__all__ = ["SafetensorError", "load", "load_file", "load_model", "safe_open", "save", "save_file", "save_model"]
