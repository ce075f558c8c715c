# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""A pickle reader that builds data and never runs code.

`pickle.Unpickler` imports any module a pickle names and calls whatever it finds there, so a
checkpoint can run `os.system`. This reader interprets the opcodes itself, like torch's
`weights_only` unpickler: it supports the opcodes that checkpoint writers emit (containers,
numbers, strings, memo, persistent ids), resolves every global through a caller-given table
without importing anything, calls only `SafeCall` constructors from that table, and lets
BUILD set attributes only on an OrderedDict (torch stores a state dict's `_metadata` so).
"""
import pickle
import pickletools
import struct
from collections import OrderedDict

UnpicklingError = pickle.UnpicklingError


class SafeCall:
    """An allow-listed constructor: the only kind of object REDUCE may call.

    `builds_tensor` marks the constructors that need real storages, so that a first
    scanning pass over a legacy checkpoint can skip them.
    """

    __slots__ = ("name", "function", "builds_tensor")

    def __init__(self, name, function, builds_tensor=False):
        self.name = name
        self.function = function
        self.builds_tensor = builds_tensor

    def __repr__(self):
        return f"<allowed global {self.name}>"


def _opcode_name(code):
    info = pickletools.code2op.get(chr(code))
    return info.name if info is not None else f"0x{code:02x}"


class RestrictedUnpickler:
    """Reads one pickle from `file` (a binary stream with read and readline).

    `find_global(module, name)` returns the object a GLOBAL stands for or raises
    UnpicklingError; `persistent_load(pid)` returns what a persistent id stands for.
    """

    def __init__(self, file, find_global, persistent_load=None):
        self._file = file
        self._find_global = find_global
        self._persistent_load = persistent_load

    def load(self):
        self._stack = []
        self._metastack = []
        self._memo = {}
        while True:
            code = self._read(1)[0]
            if code == pickle.STOP[0]:
                return self._pop()
            handler = _DISPATCH.get(code)
            if handler is None:
                raise UnpicklingError(f"pickle opcode {_opcode_name(code)} is not allowed in a checkpoint")
            handler(self)

    # --- reading and stack helpers ---
    def _read(self, n):
        data = self._file.read(n)
        if len(data) != n:
            raise UnpicklingError("pickle data was truncated")
        return data

    def _unpack(self, fmt):
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    def _readline(self):
        line = self._file.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated")
        return line[:-1].decode("utf-8")

    def _pop(self):
        if not self._stack:
            raise UnpicklingError("malformed pickle: the stack is empty")
        return self._stack.pop()

    def _top(self):
        if not self._stack:
            raise UnpicklingError("malformed pickle: the stack is empty")
        return self._stack[-1]

    def _pop_mark(self):
        if not self._metastack:
            raise UnpicklingError("malformed pickle: no MARK before a MARK-consuming opcode")
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _memo_get(self, index):
        if index not in self._memo:
            raise UnpicklingError(f"malformed pickle: memo entry {index} is missing")
        self._stack.append(self._memo[index])

    def _memo_put(self, index):
        self._memo[index] = self._top()

    # --- opcodes ---
    def _proto(self):
        version = self._read(1)[0]
        if version > pickle.HIGHEST_PROTOCOL:
            raise UnpicklingError(f"unsupported pickle protocol {version}")

    def _frame(self):
        self._read(8)

    def _mark(self):
        self._metastack.append(self._stack)
        self._stack = []

    def _global(self):
        module = self._readline()
        name = self._readline()
        self._stack.append(self._find_global(module, name))

    def _stack_global(self):
        name = self._pop()
        module = self._pop()
        if type(module) is not str or type(name) is not str:
            raise UnpicklingError("malformed pickle: STACK_GLOBAL needs two strings")
        self._stack.append(self._find_global(module, name))

    def _reduce(self):
        args = self._pop()
        func = self._pop()
        if type(func) is not SafeCall:
            raise UnpicklingError(f"pickle tries to call {func!r}, which is not an allowed constructor")
        if type(args) is not tuple:
            raise UnpicklingError(f"malformed pickle: arguments to {func.name} are not a tuple")
        self._stack.append(func.function(*args))

    def _build(self):
        state = self._pop()
        target = self._top()
        if type(target) is not OrderedDict:
            raise UnpicklingError(f"pickle tries to set the state of a {type(target).__name__}: only an OrderedDict's "
                                  "attributes may be restored")
        if type(state) is not dict or not all(type(k) is str for k in state):
            raise UnpicklingError("malformed pickle: an OrderedDict's state must be a dict of attribute names")
        target.__dict__.update(state)

    def _persid(self):
        pid = self._pop()
        if self._persistent_load is None:
            raise UnpicklingError("this pickle may not hold persistent ids")
        self._stack.append(self._persistent_load(pid))

    def _append(self):
        item = self._pop()
        self._list_target().append(item)

    def _appends(self):
        items = self._pop_mark()
        self._list_target().extend(items)

    def _list_target(self):
        target = self._top()
        if type(target) is not list:
            raise UnpicklingError(f"malformed pickle: APPEND to a {type(target).__name__}")
        return target

    def _setitem(self):
        value = self._pop()
        key = self._pop()
        self._dict_target()[key] = value

    def _setitems(self):
        items = self._pop_mark()
        if len(items) % 2:
            raise UnpicklingError("malformed pickle: SETITEMS with an odd number of items")
        target = self._dict_target()
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _dict_target(self):
        target = self._top()
        if type(target) not in (dict, OrderedDict):
            raise UnpicklingError(f"malformed pickle: SETITEM on a {type(target).__name__}")
        return target

    def _tuple(self):
        items = tuple(self._pop_mark())
        self._stack.append(items)

    def _tuple_n(self, n):
        if len(self._stack) < n:
            raise UnpicklingError("malformed pickle: the stack is empty")
        items = tuple(self._stack[len(self._stack) - n:])
        del self._stack[len(self._stack) - n:]
        self._stack.append(items)

    def _long(self, size_format):
        size = self._unpack(size_format)
        if size < 0:
            raise UnpicklingError("malformed pickle: negative LONG size")
        self._stack.append(int.from_bytes(self._read(size), "little", signed=True))

    def _text(self, size_format, encoding="utf-8"):
        self._stack.append(self._read(self._unpack(size_format)).decode(encoding, "surrogatepass"))


_DISPATCH = {
    pickle.PROTO[0]: RestrictedUnpickler._proto,
    pickle.FRAME[0]: RestrictedUnpickler._frame,
    pickle.MARK[0]: RestrictedUnpickler._mark,
    pickle.NONE[0]: lambda u: u._stack.append(None),
    pickle.NEWTRUE[0]: lambda u: u._stack.append(True),
    pickle.NEWFALSE[0]: lambda u: u._stack.append(False),
    pickle.BININT[0]: lambda u: u._stack.append(u._unpack("<i")),
    pickle.BININT1[0]: lambda u: u._stack.append(u._read(1)[0]),
    pickle.BININT2[0]: lambda u: u._stack.append(u._unpack("<H")),
    pickle.LONG1[0]: lambda u: u._long("<B"),
    pickle.LONG4[0]: lambda u: u._long("<i"),
    pickle.BINFLOAT[0]: lambda u: u._stack.append(u._unpack(">d")),
    pickle.SHORT_BINUNICODE[0]: lambda u: u._text("<B"),
    pickle.BINUNICODE[0]: lambda u: u._text("<I"),
    pickle.BINUNICODE8[0]: lambda u: u._text("<Q"),
    # Python 2 `str`, found in checkpoints written by Python 2 torch.
    pickle.SHORT_BINSTRING[0]: lambda u: u._text("<B"),
    pickle.BINSTRING[0]: lambda u: u._text("<i"),
    pickle.SHORT_BINBYTES[0]: lambda u: u._stack.append(u._read(u._unpack("<B"))),
    pickle.BINBYTES[0]: lambda u: u._stack.append(u._read(u._unpack("<I"))),
    pickle.EMPTY_TUPLE[0]: lambda u: u._stack.append(()),
    pickle.TUPLE[0]: RestrictedUnpickler._tuple,
    pickle.TUPLE1[0]: lambda u: u._tuple_n(1),
    pickle.TUPLE2[0]: lambda u: u._tuple_n(2),
    pickle.TUPLE3[0]: lambda u: u._tuple_n(3),
    pickle.EMPTY_LIST[0]: lambda u: u._stack.append([]),
    pickle.APPEND[0]: RestrictedUnpickler._append,
    pickle.APPENDS[0]: RestrictedUnpickler._appends,
    pickle.EMPTY_DICT[0]: lambda u: u._stack.append({}),
    pickle.SETITEM[0]: RestrictedUnpickler._setitem,
    pickle.SETITEMS[0]: RestrictedUnpickler._setitems,
    pickle.GLOBAL[0]: RestrictedUnpickler._global,
    pickle.STACK_GLOBAL[0]: RestrictedUnpickler._stack_global,
    pickle.REDUCE[0]: RestrictedUnpickler._reduce,
    pickle.BUILD[0]: RestrictedUnpickler._build,
    pickle.BINPERSID[0]: RestrictedUnpickler._persid,
    pickle.BINPUT[0]: lambda u: u._memo_put(u._read(1)[0]),
    pickle.LONG_BINPUT[0]: lambda u: u._memo_put(u._unpack("<I")),
    pickle.MEMOIZE[0]: lambda u: u._memo_put(len(u._memo)),
    pickle.BINGET[0]: lambda u: u._memo_get(u._read(1)[0]),
    pickle.LONG_BINGET[0]: lambda u: u._memo_get(u._unpack("<I")),
}
