# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Module`: the base class of layers and models, with torch.nn.Module's contract.

Parameters, buffers and submodules assigned as attributes are stored in the dicts
`_parameters`, `_buffers` and `_modules` (the names Hugging Face code reaches into), and
found again by `__getattr__`, which Python only calls when normal lookup fails, so plain
attributes stay fast. Calling a module runs its forward hooks around `forward`; with no
hooks registered the call goes straight to `forward`.
"""
import functools
import itertools
import weakref
from collections import OrderedDict, namedtuple

from ... import _dtype
from ..._device import as_device
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.function import Function
from ..parameter import Buffer, Parameter


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in (None, "builtins") else f"{module}.{cls.__qualname__}"


def _addindent(text, spaces):
    """Indent every line but the first (how torch nests child reprs)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * spaces + line for line in lines)


_structure_version = [0]


def structure_version():
    """A count that moves whenever any module's training flag, forward (pre-)hooks, children,
    parameters or buffers change (an assignment, not a change of values in place). A
    compiled module guards on all of them; this number tells it that none has changed
    without walking its hundreds of submodules on every call."""
    return _structure_version[0]


class _TrackedDict(OrderedDict):
    """A module's parameters, buffers, children and forward hooks: every change moves
    structure_version."""

    def __setitem__(self, key, value):
        _structure_version[0] += 1
        super().__setitem__(key, value)

    def __delitem__(self, key):
        _structure_version[0] += 1
        super().__delitem__(key)

    def __ior__(self, other):
        self.update(other)
        return self

    def pop(self, *args):
        _structure_version[0] += 1
        return super().pop(*args)

    def popitem(self, last=True):
        _structure_version[0] += 1
        return super().popitem(last)

    def clear(self):
        _structure_version[0] += 1
        super().clear()


# A module's _TrackedDicts; their replacement, like the training flag's, moves structure_version.
_TRACKED_DICTS = ("_parameters", "_buffers", "_modules", "_forward_pre_hooks", "_forward_hooks")
_TRACKED = frozenset(("training",) + _TRACKED_DICTS)


class RemovableHandle:
    """Returned by the register_*_hook methods; `remove()` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks_dict, *extra_dicts):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        self.extra_dicts_ref = tuple(weakref.ref(d) for d in extra_dicts)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dicts_ref:
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: keys the module lacked in the dict, and keys it did not use."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _BackwardHookIdentity(Function):
    """Identity on a group of tensors whose backward hands their gradients to a callback.

    Placed on a module's outputs it sees grad_output; placed on its inputs it sees
    grad_input. The callback may return replacement gradients.
    """

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        ctx.set_materialize_grads(False)
        return tuple(t._data for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        replaced = ctx.callback(grads)
        return (None,) + tuple(replaced if replaced is not None else grads)


class _BackwardHooks:
    """One forward call's link between grad_output (seen first) and grad_input."""

    def __init__(self, module):
        self.module = module
        self.grad_output = None
        self.n_inputs = 0

    def _on_grad_output(self, grads):
        for hook in self.module._backward_pre_hooks.values():
            result = hook(self.module, grads)
            if result is not None:
                grads = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        self.grad_output = grads
        if self.n_inputs == 0:  # no input needs a gradient: the hooks see grad_input as Nones
            self._run_hooks((None,))
        return grads

    def _run_hooks(self, grad_input):
        for hook in self.module._backward_hooks.values():
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        return grad_input

    def wrap_inputs(self, args):
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        self.n_inputs = len(positions)
        if not positions or not grad_mode.is_grad_enabled():
            return args
        wrapped = _BackwardHookIdentity.apply(self._run_hooks, *(args[i] for i in positions))
        args = list(args)
        for i, t in zip(positions, wrapped):
            args[i] = t
        return tuple(args)

    def wrap_outputs(self, result):
        single = isinstance(result, Tensor)
        outputs = (result,) if single else result
        if not isinstance(outputs, tuple) or not grad_mode.is_grad_enabled():
            return result
        positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor) and o.requires_grad]
        if not positions:
            return result
        wrapped = _BackwardHookIdentity.apply(self._on_grad_output, *(outputs[i] for i in positions))
        outputs = list(outputs)
        for i, t in zip(positions, wrapped):
            outputs[i] = t
        return outputs[0] if single else tuple(outputs)


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class Module:
    """Base class for all neural network modules; subclasses define `forward`."""

    training: bool
    _version = 1
    call_super_init = False
    dump_patches = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected argument: Module.__init__ takes no arguments"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", _TrackedDict())
        setattr_(self, "_buffers", _TrackedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", _TrackedDict())
        setattr_(self, "_forward_pre_hooks", _TrackedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks", _TrackedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # --- registration -----------------------------------------------------------------

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None required)"
            )
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    # --- attribute protocol -----------------------------------------------------------

    def __getattr__(self, name):
        # Only reached when normal lookup fails: parameters, buffers and submodules.
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, d.get("_buffers"), d.get("_modules"), d.get("_non_persistent_buffers_set"))
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, params, d.get("_buffers"), d.get("_non_persistent_buffers_set"))
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.nn.Buffer, torch.Tensor or None "
                    "expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            if name not in (buffers or {}):
                self._remove_from(name, d, params, modules, None)
            self.register_buffer(name, value, persistent)
            return
        if name in _TRACKED:
            _structure_version[0] += 1
            if isinstance(value, dict) and type(value) is not _TrackedDict:
                value = _TrackedDict(value)     # a replacement dict is tracked like the original
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *containers):
        for container in containers:
            if container is None:
                continue
            if isinstance(container, set):
                container.discard(name)
            elif name in container:
                del container[name]

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        module_attrs = dir(self.__class__)
        attrs = list(self.__dict__.keys())
        keys = module_attrs + attrs + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        defaults = {
            "_forward_pre_hooks": _TrackedDict, "_forward_pre_hooks_with_kwargs": OrderedDict,
            "_forward_hooks": _TrackedDict, "_forward_hooks_with_kwargs": OrderedDict,
            "_forward_hooks_always_called": OrderedDict, "_backward_pre_hooks": OrderedDict,
            "_backward_hooks": OrderedDict, "_state_dict_hooks": OrderedDict,
            "_state_dict_pre_hooks": OrderedDict, "_load_state_dict_pre_hooks": OrderedDict,
            "_load_state_dict_post_hooks": OrderedDict, "_non_persistent_buffers_set": set,
        }
        for key, factory in defaults.items():
            if key not in self.__dict__:
                self.__dict__[key] = factory()
        for key in _TRACKED_DICTS:
            if type(self.__dict__[key]) is not _TrackedDict:     # pickled before these were tracked
                self.__dict__[key] = _TrackedDict(self.__dict__[key])
        _structure_version[0] += 1

    # --- calling ----------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    _call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        called_always = set()
        try:
            for hook_id, hook in self._forward_pre_hooks.items():
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {result}."
                            )
                        args, kwargs = result
                else:
                    result = hook(self, args)
                    if result is not None:
                        args = result if isinstance(result, tuple) else (result,)
            backward_hooks = None
            if self._backward_hooks or self._backward_pre_hooks:
                backward_hooks = _BackwardHooks(self)
                args = backward_hooks.wrap_inputs(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called:
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    hook_result = hook(self, args, kwargs, result)
                else:
                    hook_result = hook(self, args, result)
                if hook_result is not None:
                    result = hook_result
            if backward_hooks is not None:
                result = backward_hooks.wrap_outputs(result)
            return result
        except Exception:
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called_always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, None)
                        else:
                            hook(self, args, None)
                    except Exception:  # the forward's own error is the one to report
                        pass
            raise

    # --- hooks ------------------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) -> None | new args; with_kwargs: hook(module, args, kwargs) -> None | (args, kwargs)."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """hook(module, args, output) -> None | new output (with_kwargs: (module, args, kwargs, output))."""
        handle = RemovableHandle(self._forward_hooks, self._forward_hooks_with_kwargs,
                                 self._forward_hooks_always_called)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None | new grad_output, run before the module's backward."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None | new grad_input, once input gradients exist."""
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) runs before this module's state_dict entries are written."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) -> None | replacement state_dict."""
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """Old form: hook(state_dict, prefix, ...), or hook(module, state_dict, ...) with_module."""
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) may edit the missing/unexpected key lists in place."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # --- traversal --------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [
            (prefix, self)]
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or (remove_duplicate and id(value) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(value))
                yield (module_prefix + ("." if module_prefix else "") + name), value

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def get_submodule(self, target):
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, param_name):
            raise AttributeError(module._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(module, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, buffer_name):
            raise AttributeError(module._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in module._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(module, buffer_name)

    # --- state dict -------------------------------------------------------------------

    def get_extra_state(self):
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. Please file an issue."
        )

    def set_extra_state(self, state):
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. Please file an issue."
        )

    def _has_extra_state(self):
        return type(self).get_extra_state is not Module.get_extra_state

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if self._has_extra_state():
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of parameters and persistent buffers keyed by dotted path."""
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Copy this module's own entries (not its children's) from state_dict.

        Subclasses override this to rename or convert old checkpoint keys before loading.
        """
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like object '
                    f"from checkpoint but received {type(input_param)}"
                )
                continue
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {input_param.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        self._assign_loaded(name, param, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as ex:  # reported like torch: collected, then raised together
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{param.shape} and whose dimensions in the checkpoint are {input_param.shape}, an "
                    f"exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_extra_state():
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                parts = key[len(prefix):].split(".", 1)
                if len(parts) > 1:
                    if parts[0] not in self._modules:
                        unexpected_keys.append(key)
                elif parts[0] not in local_state:
                    unexpected_keys.append(key)

    def _assign_loaded(self, name, current, loaded):
        """load_state_dict(assign=True): keep the checkpoint tensor itself, with the module's grad flag."""
        if name in self._parameters:
            self._parameters[name] = Parameter(loaded.detach(), requires_grad=current.requires_grad)
        else:
            self._buffers[name] = loaded.detach()

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from state_dict; report or raise on missing/unexpected keys."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise RuntimeError("load_state_dict post hooks must return None (edit the keys in place)")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # --- modes and gradients ----------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                grad = p.grad.detach()
                with grad_mode.no_grad():
                    grad.zero_()
                p.grad = grad

    def apply(self, fn):
        """Call fn on every submodule (children first) and then on self; used for weight init."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- conversion -------------------------------------------------------------------

    def _apply(self, fn, recurse=True):
        """Convert every parameter and buffer with fn.

        Parameters change in place (their `.data` is swapped), so optimizers and tied
        weights keep pointing at the same Parameter objects, as in torch.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with grad_mode.no_grad():
                converted = fn(param)
            param.data = converted
            if param.grad is not None:
                with grad_mode.no_grad():
                    param.grad = fn(param.grad).detach()
        for key, buf in self._buffers.items():
            if buf is not None:
                with grad_mode.no_grad():
                    self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(tensor); dtype changes floating tensors only."""
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            elif isinstance(arg, _dtype.dtype):
                dtype = arg
            elif isinstance(arg, bool):
                continue  # non_blocking given positionally
            else:
                device = arg
        if dtype is not None:
            dtype = _dtype.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
        device = as_device(device)

        def convert(t):
            if dtype is not None and t.is_floating_point():
                return t.to(device=device, dtype=dtype)
            return t.to(device=device) if device is not None else t

        return self._apply(convert)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def to_empty(self, *, device, recurse=True):
        """Give every parameter and buffer new, uninitialised memory of its shape and dtype on
        `device`: the way a module built on the meta device gets storage (then initialise it,
        or load a state dict). Parameters stay the same objects."""
        from ... import ops

        return self._apply(lambda t: ops.empty_like(t, device=device), recurse=recurse)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.to(dst_type))

    def _cast_floating(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floating(_dtype.float32)

    def double(self):
        return self._cast_floating(_dtype.float64)

    def half(self):
        return self._cast_floating(_dtype.float16)

    def bfloat16(self):
        return self._cast_floating(_dtype.bfloat16)

    # --- printing ---------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The module's own settings, shown inside its repr; layers override it."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
