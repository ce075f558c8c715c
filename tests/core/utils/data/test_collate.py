"""default_collate / default_convert against torch's recorded output (structure and dtypes)."""
import collections
import json
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.utils.data import default_collate, default_convert

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "optim")
with open(os.path.join(FIXTURES, "collate.json")) as f:
    RECORD = json.load(f)

Point = collections.namedtuple("Point", ["x", "y"])

# The same samples the fixture script collated with torch.
SAMPLES = {
    "floats": [1.5, 2.0, -3.25],
    "ints": [1, 2, 3],
    "bools": [True, False, True],
    "strings": ["a", "bb", "ccc"],
    "np_float32": [np.float32(1.5), np.float32(2.5)],
    "np_int32_scalar": [np.int32(4), np.int32(-1)],
    "np_arrays_f64": [np.arange(3, dtype=np.float64), np.ones(3)],
    "np_arrays_i32": [np.arange(4, dtype=np.int32).reshape(2, 2), np.zeros((2, 2), dtype=np.int32)],
    "tuples": [(1, 2.0, "x"), (3, 4.0, "y")],
    "lists": [[1, 2], [3, 4], [5, 6]],
    "dicts": [{"a": 1, "b": {"c": 1.0, "d": [1, 2]}}, {"a": 2, "b": {"c": 2.0, "d": [3, 4]}}],
    "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
    "mixed": [{"ids": np.array([1, 2], dtype=np.int64), "label": 0, "text": "x"},
              {"ids": np.array([3, 4], dtype=np.int64), "label": 1, "text": "y"}],
    "tensors": [core.tensor([1.0, 2.0]), core.tensor([3.0, 4.0])],
}


def describe(value):
    if isinstance(value, core.Tensor):
        values = value.tolist() if value.dtype == core.bool else value.to(core.float64).tolist()
        return {"tensor": value.dtype.name, "shape": list(value.shape), "values": values}
    if isinstance(value, Point):
        return {"namedtuple": [describe(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": {k: describe(v) for k, v in value.items()}}
    if isinstance(value, tuple):
        return {"tuple": [describe(v) for v in value]}
    if isinstance(value, list):
        return {"list": [describe(v) for v in value]}
    return {"python": value}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_default_collate_matches_torch(name):
    assert describe(default_collate(SAMPLES[name])) == RECORD[name]


def test_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_keeps_structure_without_batching():
    out = default_convert({"a": np.arange(3, dtype=np.int32), "b": (np.float32(2.0), "s"), "c": 1.5})
    assert out["a"].dtype == core.int32 and out["a"].tolist() == [0, 1, 2]
    assert isinstance(out["b"], list) and out["b"][0].dtype == core.float32 and out["b"][1] == "s"
    assert out["c"] == 1.5
