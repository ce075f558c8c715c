# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Writing checkpoints in torch's zip layout (or, on request, its pre-1.6 legacy layout), so
that `torch.load` (weights_only) reads them.

The object is pickled by a small writer of pickle protocol 2 that knows only the types a
checkpoint holds: None, bool, int, float, str, tuple, list, dict, OrderedDict (with its
attributes, as a state dict's `_metadata`), core dtypes, Size and tensors. Anything else is
an error at save time, not a file that no restricted loader could read. Tensors are written
as torch writes them: `torch._utils._rebuild_tensor_v2` over a storage persistent id, with
tensors that view one buffer sharing one storage record.
"""
import io
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor
from ._atomic import atomic_write
from ._torch_load import LEGACY_MAGIC_NUMBER, LEGACY_PROTOCOL_VERSION, parameter_class
from ._torch_names import STORAGE_NAMES

STORAGE_ALIGNMENT = 64
_BATCH = 1000  # items per APPENDS/SETITEMS, as pickle does


class _CheckpointPickler:
    """Pickles one object into `data.pkl` bytes and collects the storages its tensors use."""

    def __init__(self, legacy=False):
        self._legacy = legacy  # legacy storage ids carry a sixth field: the view (None)
        self._out = io.BytesIO()
        self._write = self._out.write
        self._memo = {}  # id(object) -> memo index, for objects that appear more than once
        self._alive = []  # keeps memoized objects (and storage roots) alive so ids stay unique
        self._storage_keys = {}  # (id(root buffer), dtype) -> key
        self.storages = []  # (key, uint8 array of the storage bytes)
        self.itemsizes = {}  # key -> element size of the storage

    def dump(self, obj):
        self._write(pickle.PROTO + b"\x02")
        self._save(obj)
        self._write(pickle.STOP)
        return self._out.getvalue()

    # --- scalars ---
    def _save(self, obj):
        kind = type(obj)
        if obj is None:
            self._write(pickle.NONE)
        elif kind is bool:
            self._write(pickle.NEWTRUE if obj else pickle.NEWFALSE)
        elif kind is int:
            self._save_int(obj)
        elif kind is float:
            self._write(pickle.BINFLOAT + struct.pack(">d", obj))
        elif kind is str:
            encoded = obj.encode("utf-8", "surrogatepass")
            self._write(pickle.BINUNICODE + struct.pack("<I", len(encoded)) + encoded)
        elif kind is _dtype.dtype:
            self._save_global("torch", obj.name)
        elif kind is Size:
            self._save_global("torch", "Size")
            self._save_tuple((tuple(obj),))
            self._write(pickle.REDUCE)
        elif kind is tuple:
            self._save_tuple(obj)
        elif id(obj) in self._memo:
            self._save_memo_get(self._memo[id(obj)])
        elif kind is list:
            self._write(pickle.EMPTY_LIST)
            self._memoize(obj)
            self._save_batches(obj, pickle.APPENDS)
        elif kind is dict or kind is OrderedDict:
            self._save_dict(obj)
        elif isinstance(obj, Tensor):
            self._save_tensor(obj)
        else:
            raise TypeError(f"core.save cannot write an object of type {kind.__module__}.{kind.__qualname__}: "
                            "checkpoints hold tensors, dicts, lists, tuples, strings, numbers, None and dtypes")

    def _save_int(self, value):
        if 0 <= value < 0x100:
            self._write(pickle.BININT1 + bytes([value]))
        elif 0 <= value < 0x10000:
            self._write(pickle.BININT2 + struct.pack("<H", value))
        elif -0x80000000 <= value < 0x80000000:
            self._write(pickle.BININT + struct.pack("<i", value))
        else:
            encoded = value.to_bytes((value.bit_length() >> 3) + 1, "little", signed=True)
            self._write(pickle.LONG1 + bytes([len(encoded)]) + encoded)

    def _save_global(self, module, name):
        self._write(pickle.GLOBAL + f"{module}\n{name}\n".encode("ascii"))

    # --- containers ---
    def _save_tuple(self, items):
        if not items:
            self._write(pickle.EMPTY_TUPLE)
            return
        if len(items) > 3:
            self._write(pickle.MARK)
        for item in items:
            self._save(item)
        self._write((pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)[len(items) - 1] if len(items) <= 3 else pickle.TUPLE)

    def _save_dict(self, obj):
        if type(obj) is OrderedDict:
            self._save_global("collections", "OrderedDict")
            self._write(pickle.EMPTY_TUPLE + pickle.REDUCE)
        else:
            self._write(pickle.EMPTY_DICT)
        self._memoize(obj)
        flat = [part for pair in obj.items() for part in pair]
        self._save_batches(flat, pickle.SETITEMS, step=2)
        attributes = getattr(obj, "__dict__", None)
        if attributes:
            self._save(dict(attributes))
            self._write(pickle.BUILD)

    def _save_batches(self, items, opcode, step=1):
        batch = _BATCH * step
        for start in range(0, len(items), batch):
            self._write(pickle.MARK)
            for item in items[start:start + batch]:
                self._save(item)
            self._write(opcode)

    # --- memo ---
    def _memoize(self, obj):
        index = len(self._memo)
        self._memo[id(obj)] = index
        self._alive.append(obj)
        self._write(pickle.BINPUT + bytes([index]) if index < 0x100 else pickle.LONG_BINPUT + struct.pack("<I", index))

    def _save_memo_get(self, index):
        self._write(pickle.BINGET + bytes([index]) if index < 0x100 else pickle.LONG_BINGET + struct.pack("<I", index))

    # --- tensors ---
    def _save_tensor(self, tensor):
        parameter = parameter_class()
        if parameter is not None and isinstance(tensor, parameter):
            # torch pickles a Parameter as _rebuild_parameter(its detached data, requires_grad, hooks).
            self._save_global("torch._utils", "_rebuild_parameter")
            self._write(pickle.MARK)
            self._save_plain_tensor(tensor, requires_grad=False)
            self._save(tensor.requires_grad)
            self._save_empty_ordered_dict()
            self._write(pickle.TUPLE + pickle.REDUCE)
        else:
            self._save_plain_tensor(tensor, tensor.requires_grad)
        self._memoize(tensor)

    def _save_plain_tensor(self, tensor, requires_grad):
        key, numel, offset, strides = self._storage_of(tensor)
        location = "cpu" if tensor.device.type == "cpu" else f"cuda:{tensor.device.index or 0}"
        self._save_global("torch._utils", "_rebuild_tensor_v2")
        self._write(pickle.MARK + pickle.MARK)
        self._save("storage")
        self._save_global("torch", STORAGE_NAMES[tensor.dtype])
        for field in (key, location, numel) + ((None,) if self._legacy else ()):
            self._save(field)
        self._write(pickle.TUPLE + pickle.BINPERSID)
        self._save(offset)
        self._save(tuple(tensor.shape))
        self._save(strides)
        self._save(bool(requires_grad))
        self._save_empty_ordered_dict()
        self._write(pickle.TUPLE + pickle.REDUCE)

    def _save_empty_ordered_dict(self):
        self._save_global("collections", "OrderedDict")
        self._write(pickle.EMPTY_TUPLE + pickle.REDUCE)

    def _storage_of(self, tensor):
        """(key, numel, element offset, element strides) of the storage a tensor is written into.

        A CPU tensor that views a contiguous buffer (a slice, a transpose, one of several
        tensors over one array) is written as a view of that whole buffer, so sharing
        survives the round trip; anything else is written as its own contiguous copy.
        """
        array = tensor._host()
        itemsize = array.dtype.itemsize
        if array.size == 0:
            # NumPy gives empty arrays zero strides; torch records contiguous ones.
            array = np.empty(0, array.dtype).reshape(array.shape)
        root = _buffer_root(array)
        byte_offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        shareable = (tensor.device.type == "cpu" and root.flags.c_contiguous and root.nbytes % itemsize == 0
                     and byte_offset % itemsize == 0 and all(s >= 0 and s % itemsize == 0 for s in array.strides))
        if not shareable:
            root = np.ascontiguousarray(array)
            byte_offset = 0
        strides = tuple(s // itemsize for s in (array.strides if shareable else root.strides))
        cache_key = (id(root), array.dtype)
        if cache_key not in self._storage_keys:
            key = str(len(self.storages))
            self._storage_keys[cache_key] = key
            self._alive.append(root)
            self.storages.append((key, root.reshape(-1).view(np.uint8)))
            self.itemsizes[key] = itemsize
        return self._storage_keys[cache_key], root.nbytes // itemsize, byte_offset // itemsize, strides


def _buffer_root(array):
    """The outermost ndarray whose memory `array` views, through slices, transposes and the
    wrapper object that `as_strided` puts between a view and its base."""
    root = array
    node = array.base
    while node is not None:
        if isinstance(node, np.ndarray):
            root = node
        node = getattr(node, "base", None)
    return root


def _aligned_record_info(archive, record, size):
    """A ZipInfo whose data will start on a STORAGE_ALIGNMENT boundary of the file.

    The local header is 30 bytes, then the name, then the extra field (then 20 more bytes when
    zipfile needs zip64 sizes); padding goes into an extra field with torch's id 'FB'.
    """
    info = zipfile.ZipInfo(record, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = size
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    header = 30 + len(record.encode("utf-8")) + 4 + (20 if zip64 else 0)
    padding = -(archive.fp.tell() + header) % STORAGE_ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", padding) + b"Z" * padding
    return info


def _write_record(archive, record, data):
    data = memoryview(data).cast("B")
    with archive.open(_aligned_record_info(archive, record, data.nbytes), "w") as member:
        member.write(data)


def _write_zip(file, pickled, storages, byteorder_record=True):
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        _write_record(archive, "archive/data.pkl", pickled)
        _write_record(archive, "archive/.format_version", b"1")
        _write_record(archive, "archive/.storage_alignment", str(STORAGE_ALIGNMENT).encode())
        if byteorder_record:
            _write_record(archive, "archive/byteorder", sys.byteorder.encode())
        for key, data in storages:
            _write_record(archive, f"archive/data/{key}", data)
        _write_record(archive, "archive/version", b"3\n")


def _write_legacy(file, pickled, storages):
    """torch's pre-1.6 layout: three plain pickles (magic number, protocol version, system
    info), the object's pickle, the sorted storage keys, then each storage as an int64
    element count and its little-endian bytes."""
    info = {"protocol_version": LEGACY_PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
            "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (LEGACY_MAGIC_NUMBER, LEGACY_PROTOCOL_VERSION, info):
        file.write(pickle.dumps(header, protocol=2))
    file.write(pickled)
    data = dict(storages)
    keys = sorted(data)
    file.write(pickle.dumps(keys, protocol=2))
    for key in keys:
        raw, itemsize = data[key]
        if sys.byteorder != "little" and itemsize > 1:
            raw = raw.view(f"u{itemsize}").byteswap().view(np.uint8)
        file.write(struct.pack("<q", raw.nbytes // itemsize))
        file.write(memoryview(raw).cast("B"))


def save(obj, f, _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """torch.save for tensors and containers of them, in torch's zip layout, or in its legacy
    layout with `_use_new_zipfile_serialization=False`, as torch's flag selects.

    `f` is a path or a writable binary file object. A path is written atomically: into a
    temporary file next to it that replaces the target only once complete, so an error or a
    crash mid-save leaves the previous file (or no file) there, never a truncated one.
    """
    pickler = _CheckpointPickler(legacy=not _use_new_zipfile_serialization)
    pickled = pickler.dump(obj)

    def write(file):
        if _use_new_zipfile_serialization:
            _write_zip(file, pickled, pickler.storages, byteorder_record=not _disable_byteorder_record)
        else:
            _write_legacy(file, pickled, [(key, (raw, pickler.itemsizes[key])) for key, raw in pickler.storages])

    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with atomic_write(f) as file:
            write(file)
    else:
        write(f)
