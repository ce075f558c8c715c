# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
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


class SafetensorError(Exception):
    """A safetensors file or buffer cannot serve the request (as `safetensors.SafetensorError`)."""


class _TensorBuffer:
    """The tensors of a parsed safetensors buffer, as NumPy views of it."""

    def __init__(self, buffer, source):
        self._buffer = buffer
        self._source = source
        self._metadata, self._entries, self._data_start = _parse_header(buffer, source)

    def _array(self, name):
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        dtype, shape, begin, end = self._entries[name]
        if begin == end:
            return np.empty(shape, dtype.np_dtype)
        count = (end - begin) // dtype.itemsize
        return np.frombuffer(self._buffer, dtype.np_dtype, count, self._data_start + begin).reshape(shape)

    def _names_by_offset(self):
        return sorted(self._entries, key=lambda name: self._entries[name][2:])


class safe_open(_TensorBuffer):
    """A safetensors file opened for reading, with the `safetensors.safe_open` interface.

    `keys()` (sorted), `offset_keys()` (in file order), `metadata()`, `get_tensor(name)`,
    `get_tensors()` and `get_slice(name)`. Tensors are views of a private memory mapping of
    the file and stay valid after the file is closed; the handle itself refuses further use
    once its `with` block has ended, as safetensors' does.
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "pytorch"):
            raise ValueError(f"framework {framework!r} is not supported: mindnlp reads safetensors into "
                             "mindnlp.core tensors (framework='pt')")
        path = os.fspath(filename)
        self._device = core_device(device)
        self._closed = False
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < 8:
                raise ValueError(f"{path} is not a safetensors file: it is shorter than its 8-byte header length")
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
        super().__init__(mapped, path)
        self._path = path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._closed = True
        return False

    def _check_open(self):
        if self._closed:
            raise SafetensorError("File is closed")

    def keys(self):
        self._check_open()
        return sorted(self._entries)

    def offset_keys(self):
        self._check_open()
        return self._names_by_offset()

    def metadata(self):
        self._check_open()
        return self._metadata

    def get_tensor(self, name):
        self._check_open()
        return self._place(_wrap(self._array(name)))

    def get_tensors(self):
        return {name: self.get_tensor(name) for name in self.keys()}

    def get_slice(self, name):
        self._check_open()
        return _Slice(self, name)

    def _place(self, tensor):
        return tensor if self._device.type == "cpu" else tensor.to(self._device)


class _Slice:
    """One tensor of an open file, read in part: `get_shape()`, `get_dtype()`, and indexing with
    integers, slices and Ellipsis, which copies only the selected elements out of the mapping."""

    def __init__(self, file, name):
        self._file = file
        self._name = name
        self._view = file._array(name)

    def get_shape(self):
        return list(self._view.shape)

    def get_dtype(self):
        return _NAMES[_dtype.from_numpy_dtype(self._view.dtype)]

    def __getitem__(self, key):
        for part in key if isinstance(key, tuple) else (key,):
            if not (part is Ellipsis or isinstance(part, (int, np.integer, slice))):
                raise TypeError(f"a safetensors slice is indexed with integers, slices and Ellipsis, "
                                f"not {type(part).__name__}")
        self._file._check_open()
        return self._file._place(_wrap(np.array(self._view[key])))


def load_safetensors(path, device="cpu"):
    """All tensors of a safetensors file, memory-mapped: {name: Tensor} in file order."""
    with safe_open(path, device=device) as file:
        return {name: file.get_tensor(name) for name in file.offset_keys()}


def load_safetensors_bytes(data):
    """All tensors of a safetensors file's bytes, on cpu, sharing one writable copy of them."""
    tensors = _TensorBuffer(bytearray(data), "safetensors bytes")
    return {name: _wrap(tensors._array(name)) for name in tensors._names_by_offset()}


def safetensors_metadata(path):
    """The `__metadata__` dict of a safetensors file (None when it has none), reading only its header."""
    return safe_open(path).metadata()


def _storage(tensor):
    """(start, bytes) of the allocation a tensor's array is a view of: its storage, in torch's terms."""
    array = tensor._data
    while isinstance(getattr(array, "base", None), type(array)):
        array = array.base
    start = array.__array_interface__["data"][0] if isinstance(array, np.ndarray) else array.data.ptr
    return start, array.nbytes


def _shared_groups(tensors):
    """Names of tensors whose memory overlaps, grouped as the safetensors library does.

    Distinct allocations never overlap, so comparing [first byte, last byte] extents finds
    every pair of views of one buffer that could alias, without following `.base` chains.
    """
    extents = []
    for name, tensor in tensors.items():
        if tensor.numel() == 0 or tensor.device.type == "meta":
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


def remove_duplicate_names(state_dict, *, preferred_names=None, discard_names=None):
    """{kept name: [names dropped for it]} for each group of tensors sharing memory.

    safetensors.torch's rule: keep a name whose tensor covers its whole storage, the first
    in sorted order, preferring names not in `discard_names` and, above that, names in
    `preferred_names`; a group where no tensor covers its storage cannot be saved.
    """
    preferred_names = set(preferred_names or ())
    discard_names = set(discard_names or ())
    to_remove = {}
    for group in _shared_groups(state_dict):
        complete = {name for name in group
                    if (state_dict[name].data_ptr(), state_dict[name]._data.nbytes) == _storage(state_dict[name])}
        if not complete:
            raise RuntimeError(
                "Error while trying to find names to remove to save state dict, but found no suitable name to keep "
                f"for saving amongst: {set(group)}. None is covering the entire storage. Refusing to save/load the "
                "model since you could be storing much more memory than needed.")
        keep = sorted(complete)[0]
        if complete - discard_names:
            keep = sorted(complete - discard_names)[0]
        if preferred_names & complete:
            keep = sorted(preferred_names & complete)[0]
        to_remove[keep] = [name for name in group if name != keep]
    return to_remove


def _check_for_save(tensors, metadata, pack_noncontiguous):
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
                           "duplicates, as mindnlp.safetensors.save_model does) or clone the tensors first.")
    if not pack_noncontiguous:
        for name, tensor in tensors.items():
            if not tensor.is_contiguous():
                raise ValueError(
                    f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either means "
                    "you are trying to save tensors which are reference of each other in which case it's recommended "
                    "to save only the full tensors, and reslice at load time, or simply call `.contiguous()` on your "
                    "tensor to pack it before saving.")


def _encode(tensors, metadata, pack_noncontiguous=True):
    """The pieces of a safetensors file: the length prefix and header, then each tensor's bytes
    (produced one tensor at a time, so a device's tensors pass through host memory singly).

    Tensors are laid out by decreasing element size, then name, so every tensor starts
    aligned to its element size.
    """
    _check_for_save(tensors, metadata, pack_noncontiguous)
    for name, tensor in tensors.items():
        if tensor.device.type == "meta":
            raise NotImplementedError(f"Cannot copy out of meta tensor; no data! (tensor `{name}`)")
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
    yield struct.pack("<Q", len(encoded))
    yield encoded
    for name in order:
        array = np.ascontiguousarray(tensors[name]._host())
        yield memoryview(array.reshape(-1).view(np.uint8))


def save_safetensors(tensors, path, metadata=None, pack_noncontiguous=True):
    """Write {name: Tensor} as a safetensors file, atomically.

    Like `safetensors.torch.save_file`, tensors that share memory (tied weights, views of one
    buffer) are refused with the groups named: the caller decides which name to keep, as HF
    transformers' `save_pretrained` does by dropping tied keys first. Non-contiguous tensors
    are written as contiguous copies, or refused as safetensors does when `pack_noncontiguous`
    is False.
    """
    pieces = _encode(tensors, metadata, pack_noncontiguous)
    header = [next(pieces), next(pieces)]  # validates the tensors before the file is touched
    with atomic_write(path) as file:
        file.writelines(header)
        for piece in pieces:
            file.write(piece)


def safetensors_bytes(tensors, metadata=None, pack_noncontiguous=True):
    """The bytes of the safetensors file `save_safetensors` would write."""
    return b"".join(_encode(tensors, metadata, pack_noncontiguous))
