# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Reading PyTorch checkpoints (`torch.save` files) without torch.

Two layouts exist. The zip layout (torch >= 1.6) holds `<folder>/data.pkl`, a pickle whose
tensors refer to storages by key through persistent ids, and one raw record
`<folder>/data/<key>` per storage, plus a `byteorder` record. The legacy layout is a stream of
pickles: magic number, protocol version, system info, the object, the list of storage keys,
then each storage as an 8-byte little-endian element count followed by its raw bytes.

Pickles are read by `RestrictedUnpickler` with the table of globals below, so only tensors,
containers, numbers, strings, dtypes, sizes and devices can come out of a file.
"""
import importlib
import io
import mmap as mmap_module
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from .. import _dtype
from .._device import device as core_device
from .._tensor import Size, _wrap
from ._torch_names import DTYPES, STORAGE_DTYPES, UNSUPPORTED_DTYPES
from ._unpickler import RestrictedUnpickler, SafeCall, UnpicklingError

ZIP_MAGIC = b"PK\x03\x04"
LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL_VERSION = 1001


def parameter_class():
    """`mindnlp.core.nn.Parameter` when the nn package exists, else None."""
    try:
        return importlib.import_module("mindnlp.core.nn").Parameter
    except ModuleNotFoundError as err:
        if err.name != "mindnlp.core.nn":
            raise
        return None


class StorageType:
    """What a `torch.FloatStorage`-style global stands for: the element dtype of a storage."""

    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"<storage type torch.{self.name}>"


def _strided_view(storage, storage_offset, size, stride):
    """A tensor over `storage` (a 1-D array) as torch's set_(storage, offset, size, stride).

    Offsets and strides are checked against the storage first: a crafted file must not make
    a view that reaches outside the memory it owns.
    """
    if not (hasattr(storage, "dtype") and getattr(storage, "ndim", None) == 1):
        raise UnpicklingError(f"a tensor's storage must come from the checkpoint's storages, got {type(storage).__name__}")
    size, stride = tuple(size), tuple(stride)
    if not all(type(v) is int and v >= 0 for v in (storage_offset, *size, *stride)) or len(size) != len(stride):
        raise RuntimeError(f"invalid tensor geometry in checkpoint: storage offset {storage_offset}, "
                           f"sizes {list(size)}, strides {list(stride)}")
    itemsize = storage.dtype.itemsize
    if 0 in size:
        needed = storage_offset
    else:
        needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {storage_offset}, "
                           f"and itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of "
                           f"bounds for storage of size {storage.size * itemsize}")
    if 0 in size:
        return _wrap(storage[:0].reshape(size))
    from ..backends import backend_for_array

    xp = backend_for_array(storage).xp
    base = storage[storage_offset:]
    return _wrap(xp.lib.stride_tricks.as_strided(base, shape=size, strides=tuple(s * itemsize for s in stride)))


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _strided_view(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    tensor = _strided_view(storage, storage_offset, size, stride)
    tensor.requires_grad = bool(requires_grad)
    return tensor


def _rebuild_parameter(data, requires_grad, backward_hooks):
    parameter = parameter_class()
    if parameter is None:
        data.requires_grad = bool(requires_grad)
        return data
    return parameter(data, requires_grad=bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """Parameters carrying extra Python attributes: a dict state restores them, slot state is refused."""
    result = _rebuild_parameter(data, requires_grad, backward_hooks)
    if isinstance(state, tuple) and len(state) == 2:
        state, slot_state = state
        if slot_state:
            raise UnpicklingError("a parameter's slot state cannot be restored from a checkpoint")
    if state:
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise UnpicklingError("malformed pickle: a parameter's state must be a dict of attribute names")
        result.__dict__.update(state)
    return result


def _ordered_dict(*args):
    return OrderedDict(*args)


def _size(dims=()):
    return Size(int(d) for d in dims)


def _device(*args):
    return core_device(*args)


_GLOBALS = {
    "collections.OrderedDict": SafeCall("collections.OrderedDict", _ordered_dict),
    "torch._utils._rebuild_tensor": SafeCall("torch._utils._rebuild_tensor", _rebuild_tensor, True),
    "torch._utils._rebuild_tensor_v2": SafeCall("torch._utils._rebuild_tensor_v2", _rebuild_tensor_v2, True),
    "torch._utils._rebuild_parameter": SafeCall("torch._utils._rebuild_parameter", _rebuild_parameter, True),
    "torch._utils._rebuild_parameter_with_state": SafeCall("torch._utils._rebuild_parameter_with_state",
                                                           _rebuild_parameter_with_state, True),
    "torch.Size": SafeCall("torch.Size", _size),
    "torch.device": SafeCall("torch.device", _device),
    "torch.UntypedStorage": StorageType("UntypedStorage", _dtype.uint8),
    "torch.storage.UntypedStorage": StorageType("UntypedStorage", _dtype.uint8),
}
_GLOBALS.update({f"torch.{name}": StorageType(name, dtype) for name, dtype in STORAGE_DTYPES.items()})
_GLOBALS.update({f"torch.{name}": dtype for name, dtype in DTYPES.items()})


def find_torch_global(module, name):
    """The object a global in a torch checkpoint stands for; anything not in the table is refused."""
    full_name = f"{module}.{name}"
    if full_name in _GLOBALS:
        return _GLOBALS[full_name]
    if module == "torch" and name in UNSUPPORTED_DTYPES:
        raise UnpicklingError(f"the checkpoint holds dtype torch.{name}, which mindnlp.core does not support")
    raise UnpicklingError(f"refusing to load global {full_name}: a checkpoint may only contain tensors, containers, "
                          "numbers and strings (mindnlp never runs code from a pickle)")


def _scanning_global(module, name):
    """find_torch_global for a first pass that only collects storage metadata: tensors are not built."""
    found = find_torch_global(module, name)
    if type(found) is SafeCall and found.builds_tensor:
        return SafeCall(found.name, lambda *args: None)
    return found


# --- storage placement (map_location) ---
def _restore_location(array, location, map_location):
    """Move a loaded storage to where map_location sends it (torch.load's rules)."""
    if callable(map_location) and not isinstance(map_location, (str, core_device)):
        moved = map_location(_wrap(array), location)
        if moved is not None:
            return moved._data if hasattr(moved, "_data") else moved
        target = location
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif map_location is None:
        target = location
    else:
        target = map_location
    target = core_device(target)
    if target.type == "cpu":
        return array
    if target.type == "cuda":
        from ..backends import cuda_available, get_backend

        if not cuda_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but CUDA is not available. If you "
                               "are running on a CPU-only machine, please use core.load with "
                               "map_location=core.device('cpu') to map your storages to the CPU.")
        return get_backend(target).from_host(array, target.index)
    raise RuntimeError(f"cannot load storages onto device {target}")


def _storage_pid(pid, length):
    """Unpack a ('storage', storage_type, key, location, numel, ...) persistent id, checking its fields."""
    if type(pid) is not tuple or len(pid) != length:
        raise UnpicklingError(f"malformed persistent id {pid!r}: expected a {length}-tuple")
    kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
    if kind == "module":
        raise UnpicklingError("the checkpoint pickles a whole nn.Module: only state dicts and tensors can be loaded")
    if kind != "storage":
        raise UnpicklingError(f"only storages may be persistent ids in a checkpoint, got {kind!r}")
    storage_type, key, location, numel = pid[1:5]
    if type(storage_type) is not StorageType:
        raise UnpicklingError(f"persistent id names {storage_type!r} instead of a storage type")
    location = location.decode("ascii") if isinstance(location, bytes) else location
    if type(key) is not str or type(location) is not str or type(numel) is not int or numel < 0:
        raise UnpicklingError(f"malformed persistent id {pid!r}")
    return storage_type.dtype, key, location, numel


def _byteswapped(array):
    """A native-order copy of an array read in the other byte order."""
    unsigned = np.dtype(f"u{array.dtype.itemsize}")
    return array.view(unsigned).byteswap().view(array.dtype)


# --- zip layout ---
def _record_prefix(archive, name):
    for record in archive.namelist():
        folder, _, rest = record.partition("/")
        if rest == "data.pkl":
            return folder + "/"
    raise RuntimeError(f"{name} is a zip file but not a PyTorch checkpoint: it has no <folder>/data.pkl record")


def _member_offset(mapped, info):
    """Where an uncompressed zip member's bytes start: after its local header, name and extra field."""
    header = mapped[info.header_offset:info.header_offset + 30]
    if len(header) != 30 or header[:4] != ZIP_MAGIC:
        raise RuntimeError(f"corrupt zip archive: bad local header for record {info.filename}")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_length + extra_length


def _load_zip(archive, name, map_location, mapped):
    prefix = _record_prefix(archive, name)
    byteorder = sys.byteorder
    if prefix + "byteorder" in archive.namelist():
        byteorder = archive.read(prefix + "byteorder").decode("ascii").strip()
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"{name}: unknown byteorder record {byteorder!r}")
    storages = {}

    def read_storage(dtype, key, numel):
        record = f"{prefix}data/{key}"
        try:
            info = archive.getinfo(record)
        except KeyError:
            raise RuntimeError(f"{name}: storage record {record} is missing") from None
        nbytes = numel * dtype.itemsize
        if info.file_size != nbytes:
            raise RuntimeError(f"{name}: storage record {record} holds {info.file_size} bytes, "
                               f"but its tensors need {nbytes}")
        if numel == 0:
            return np.empty(0, dtype.np_dtype)
        if mapped is not None and info.compress_type == zipfile.ZIP_STORED:
            array = np.frombuffer(mapped, dtype.np_dtype, numel, _member_offset(mapped, info))
        else:
            array = np.empty(numel, dtype.np_dtype)
            with archive.open(info) as member:
                if member.readinto(array.view(np.uint8)) != nbytes:
                    raise RuntimeError(f"{name}: storage record {record} is truncated")
        if byteorder != sys.byteorder and dtype.itemsize > 1:
            array = _byteswapped(array)
        return array

    def persistent_load(pid):
        dtype, key, location, numel = _storage_pid(pid, 5)
        if key not in storages:
            storages[key] = _restore_location(read_storage(dtype, key, numel), location, map_location)
        return storages[key]

    pickled = io.BytesIO(archive.read(prefix + "data.pkl"))
    return RestrictedUnpickler(pickled, find_torch_global, persistent_load).load()


# --- legacy layout ---
class _RecordingReader:
    """Passes reads through and keeps the bytes, so a pickle read once can be read again."""

    def __init__(self, file):
        self._file = file
        self.recorded = bytearray()

    def read(self, n):
        data = self._file.read(n)
        self.recorded += data
        return data

    def readline(self):
        data = self._file.readline()
        self.recorded += data
        return data


def _load_legacy(file, name, map_location):
    """The pre-1.6 layout. Storages follow the pickle that uses them, so the object pickle is
    read twice: once to learn each storage's dtype and size, then, with the storages read and
    placed, to build the tensors."""
    def read_plain_pickle():
        return RestrictedUnpickler(file, find_torch_global).load()

    if read_plain_pickle() != LEGACY_MAGIC_NUMBER:
        raise RuntimeError(f"{name}: Invalid magic number; corrupt file?")
    version = read_plain_pickle()
    if version != LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"{name}: Invalid protocol version: {version}")
    if not isinstance(read_plain_pickle(), dict):
        raise RuntimeError(f"{name}: corrupt legacy checkpoint: its system info is not a dict")

    declared = {}

    def scanning_persistent_load(pid):
        dtype, key, location, numel = _storage_pid(pid, 6)
        declared[key] = (dtype, location, numel)

    recorder = _RecordingReader(file)
    RestrictedUnpickler(recorder, _scanning_global, scanning_persistent_load).load()
    keys = read_plain_pickle()
    if type(keys) is not list:
        raise RuntimeError(f"{name}: corrupt legacy checkpoint: the storage key list is missing")
    storages = {}
    for key in keys:
        if key not in declared:
            raise RuntimeError(f"{name}: storage {key!r} is not used by the checkpoint's object")
        dtype, location, numel = declared[key]
        header = file.read(8)
        if len(header) != 8 or struct.unpack("<q", header)[0] != numel:
            raise RuntimeError(f"{name}: storage {key!r} is truncated or has the wrong size")
        array = np.empty(numel, dtype.np_dtype)
        if numel and file.readinto(array.view(np.uint8)) != array.nbytes:
            raise RuntimeError(f"{name}: storage {key!r} is truncated")
        # Legacy storages are always written little-endian.
        if sys.byteorder != "little" and dtype.itemsize > 1:
            array = _byteswapped(array)
        storages[key] = _restore_location(array, location, map_location)
    missing = sorted(set(declared) - set(storages))
    if missing:
        raise RuntimeError(f"{name}: storages {missing} are used but not stored in the checkpoint")
    views = {}

    def persistent_load(pid):
        dtype, key, location, numel = _storage_pid(pid, 6)
        view = pid[5]
        if view is None:
            return storages[key]
        if not (type(view) is tuple and len(view) == 3 and all(type(v) is int for v in view[1:])):
            raise UnpicklingError(f"malformed storage view {view!r}")
        view_key, offset, view_numel = view
        if view_key not in views:
            if offset < 0 or view_numel < 0 or offset + view_numel > numel:
                raise RuntimeError(f"{name}: storage view {view!r} is out of bounds of storage {key!r}")
            views[view_key] = storages[key][offset:offset + view_numel]
        return views[view_key]

    pickled = io.BytesIO(bytes(recorder.recorded))
    return RestrictedUnpickler(pickled, find_torch_global, persistent_load).load()


# --- entry point ---
def load(f, map_location=None, mmap=None, weights_only=True):
    """torch.load for checkpoints of tensors and containers, without torch.

    `f` is a path or a binary file object. `map_location` is None (each storage where it was
    saved), a device or device string, a dict from saved location to target, or a callable
    `(storage, location) -> tensor or None`. `mmap=True` maps the file instead of reading it
    (zip layout, file paths only): storages then share the page cache and writes to the
    tensors stay private to this process. `weights_only` is accepted for compatibility:
    loading is always restricted to data, whatever its value.
    """
    is_path = isinstance(f, (str, bytes)) or hasattr(f, "__fspath__")
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if is_path:
        with open(f, "rb") as file:
            return _load_stream(file, str(f), map_location, bool(mmap))
    return _load_stream(f, getattr(f, "name", "checkpoint"), map_location, False)


def _load_stream(file, name, map_location, use_mmap):
    start = file.tell()
    head = file.read(4)
    file.seek(start)
    if not head:
        raise RuntimeError(f"{name} is empty: it is not a checkpoint")
    if head == ZIP_MAGIC:
        try:
            archive = zipfile.ZipFile(file)
        except zipfile.BadZipFile as err:
            raise RuntimeError(f"{name} is a truncated or corrupt zip checkpoint ({err})") from None
        with archive:
            mapped = mmap_module.mmap(file.fileno(), 0, access=mmap_module.ACCESS_COPY) if use_mmap else None
            return _load_zip(archive, name, map_location, mapped)
    if head[0] == 0x80:
        if use_mmap:
            raise RuntimeError("mmap can only be used with files saved with torch.save(_use_new_zipfile_serialization="
                               "True), please torch.save your checkpoint with this option in order to use mmap.")
        return _load_legacy(file, name, map_location)
    raise RuntimeError(f"{name} is neither a PyTorch zip checkpoint nor a legacy pickle checkpoint "
                       f"(it starts with {head!r})")
