# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`dataset.with_format("mindnlp")`: Hugging Face `datasets` rows, columns and batches as core tensors.

What torch's formatter gives torch, with the same dtype rules (integers as int64, floats as
float32, strings and None left as they are), but without copying where Arrow allows it: a
numeric column of int64 or float32 without nulls, and a list column whose rows all have one
length (tokenized and padded ids), become tensors that view the table's buffers, which for a
dataset loaded from disk are memory-mapped. Tensors made that way are read-only, as the file
they map is. Ragged list columns become a list of per-row views; columns with features that
need decoding (images, audio) and every other type go through datasets' own decoding first.
`with_format("mindnlp", dtype=..., device=...)` converts every tensor (a copy when it has to).

`register()` adds the format to `datasets`; importing mindnlp arranges for it to run when
`datasets` itself is imported (mindnlp/_datasets_hook.py), so the order of imports does not
matter and mindnlp does not import `datasets` when it is not used.
"""
import numpy as np

FORMAT = "mindnlp"
_ZERO_COPY_DTYPES = (np.dtype(np.int64), np.dtype(np.float32))


def _tensor(array, dtype=None, device=None):
    from ... import ops
    from ..._tensor import _wrap

    if array.dtype.kind in "iu":
        array = array if array.dtype == np.int64 else array.astype(np.int64)
    elif array.dtype.kind == "f":
        array = array if array.dtype == np.float32 else array.astype(np.float32)
    tensor = _wrap(array) if array.dtype.kind in "iufb" else ops.tensor(array)
    if dtype is not None or device is not None:
        tensor = tensor.to(device=device, dtype=dtype)
    return tensor


def _numeric_numpy(arrow_array):
    """The Arrow array (no nulls, a numeric type) as a NumPy array: a view of its buffer when
    the type allows, else a copy (booleans are bit-packed in Arrow)."""
    return arrow_array.to_numpy(zero_copy_only=np.dtype(arrow_array.type.to_pandas_dtype()) in _ZERO_COPY_DTYPES)


def make_formatter_class():
    import pyarrow as pa
    from datasets.formatting.formatting import TensorFormatter

    def is_numeric(arrow_type):
        return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type) or pa.types.is_boolean(arrow_type)

    class MindnlpFormatter(TensorFormatter):
        """datasets' Formatter for core tensors (see the module docstring)."""

        def __init__(self, features=None, token_per_repo_id=None, dtype=None, device=None):
            super().__init__(features=features, token_per_repo_id=token_per_repo_id)
            self.dtype, self.device = dtype, device

        def _needs_decoding(self, name):
            feature = self.features.get(name) if self.features is not None else None
            return feature is not None and getattr(feature, "decode_example", None) is not None

        def _fast_column(self, column):
            """The column as tensors straight from Arrow, or None when it needs the general path."""
            if isinstance(column, pa.ChunkedArray):  # one chunk is used as it is; several are joined (a copy)
                column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
            if column.null_count:
                return None
            if is_numeric(column.type):
                return _tensor(_numeric_numpy(column), self.dtype, self.device)
            if (pa.types.is_list(column.type) or pa.types.is_large_list(column.type)) and is_numeric(
                    column.type.value_type):
                values = column.flatten()
                if values.null_count:
                    return None
                flat = _numeric_numpy(values)
                lengths = np.diff(column.offsets.to_numpy()) if len(column) else np.zeros(0, dtype=np.int64)
                if len(column) and (lengths == lengths[0]).all():
                    return _tensor(flat.reshape(len(column), int(lengths[0])), self.dtype, self.device)
                starts = np.concatenate([[0], np.cumsum(lengths)])
                return [_tensor(flat[a:b], self.dtype, self.device) for a, b in zip(starts[:-1], starts[1:])]
            return None

        def _general(self, value):
            """datasets' decoded Python/NumPy values, tensorized as torch's formatter does."""
            if isinstance(value, (str, bytes, type(None))):
                return value
            if isinstance(value, (np.str_, np.bytes_)) or isinstance(value, np.ndarray) and value.dtype.kind in "SU":
                return value.tolist()
            if isinstance(value, np.ndarray) and value.dtype != object and value.dtype.kind in "iufb":
                return _tensor(value, self.dtype, self.device)
            if isinstance(value, (np.number, np.bool_, int, float, bool)):
                return _tensor(np.asarray(value), self.dtype, self.device)
            if isinstance(value, dict):
                return {k: self._general(v) for k, v in value.items()}
            if isinstance(value, (list, tuple, np.ndarray)):
                items = [self._general(v) for v in value]
                return _stack_if_uniform(items)
            return value

        def format_batch(self, pa_table):
            batch = {}
            for name in pa_table.column_names:
                fast = None if self._needs_decoding(name) else self._fast_column(pa_table[name])
                if fast is None:
                    values = self.numpy_arrow_extractor().extract_column(pa_table.select([name]))
                    values = self.python_features_decoder.decode_column(values, name)
                    fast = self._general(values)
                batch[name] = fast
            return batch

        def format_row(self, pa_table):
            return {name: column[0] for name, column in self.format_batch(pa_table).items()}

        def format_column(self, pa_table):
            return self.format_batch(pa_table)[pa_table.column_names[0]]

    return MindnlpFormatter


def _stack_if_uniform(items):
    """One tensor for a list of tensors of one shape and dtype (as torch's formatter consolidates)."""
    from ... import ops
    from ..._tensor import Tensor

    if items and all(isinstance(t, Tensor) and t.shape == items[0].shape and t.dtype == items[0].dtype
                     for t in items):
        return ops.stack(items)
    return items


def register():
    from datasets.formatting import _register_formatter

    _register_formatter(make_formatter_class(), FORMAT)
