# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Checkpoint I/O without torch: `save`/`load` in torch's formats, and safetensors.

- `load` reads `torch.save` files (zip layout and the legacy pre-1.6 layout) through a
  restricted unpickler that only builds tensors and plain data; `save` writes the zip layout,
  which `torch.load` reads. `load_torch_file` is the state-dict loader model code uses.
- `load_safetensors`/`safe_open` read safetensors memory-mapped; `save_safetensors` writes.
All writes to paths are atomic.
"""
from ._atomic import atomic_write, staged_folder, write_text_atomic
from ._safetensors import (SafetensorError, load_safetensors, load_safetensors_bytes, safe_open, safetensors_bytes,
                           safetensors_metadata, save_safetensors)
from ._torch_load import ZIP_MAGIC, load
from ._torch_save import save
from ._unpickler import UnpicklingError

__all__ = ["load", "save", "load_torch_file", "load_safetensors", "load_safetensors_bytes", "save_safetensors",
           "safetensors_bytes", "safe_open", "safetensors_metadata", "SafetensorError", "UnpicklingError",
           "atomic_write", "write_text_atomic", "staged_folder"]


def load_torch_file(path, map_location="cpu"):
    """The {name: Tensor} state dict of a `pytorch_model.bin`-style file, memory-mapped when it
    uses the zip layout (as HF transformers loads them) and read into memory when legacy."""
    with open(path, "rb") as file:
        is_zip = file.read(4) == ZIP_MAGIC
    state_dict = load(path, map_location=map_location, mmap=is_zip)
    if not isinstance(state_dict, dict):
        raise TypeError(f"{path} holds a {type(state_dict).__name__}, not a state dict")
    return state_dict
