# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""default_collate / default_convert: turn samples into batched tensors, torch's rules.

Tensors and NumPy arrays are stacked along a new first dim; Python floats become a float64
tensor, ints int64, bools bool; strings stay a list; dicts, namedtuples and sequences are
collated field by field (tuples come back as lists, as in torch).
"""
import collections.abc
import copy

import numpy as np

from ..._tensor import Tensor

_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _as_tensor(value):
    from ...ops.creation import as_tensor

    return as_tensor(value)


def default_collate(batch):
    """Merge a list of samples into a batch."""
    from ...ops.creation import tensor
    from ...ops.shape import stack

    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        if elem.dtype.kind in "USO":
            raise TypeError(_ERROR.format(elem.dtype))
        if isinstance(elem, np.ndarray) and elem.ndim:
            return stack([_as_tensor(np.ascontiguousarray(b)) for b in batch], 0)
        return _as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(batch, dtype="float64")
    if isinstance(elem, int):  # bool included: a list of bools gives a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(collated)
            return clone
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(field) for field in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """Turn NumPy arrays and scalars into tensors inside a sample, without batching."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        if data.dtype.kind in "USO":
            return data
        return _as_tensor(np.ascontiguousarray(data) if isinstance(data, np.ndarray) else np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(value) for key, value in data.items()}
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(converted)
            return clone
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
