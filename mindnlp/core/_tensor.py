# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Tensor`: a backend array with a dtype, a device and autograd bookkeeping.

The array (`_data`) is a NumPy array on cpu or a CuPy array on cuda. Operators and most
methods are bound from `core.ops` by `_tensor_methods`, so each op is written once as a
function and reachable both as `core.add(a, b)` and `a.add(b)` / `a + b`.

`_version` is a one-element list shared by a tensor and its views: in-place writes bump it
so that backward can detect a tensor it saved being modified afterwards.
"""
import numpy as np

from . import _dtype
from ._device import CPU, as_device


class Size(tuple):
    """torch.Size: a tuple of ints with numel()."""

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"core.Size({list(self)})"


def _device_of(array):
    if type(array) is np.ndarray:
        return CPU
    from .backends import backend_for_array

    return backend_for_array(array).device


# The graph capture in progress (core.jit.capture.Tracer), or None; set by the tracer.
_tracer = None


def _wrap(array, requires_grad=False, version=None):
    """Make a Tensor around an array without copying (the fast internal constructor)."""
    if not isinstance(array, np.ndarray) and isinstance(array, np.generic):
        array = np.asarray(array)
    t = Tensor.__new__(Tensor)
    t._data = array
    t._device = _device_of(array)
    t.requires_grad = requires_grad
    t.grad = None
    t.grad_fn = None
    t._output_nr = 0
    t._version = version if version is not None else [0]
    t._hooks = None
    if _tracer is not None:
        _tracer.on_wrap(t)
    return t


class Tensor:
    __slots__ = ("_data", "_device", "requires_grad", "grad", "grad_fn", "_output_nr", "_version", "_hooks",
                 "__weakref__", "__dict__")

    def __init__(self, *args, dtype=None, device=None):
        """`core.Tensor(data)` copies data as default-float; `core.Tensor(2, 3)` allocates."""
        from . import ops

        # The legacy constructor ignores the default device, as torch's does.
        if device is None and not (len(args) == 1 and isinstance(args[0], Tensor)):
            device = CPU
        if not args:
            args = (0,)  # Tensor() is empty, as torch's
        if len(args) == 1 and not isinstance(args[0], int):
            src = ops.tensor(args[0], dtype=dtype or _dtype.get_default_dtype(), device=device)
        else:
            src = ops.empty(*args, dtype=dtype, device=device)
        _init_from(self, src)

    # --- metadata ---
    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def device(self):
        return self._device

    @property
    def shape(self):
        return Size(self._data.shape)

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def is_cuda(self):
        return self._device.type == "cuda"

    @property
    def is_cpu(self):
        return self._device.type == "cpu"

    @property
    def is_meta(self):
        return self._device.type == "meta"

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def itemsize(self):
        return self._data.dtype.itemsize

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _base(self):
        return None

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[dim]

    def dim(self):
        return self._data.ndim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def element_size(self):
        return self._data.dtype.itemsize

    def stride(self, dim=None):
        strides = tuple(s // self._data.dtype.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self, memory_format=None):
        return bool(self._data.flags.c_contiguous)

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return False

    def is_signed(self):
        return self.dtype.is_signed

    def data_ptr(self):
        if self._device.type == "cpu":
            return self._data.__array_interface__["data"][0]
        if self._device.type == "meta":
            return 0
        return self._data.data.ptr

    def get_device(self):
        return -1 if self._device.type == "cpu" else (self._device.index or 0)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __contains__(self, element):
        """`x in t`: whether any element of t equals x (a number, or a tensor broadcast against t), as torch."""
        if isinstance(element, (Tensor, int, float, bool)):
            return bool((self == element).any())
        raise RuntimeError(
            f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}."
        )

    def __hash__(self):
        return id(self)

    # --- conversion to Python / NumPy ---
    def numpy(self, force=False):
        if _tracer is not None:
            _tracer.escape(self, "Tensor.numpy()")
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                    "tensor to host memory first."
                )
            return self.cpu()._data
        return self._data

    def __array__(self, dtype=None, copy=None):
        if _tracer is not None:
            _tracer.escape(self, "conversion to a NumPy array")
        arr = self.detach().cpu()._data
        return arr.astype(dtype) if dtype is not None else arr

    def item(self):
        if _tracer is not None:
            _tracer.value_guard(self)
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._host().reshape(-1)[0].item()

    def tolist(self):
        if _tracer is not None:
            _tracer.escape(self, "Tensor.tolist()")
        host = self._host()
        if host.dtype.name == "bfloat16" or host.dtype == np.float16:
            host = host.astype(np.float32)
        return host.tolist()

    def _host(self):
        if self._device.type == "cpu":
            return self._data
        from .backends import get_backend

        return get_backend(self._device).to_host(self._data)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __int__(self):
        return int(self.item())

    def __float__(self):
        return float(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return repr(self) if not spec else format(str(self), spec)

    # --- autograd ---
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self):
        return _wrap(self._data, version=self._version)

    def detach_(self):
        self.grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not (self._data.dtype.kind == "f" or self._data.dtype.name == "bfloat16"):
            raise RuntimeError(f"only Tensors of floating point dtype can require gradients (got {self.dtype})")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables")
        self.requires_grad = requires_grad
        return self

    def retain_grad(self):
        import weakref

        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None:
            return
        node = self.grad_fn
        if node._retained is None:
            node._retained = {}
        node._retained[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        node = self.grad_fn
        return bool(node is not None and node._retained and self._output_nr in node._retained)

    def register_hook(self, hook):
        """Call hook(grad) when this tensor's gradient is computed; its return replaces grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            self.grad_fn.register_hook(self._output_nr, hook)
            hooks = self.grad_fn._pre_hooks[self._output_nr]
        else:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
            hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) on a leaf right after backward has accumulated its gradient into
        `.grad` (while the rest of backward may still be running)."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = self.__dict__.setdefault("_post_accumulate_grad_hooks", [])
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    @property
    def data(self):
        return _wrap(self._data)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Tensor.data must be set to a Tensor, not {type(value).__name__}")
        self._data = value._data
        self._device = value._device

    # --- copies and conversion ---
    def to(self, *args, **kwargs):
        """to(dtype), to(device), to(device, dtype), to(tensor), with dtype=/device=/copy= keywords."""
        from . import ops

        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, Tensor):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, (_dtype.dtype, np.dtype)) or (isinstance(arg, type) and issubclass(arg, np.generic)) \
                    or (isinstance(arg, str) and _is_dtype_name(arg)):
                dtype = arg
            elif isinstance(arg, (str, int)) or hasattr(arg, "type"):
                device = arg
            elif arg is not None:
                dtype = arg
        out = self
        if device is not None:
            device = as_device(device)
            if device != self._device:
                out = ops.to_device(out, device)
        if dtype is not None:
            dtype = _dtype.as_dtype(dtype)
            if dtype.np_dtype != out._data.dtype:
                out = ops.cast(out, dtype)
        if copy and out is self:
            out = ops.clone(self)
        return out

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device))

    def type(self, dtype=None):
        if dtype is None:
            return f"core.{_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        return self.to(dtype)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def bfloat16(self):
        return self.to(_dtype.bfloat16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def short(self):
        return self.to(_dtype.int16)

    def char(self):
        return self.to(_dtype.int8)

    def byte(self):
        return self.to(_dtype.uint8)

    def bool(self):
        return self.to(_dtype.bool_)

    def type_as(self, other):
        return self.to(other.dtype)

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user support the deepcopy protocol")
        new = _wrap(self._data.copy(), requires_grad=self.requires_grad)
        if type(self) is not Tensor:
            new = _rewrap_subclass(self, new)
        if self.grad is not None:
            new.grad = _wrap(self.grad._data.copy())
        new.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, protocol):
        return (_rebuild_tensor, (self._host(), str(self._device), self.requires_grad, type(self)))

    def __repr__(self):
        from ._printing import tensor_repr

        return tensor_repr(self)

    __str__ = __repr__


def _rewrap_subclass(template, new):
    obj = type(template).__new__(type(template))
    _init_from(obj, new)
    return obj


def _init_from(obj, src):
    obj._data = src._data
    obj._device = src._device
    obj.requires_grad = src.requires_grad
    obj.grad = None
    obj.grad_fn = None
    obj._output_nr = 0
    obj._version = src._version
    obj._hooks = None


def _rebuild_tensor(array, device, requires_grad, cls=Tensor):
    t = _wrap(array)
    if device != "cpu":
        t = t.to(device)
    if cls is not Tensor:
        t = _rewrap_subclass(cls.__new__(cls), t)
    t.requires_grad = requires_grad
    return t


def _is_dtype_name(name):
    try:
        _dtype.as_dtype(name)
        return True
    except TypeError:
        return False


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


class _RemovableHandle:
    """Returned by register_hook; `remove()` unregisters the hook."""

    def __init__(self, hooks, hook):
        self._hooks = hooks
        self._hook = hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _bind_autograd():
    """Give the autograd Function machinery direct references to Tensor and _wrap."""
    from .autograd import function

    function._Tensor = Tensor
    function._wrap = _wrap


_bind_autograd()
