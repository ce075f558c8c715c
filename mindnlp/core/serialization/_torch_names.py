# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The names torch's checkpoint format uses for storage types and dtypes."""
from .. import _dtype

# torch.<Name>Storage -> the element dtype of the storage.
STORAGE_DTYPES = {
    "FloatStorage": _dtype.float32,
    "DoubleStorage": _dtype.float64,
    "HalfStorage": _dtype.float16,
    "BFloat16Storage": _dtype.bfloat16,
    "LongStorage": _dtype.int64,
    "IntStorage": _dtype.int32,
    "ShortStorage": _dtype.int16,
    "CharStorage": _dtype.int8,
    "ByteStorage": _dtype.uint8,
    "BoolStorage": _dtype.bool_,
}
STORAGE_NAMES = {dtype: name for name, dtype in STORAGE_DTYPES.items()}

# torch.<name> dtype globals, aliases included (torch.float is torch.float32).
DTYPES = {d.name: d for d in _dtype.ALL_DTYPES}
DTYPES.update(float=_dtype.float32, double=_dtype.float64, half=_dtype.float16, long=_dtype.int64,
              int=_dtype.int32, short=_dtype.int16)

# torch dtypes that exist but have no mindnlp.core counterpart: named in errors.
UNSUPPORTED_DTYPES = {"complex32", "complex64", "complex128", "cfloat", "cdouble", "uint16", "uint32", "uint64",
                      "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "qint8", "quint8",
                      "qint32", "bits8", "bits16"}
