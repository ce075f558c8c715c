# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The meta device: tensors that have a shape and a dtype and no data.

A meta tensor's array is a `MetaArray`. The ops are written once against NumPy, and NumPy
hands every ufunc and array function called on a MetaArray to it (`__array_ufunc__`,
`__array_function__`), so an op on meta tensors runs its ordinary code and yields meta
results with the shapes and dtypes NumPy computes: elementwise ufuncs and matmul from their
operands' shapes and dtypes alone, everything else by running the NumPy function on
zero-stride stand-ins of the right shape and dtype (the memory of its result is taken for
that moment and dropped).

Nothing ever reads values that do not exist: converting a MetaArray to a NumPy array,
`item()`, `bool()`, and the functions whose result shape depends on the values (nonzero,
unique, boolean masks, ...) raise. Writes into a MetaArray are checked for shape and then
do nothing. Meta tensors keep no layout: each reports the contiguous strides of its shape.
"""
import numpy as np
import scipy.special
from numpy.lib.mixins import NDArrayOperatorsMixin

from .._device import device

NO_DATA = "Cannot copy out of meta tensor; no data!"


def _no_values(what):
    return NotImplementedError(f"{what} needs the values of a meta tensor, which has none")


class _Flags:
    """The few ndarray flags code asks for; a meta array is laid out contiguously."""

    def __init__(self, ndim):
        self.c_contiguous = True
        self.f_contiguous = ndim <= 1
        self.writeable = True
        self.owndata = True

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "WRITEABLE": self.writeable, "OWNDATA": self.owndata}[name.upper()]


class _Storage:
    """Identity of the storage meta arrays share: views of one array share one."""

    __slots__ = ()


class MetaArray(NDArrayOperatorsMixin):
    """An array's shape and dtype, with NumPy's array API and no data."""

    __slots__ = ("shape", "dtype", "_storage")

    def __init__(self, shape, dtype, storage=None):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = np.dtype(dtype)
        self._storage = storage if storage is not None else _Storage()

    # --- metadata ---
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def strides(self):
        strides, step = [], self.dtype.itemsize
        for n in reversed(self.shape):
            strides.append(step)
            step *= max(n, 1)
        return tuple(reversed(strides))

    @property
    def flags(self):
        return _Flags(self.ndim)

    @property
    def base(self):
        return None

    @property
    def T(self):
        return self.transpose()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    # --- no values to give ---
    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def item(self, *args):
        raise _no_values("item()")

    def tolist(self):
        raise _no_values("tolist()")

    def tobytes(self, order="C"):
        raise _no_values("tobytes()")

    def __bool__(self):
        raise _no_values("bool()")

    def __float__(self):
        raise _no_values("float()")

    def __int__(self):
        raise _no_values("int()")

    def __index__(self):
        raise _no_values("an index")

    def __complex__(self):
        raise _no_values("complex()")

    # --- methods that make new arrays or write ---
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self.dtype:
            return self
        return MetaArray(self.shape, dtype)

    def copy(self, order="C"):
        return MetaArray(self.shape, self.dtype)

    def fill(self, value):
        """Writes nothing: there is nowhere to write."""

    def view(self, dtype=None, type=None):
        if dtype is None or np.dtype(dtype) == self.dtype:
            return MetaArray(self.shape, self.dtype, self._storage)
        dtype = np.dtype(dtype)
        if not self.shape or (self.shape[-1] * self.dtype.itemsize) % dtype.itemsize:
            raise ValueError("When changing to a different dtype, the last axis must be divisible by the size ratio")
        last = self.shape[-1] * self.dtype.itemsize // dtype.itemsize
        return MetaArray(self.shape[:-1] + (last,), dtype, self._storage)

    def __getitem__(self, key):
        _refuse_meta_masks(key)
        return _call(_Probe.getitem, (self, key), {})

    def __setitem__(self, key, value):
        """Writes nothing, after checking that value fits the selection as NumPy would."""
        _refuse_meta_masks(key)
        target = _stand_in(self)[_stand_ins(key, {})]
        shape = list(_meta_shape(value))
        while len(shape) > target.ndim and shape[0] == 1:
            shape.pop(0)
        np.broadcast_to(np.broadcast_to(np.zeros((), np.int8), shape), target.shape)

    def __getattr__(self, name):
        """The other ndarray methods (reshape, sum, transpose, ...), run on a stand-in."""
        if name.startswith("__") or name in _NO_VALUE_ATTRIBUTES:
            raise AttributeError(name)
        probe = _stand_in(self)
        storages = {id(probe): (probe, self._storage)}
        attribute = getattr(probe, name)
        if not callable(attribute):
            return _from_result(attribute, storages)

        def method(*args, **kwargs):
            return _call(attribute, args, kwargs, storages)

        return method

    # --- the NumPy protocols ---
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if method == "at":
            if not isinstance(inputs[0], MetaArray):
                raise NotImplementedError(NO_DATA)
            return None
        if method == "__call__" and ufunc.signature is None:
            result = _elementwise(ufunc, inputs, kwargs)
        elif ufunc is np.matmul and method == "__call__":
            result = _matmul(inputs, kwargs)
        else:
            result = _call(getattr(ufunc, method), inputs, kwargs)
        return _into_out(result, out) if out is not None else result

    def __array_function__(self, func, types, args, kwargs):
        if func in _VALUE_DEPENDENT or _VALUE_ARGUMENT.get(func, lambda *a, **k: False)(*args, **kwargs):
            raise _no_values(f"numpy.{func.__name__}")
        if func in _WRITERS:
            if not isinstance(args[0], MetaArray):
                raise NotImplementedError(NO_DATA)
            return None
        if func in (np.may_share_memory, np.shares_memory):
            a, b = args[:2]
            return isinstance(a, MetaArray) and isinstance(b, MetaArray) and a._storage is b._storage
        if func in _LIKE:
            prototype = args[0]
            dtype = kwargs.get("dtype") or (args[2] if func is np.full_like and len(args) > 2 else None)
            shape = kwargs.get("shape") or prototype.shape
            return MetaArray(shape, dtype if dtype is not None else prototype.dtype)
        out = kwargs.pop("out", None)
        result = _call(func, args, kwargs)
        return _into_out(result, out) if out is not None else result


# Attributes that would hand out memory or values (the stand-in's, which are not the tensor's).
_NO_VALUE_ATTRIBUTES = frozenset({"ctypes", "data", "flat", "tofile", "dump", "dumps", "itemset", "nonzero",
                                  "setfield", "getfield", "byteswap", "put", "resize", "sort", "partition", "setflags",
                                  "compress", "repeat"})

# Functions whose result (its shape, or a Python value) depends on the values of their input.
_VALUE_DEPENDENT = {np.nonzero, np.argwhere, np.flatnonzero, np.unique, np.extract, np.count_nonzero, np.bincount,
                    np.histogram, np.histogram_bin_edges, np.array_equal, np.array_equiv, np.allclose, np.trim_zeros,
                    np.setdiff1d, np.intersect1d, np.union1d, np.setxor1d, np.unique_values, np.unique_counts,
                    np.unique_inverse, np.unique_all}
# ... and those whose result shape depends on the values of one argument.
_VALUE_ARGUMENT = {
    np.repeat: lambda a, repeats=None, *rest, **kw: isinstance(kw.get("repeats", repeats), MetaArray),
    np.compress: lambda condition, *rest, **kw: isinstance(condition, MetaArray),
    np.delete: lambda arr, obj=None, *rest, **kw: isinstance(kw.get("obj", obj), MetaArray),
    np.insert: lambda arr, obj=None, *rest, **kw: isinstance(kw.get("obj", obj), MetaArray),
}
_WRITERS = {np.copyto, np.put_along_axis, np.putmask, np.place, np.put, np.fill_diagonal}
_LIKE = {np.empty_like, np.zeros_like, np.ones_like, np.full_like}


class _Probe:
    @staticmethod
    def getitem(array, key):
        return array[key]


def _refuse_meta_masks(key):
    for part in key if isinstance(key, tuple) else (key,):
        if isinstance(part, MetaArray) and part.dtype == np.bool_:
            raise _no_values("indexing with a boolean mask")


def _stand_in(array):
    """A read-only array of the meta array's shape and dtype that takes one element of memory."""
    return np.broadcast_to(np.zeros((), array.dtype), array.shape)


def _stand_ins(value, storages):
    """value with each MetaArray (also inside lists, tuples and dicts) replaced by a stand-in;
    `storages` maps each stand-in's id to the storage of the array it stands for."""
    if isinstance(value, MetaArray):
        probe = _stand_in(value)
        storages[id(probe)] = (probe, value._storage)
        return probe
    if isinstance(value, (list, tuple)):
        return type(value)(_stand_ins(v, storages) for v in value)
    if isinstance(value, dict):
        return {k: _stand_ins(v, storages) for k, v in value.items()}
    return value


def _from_result(value, storages):
    """NumPy results back to meta: arrays and scalars become MetaArrays (views keep the storage
    of the array they view); other values (shapes, dtypes, flags) pass through."""
    if isinstance(value, np.ndarray):
        for probe, storage in storages.values():
            if np.may_share_memory(value, probe):
                return MetaArray(value.shape, value.dtype, storage)
        return MetaArray(value.shape, value.dtype)
    if isinstance(value, np.generic):
        return MetaArray((), value.dtype)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (np.ndarray, np.generic)) for v in value):
        converted = [_from_result(v, storages) for v in value]
        if isinstance(value, list):
            return converted
        return type(value)(*converted) if hasattr(value, "_fields") else tuple(converted)
    return value


def _call(func, args, kwargs, storages=None):
    """func on stand-ins of the meta arrays among args, its array results made meta."""
    storages = {} if storages is None else storages
    args = _stand_ins(args, storages)
    kwargs = _stand_ins(kwargs, storages)
    with np.errstate(all="ignore"):
        result = func(*args, **kwargs)
    return _from_result(result, storages)


def _meta_shape(value):
    if isinstance(value, (MetaArray, np.ndarray)):
        return value.shape
    return np.shape(value)


def _elementwise(ufunc, inputs, kwargs):
    """An elementwise ufunc's result from its operands' shapes and dtypes (nothing computed on
    full-size arrays): the dtype comes from the ufunc applied to 0-d stand-ins."""
    shape = np.broadcast_shapes(*(_meta_shape(x) for x in inputs))
    tiny = [np.zeros((), x.dtype) if isinstance(x, (MetaArray, np.ndarray)) else x for x in inputs]
    kwargs = {k: v for k, v in kwargs.items() if k != "where"}
    with np.errstate(all="ignore"):
        result = ufunc(*tiny, **kwargs)
    if isinstance(result, tuple):
        return tuple(MetaArray(shape, np.asarray(r).dtype) for r in result)
    return MetaArray(shape, np.asarray(result).dtype)


def _matmul(inputs, kwargs):
    """matmul's result shape (NumPy's rules for 1-D operands and batch broadcasting) and dtype."""
    a, b = (_meta_shape(x) for x in inputs)
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is different from {a2[-1]})")
    shape = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(b) == 1:
        shape = shape[:-1]
    tiny = [np.zeros((1, 1), x.dtype) for x in inputs]
    return MetaArray(shape, np.matmul(*tiny, **kwargs).dtype)


def _into_out(result, out):
    """A result 'written' into the out= arrays: meta targets are checked and returned; a real
    target cannot take values that do not exist."""
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    for target, value in zip(outs, results):
        if not isinstance(target, MetaArray):
            raise NotImplementedError(NO_DATA)
        np.broadcast_shapes(value.shape, target.shape)
    return out if isinstance(out, tuple) and len(out) > 1 else outs[0]


class _MetaNumpy:
    """NumPy as the meta backend's array module: array creation makes MetaArrays; every other
    name is NumPy's own (whose functions hand MetaArray operands to MetaArray)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(shape, dtype=float, **kwargs):
        return MetaArray(_as_shape(shape), np.dtype(dtype))

    zeros = ones = empty

    @staticmethod
    def full(shape, fill_value, dtype=None, **kwargs):
        dtype = np.dtype(dtype) if dtype is not None else np.asarray(fill_value).dtype
        return MetaArray(_as_shape(shape), dtype)

    @staticmethod
    def asarray(value, dtype=None, **kwargs):
        if isinstance(value, MetaArray):
            return value if dtype is None else value.astype(dtype, copy=False)
        return MetaArray(np.shape(value), np.asarray(value, dtype=dtype).dtype)

    @staticmethod
    def array(value, dtype=None, copy=True, **kwargs):
        if isinstance(value, MetaArray):
            return value.astype(value.dtype if dtype is None else dtype, copy=copy is not False)
        return MetaArray(np.shape(value), np.asarray(value, dtype=dtype).dtype)

    asanyarray = ascontiguousarray = asarray


def _as_shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)


class MetaBackend:
    type = "meta"
    xp = _MetaNumpy()
    special = scipy.special  # its functions are ufuncs: MetaArray operands come to MetaArray
    device = device("meta")

    def from_host(self, array, index=None):
        return MetaArray(array.shape, array.dtype)

    def to_host(self, array):
        raise NotImplementedError(NO_DATA)

    def synchronize(self):
        pass

    def fused(self, name, array, work=None):
        """No kernels: every op runs its composed form, which MetaArray follows."""
        return None

    def run_each(self, task, n_items):
        """task(i) for every i in range(n_items), one after the other."""
        for i in range(n_items):
            task(i)
