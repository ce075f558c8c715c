# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`ModelOutput`: the dataclass models return, readable by attribute, key and index.

As in Hugging Face transformers, fields that are None are left out of the mapping and
of `to_tuple()`, so `outputs[0]` is the first field that was actually produced (the loss
when labels were given, the logits otherwise).
"""
from collections import OrderedDict
from dataclasses import fields


class ModelOutput(OrderedDict):
    """Base class of model outputs; subclasses are declared with @dataclass."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)

    def __post_init__(self):
        for field in fields(self):
            value = getattr(self, field.name)
            if value is not None:
                super().__setitem__(field.name, value)

    def __delitem__(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``__delitem__`` on a {self.__class__.__name__} instance.")

    def setdefault(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``setdefault`` on a {self.__class__.__name__} instance.")

    def pop(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``pop`` on a {self.__class__.__name__} instance.")

    def update(self, *args, **kwargs):
        raise RuntimeError(f"You cannot use ``update`` on a {self.__class__.__name__} instance.")

    def __getitem__(self, key):
        if isinstance(key, str):
            return dict(self.items())[key]
        return self.to_tuple()[key]

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __reduce__(self):
        args = tuple(getattr(self, field.name) for field in fields(self))
        return self.__class__, args

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


def is_flash_attention_requested(config=None, requested_attention_implementation=None):
    """Whether a flash-attention flavour is asked for, by a config or by name (not both)."""
    if config is not None and requested_attention_implementation is not None:
        raise ValueError(
            "Requested attention implementation is ambiguous: pass either the config or the name of the attention "
            "implementation, not both."
        )
    name = config._attn_implementation if config is not None else requested_attention_implementation
    return name is not None and "flash" in name
