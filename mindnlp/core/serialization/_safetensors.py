"""safetensors files, read memory-mapped and written atomically, without a framework.

Layout: an 8-byte little-endian header length N, N bytes of JSON (`{"__metadata__": {str: str},
name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}}`, space-padded), then
the tensors' bytes, offsets counted from the end of the header. The `safetensors` package's
numpy API cannot return bfloat16 and copies each tensor, so the header is parsed here and
each tensor is a NumPy view into one private (copy-on-write) mapping of the file: nothing is
read before it is used, and writes to a tensor never reach the file.
"""
import json
import mmap
import os
import struct

import numpy as np

from .. import _dtype
from .._device import device as core_device
from .._tensor import Tensor, _wrap
from ._atomic import atomic_write

_DTYPES = {
    "BOOL": _dtype.bool_,
    "U8": _dtype.uint8,
    "I8": _dtype.int8,
    "I16": _dtype.int16,
    "I32": _dtype.int32,
    "I64": _dtype.int64,
    "F16": _dtype.float16,
    "BF16": _dtype.bfloat16,
    "F32": _dtype.float32,
    "F64": _dtype.float64,
}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
_MAX_HEADER_BYTES = 100_000_000  # the limit the safetensors library enforces


def _parse_header(mapped, path):
    """(metadata, {name: (dtype, shape, begin, end)}, data start), validated as safetensors does."""
    if len(mapped) < 8:
        raise ValueError(f"{path} is not a safetensors file: it is shorter than its 8-byte header length")
    (header_length,) = struct.unpack("<Q", mapped[:8])
    if header_length > _MAX_HEADER_BYTES or 8 + header_length > len(mapped):
        raise ValueError(f"{path} is truncated or not a safetensors file: header length {header_length} does not fit "
                         f"in its {len(mapped)} bytes")
    try:
        header = json.loads(bytes(mapped[8:8 + header_length]))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: invalid safetensors header ({err})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: invalid safetensors header: not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise ValueError(f"{path}: safetensors metadata must map strings to strings")
    data_start = 8 + header_length
    buffer_length = len(mapped) - data_start
    entries = {}
    for name, info in header.items():
        try:
            dtype_name, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        except (TypeError, KeyError, ValueError):
            raise ValueError(f"{path}: invalid safetensors header entry for {name!r}: {info!r}") from None
        if dtype_name not in _DTYPES:
            raise TypeError(f"{path}: tensor {name!r} has dtype {dtype_name}, which mindnlp.core does not support")
        if not all(type(d) is int and d >= 0 for d in (*shape, begin, end)):
            raise ValueError(f"{path}: tensor {name!r} has an invalid shape {shape} or offsets {[begin, end]}")
        dtype = _DTYPES[dtype_name]
        if end - begin != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise ValueError(f"{path}: tensor {name!r} of shape {shape} and dtype {dtype_name} does not match its "
                             f"{end - begin} bytes")
        entries[name] = (dtype, tuple(shape), begin, end)
    # The tensors must tile the buffer exactly: no gaps, no overlaps, nothing missing at the end.
    position = 0
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda item: item[1][2:]):
        if begin != position:
            raise ValueError(f"{path}: tensor {name!r} starts at byte {begin}, expected {position}")
        position = end
    if position != buffer_length:
        raise ValueError(f"{path} is truncated or corrupt: its tensors need {position} bytes of data, "
                         f"the file holds {buffer_length}")
    return metadata, entries, data_start


class safe_open:
    """A safetensors file opened for reading, with the `safetensors.safe_open` interface.

    Use as a context manager: `keys()`, `metadata()`, `get_tensor(name)`. Tensors are views of
    a private memory mapping of the file and stay valid after the file is closed.
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        self._path = os.fspath(filename)
        self._device = core_device(device)
        with open(self._path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < 8:
                raise ValueError(f"{self._path} is not a safetensors file: it is shorter than its 8-byte header length")
            self._mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
        self._metadata, self._entries, self._data_start = _parse_header(self._mapped, self._path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        return list(self._entries)

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        if name not in self._entries:
            raise KeyError(f"tensor {name!r} is not in {self._path}")
        dtype, shape, begin, end = self._entries[name]
        if begin == end:
            array = np.empty(shape, dtype.np_dtype)
        else:
            count = (end - begin) // dtype.itemsize
            array = np.frombuffer(self._mapped, dtype.np_dtype, count, self._data_start + begin).reshape(shape)
        tensor = _wrap(array)
        return tensor if self._device.type == "cpu" else tensor.to(self._device)


def load_safetensors(path, device="cpu"):
    """All tensors of a safetensors file, memory-mapped: {name: Tensor} in file order."""
    with safe_open(path, device=device) as file:
        return {name: file.get_tensor(name) for name in file.keys()}


def safetensors_metadata(path):
    """The `__metadata__` dict of a safetensors file (None when it has none), reading only its header."""
    return safe_open(path).metadata()


def _shared_groups(tensors):
    """Names of tensors whose memory overlaps, grouped as the safetensors library does.

    Distinct allocations never overlap, so comparing [first byte, last byte] extents finds
    every pair of views of one buffer that could alias, without following `.base` chains.
    """
    extents = []
    for name, tensor in tensors.items():
        if tensor.numel() == 0:
            continue
        itemsize = tensor.element_size()
        start = tensor.data_ptr() + sum((n - 1) * s for n, s in zip(tensor.shape, tensor._data.strides) if s < 0)
        stop = tensor.data_ptr() + itemsize + sum((n - 1) * s for n, s in zip(tensor.shape, tensor._data.strides)
                                                  if s > 0)
        extents.append((str(tensor.device), start, stop, name))
    extents.sort()
    groups = []
    last_device, last_stop = None, None
    for device, start, stop, name in extents:
        if device == last_device and start < last_stop:
            groups[-1].append(name)
            last_stop = max(last_stop, stop)
        else:
            groups.append([name])
            last_device, last_stop = device, stop
    return [sorted(group) for group in groups if len(group) > 1]


def save_safetensors(tensors, path, metadata=None):
    """Write {name: Tensor} as a safetensors file, atomically.

    Like `safetensors.torch.save_file`, tensors that share memory (tied weights, views of one
    buffer) are refused with the groups named: the caller decides which name to keep, as HF
    transformers' `save_pretrained` does by dropping tied keys first. Non-contiguous tensors
    are written as contiguous copies. Tensors are laid out by decreasing element size, then
    name, so every tensor starts aligned to its element size.
    """
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, Tensor] but received {type(tensors).__name__}")
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"tensor names must be strings, got {name!r}")
        if not isinstance(tensor, Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected a Tensor but received {type(tensor).__name__}")
    if metadata is not None and not (isinstance(metadata, dict)
                                     and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise ValueError("safetensors metadata must be a dict mapping strings to strings")
    shared = _shared_groups(tensors)
    if shared:
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                           f"differences when loading them again: {shared}. Save one name per group (drop the tied "
                           "duplicates) or clone the tensors first.")
    order = sorted(tensors, key=lambda name: (-tensors[name].element_size(), name))
    header = {"__metadata__": metadata} if metadata else {}
    position = 0
    for name in order:
        tensor = tensors[name]
        nbytes = tensor.numel() * tensor.element_size()
        header[name] = {"dtype": _NAMES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [position, position + nbytes]}
        position += nbytes
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    with atomic_write(path) as file:
        file.write(struct.pack("<Q", len(encoded)))
        file.write(encoded)
        for name in order:
            array = np.ascontiguousarray(tensors[name]._host())
            file.write(memoryview(array.reshape(-1).view(np.uint8)))
