"""dtypes: torch's promotion table (fixture), default dtype, finfo/iinfo, creation dtypes."""
import numpy as np
import pytest

from mindnlp import core
from tests.core.torch_fixtures import load_json

PROMOTION = load_json("promotion.json")


def _dtype(name):
    return getattr(core, name)


def _pair_id(p):
    return f"{p['a']}-{p['b']}"


@pytest.mark.parametrize("pair", PROMOTION["pairs"], ids=_pair_id)
def test_pair_promotion(pair):
    a, b = _dtype(pair["a"]), _dtype(pair["b"])
    ta, tb = core.ones(2, dtype=a), core.ones(2, dtype=b)
    za, zb = core.ones((), dtype=a), core.ones((), dtype=b)
    got = {
        "promote_types": core.promote_types(a, b).name,
        "result_type": core.result_type(ta, tb).name,
        "add_tensor_tensor": (ta + tb).dtype.name,
        "add_tensor_zerodim": (ta + zb).dtype.name,
        "add_zerodim_tensor": (za + tb).dtype.name,
        "add_zerodim_zerodim": (za + zb).dtype.name,
    }
    assert got == {k: pair[k] for k in got}


@pytest.mark.parametrize("case", PROMOTION["scalars"], ids=lambda c: f"{c['a']}-{c['scalar']}")
def test_scalar_promotion(case):
    a = _dtype(case["a"])
    value = {"int": 2, "float": 2.5, "bool": True}[case["scalar"]]
    ta, za = core.ones(2, dtype=a), core.ones((), dtype=a)
    got = {
        "add": (ta + value).dtype.name,
        "radd": (value + ta).dtype.name,
        "add_zerodim": (za + value).dtype.name,
        "result_type": core.result_type(ta, value).name,
    }
    assert got == {k: case[k] for k in got}


CREATION = {
    "tensor_int_list": lambda: core.tensor([1, 2]),
    "tensor_float_list": lambda: core.tensor([1.0, 2]),
    "tensor_bool_list": lambda: core.tensor([True, False]),
    "tensor_int_scalar": lambda: core.tensor(3),
    "tensor_float_scalar": lambda: core.tensor(3.5),
    "tensor_bool_scalar": lambda: core.tensor(True),
    "tensor_np_float64": lambda: core.tensor(np.zeros(2)),
    "tensor_np_float32": lambda: core.tensor(np.zeros(2, np.float32)),
    "tensor_np_int32": lambda: core.tensor(np.zeros(2, np.int32)),
    "tensor_np_uint8": lambda: core.tensor(np.zeros(2, np.uint8)),
    "tensor_np_float64_scalar": lambda: core.tensor(np.float64(1.5)),
    "tensor_np_int32_scalar": lambda: core.tensor(np.int32(1)),
    "tensor_mixed_int_bool": lambda: core.tensor([1, True]),
    "arange_int": lambda: core.arange(5),
    "arange_float_end": lambda: core.arange(5.0),
    "arange_float_step": lambda: core.arange(0, 5, 0.5),
    "full_bool": lambda: core.full((2,), True),
    "full_int": lambda: core.full((2,), 3),
    "full_float": lambda: core.full((2,), 3.5),
    "zeros": lambda: core.zeros(2),
    "linspace": lambda: core.linspace(0, 1, 5),
    "eye": lambda: core.eye(2),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_dtype(name):
    assert CREATION[name]().dtype.name == PROMOTION["creation"][name]


def test_creation_covers_every_recorded_case():
    assert set(CREATION) == set(PROMOTION["creation"])


def test_default_dtype_get_set():
    assert core.get_default_dtype() is core.float32
    try:
        core.set_default_dtype(core.float64)
        assert core.get_default_dtype() is core.float64
        assert core.tensor([1.5]).dtype is core.float64
        assert core.zeros(2).dtype is core.float64
        assert (core.tensor([1, 2]) / 2).dtype is core.float64
        assert (core.tensor([1, 2]) * 1.5).dtype is core.float64
        assert core.tensor([1, 2]).dtype is core.int64
    finally:
        core.set_default_dtype(core.float32)
    assert core.tensor([1.5]).dtype is core.float32
    with pytest.raises(TypeError):
        core.set_default_dtype(core.int64)


@pytest.mark.parametrize("name", sorted(PROMOTION["finfo"]))
def test_finfo(name):
    info = core.finfo(_dtype(name))
    for attr, value in PROMOTION["finfo"][name].items():
        assert getattr(info, attr) == value, attr


@pytest.mark.parametrize("name", sorted(PROMOTION["iinfo"]))
def test_iinfo(name):
    info = core.iinfo(_dtype(name))
    for attr, value in PROMOTION["iinfo"][name].items():
        assert getattr(info, attr) == value, attr


def test_finfo_rejects_int_and_iinfo_rejects_float():
    with pytest.raises(TypeError):
        core.finfo(core.int32)
    with pytest.raises(TypeError):
        core.iinfo(core.float32)


def test_dtype_properties_and_aliases():
    assert core.float is core.float32 and core.double is core.float64 and core.half is core.float16
    assert core.long is core.int64 and core.int is core.int32
    assert core.bfloat16.is_floating_point and not core.int8.is_floating_point
    assert core.int8.is_signed and not core.uint8.is_signed
    assert core.float16.itemsize == 2 and core.int64.itemsize == 8
    assert core.ones(2, dtype="float16").dtype is core.float16
    assert core.ones(2).to(dtype=float).dtype is core.float32
    assert core.ones(2).to(int).dtype is core.int64


def test_dtype_pickles_to_the_same_object():
    import pickle

    assert pickle.loads(pickle.dumps(core.bfloat16)) is core.bfloat16


def test_comparison_with_an_int_beyond_the_dtype_compares_values():
    # torch wraps the int into the dtype first (int8 < 1000 compares with -24); here the
    # comparison is by value, and arithmetic wraps as torch's does (tests/fixtures/core's
    # *_wide_int cases)
    a = core.tensor([1, 100, -100], dtype=core.int8)
    assert (a < 1000).tolist() == [True, True, True]
    assert (a == 1000).tolist() == [False, False, False]
    assert (a > -1000).tolist() == [True, True, True]
    assert (core.tensor([5], dtype=core.uint8) >= -1).tolist() == [True]
