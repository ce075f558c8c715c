"""core.testing: assert_close's tolerances, recursion and messages, assert_allclose, make_tensor.

The expected messages are the ones torch.testing 2.13 produces for the same calls."""
import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.testing import assert_allclose, assert_close, make_tensor


def message_of(fn, error=AssertionError):
    with pytest.raises(error) as info:
        fn()
    return str(info.value)


def test_close_tensors_pass_within_default_float32_tolerance():
    a = core.tensor([1.0, 100.0])
    assert_close(a + 9e-6, a)                       # atol 1e-5
    assert_close(core.tensor([1.0, 1e6 + 0.1]), core.tensor([1.0, 1e6]))   # rtol 1.3e-6 * 1e6 = 1.3
    with pytest.raises(AssertionError):
        assert_close(core.tensor([1.0, 1e6 + 2.0]), core.tensor([1.0, 1e6]))


@pytest.mark.parametrize("dtype, rtol, atol", [
    (core.float16, 1e-3, 1e-5), (core.bfloat16, 1.6e-2, 1e-5), (core.float32, 1.3e-6, 1e-5),
    (core.float64, 1e-7, 1e-7)])
def test_default_tolerances_by_dtype(dtype, rtol, atol):
    text = message_of(lambda: assert_close(core.tensor([0.0, 1.0], dtype=dtype), core.tensor([0.0, 2.0], dtype=dtype)))
    assert f"(up to {atol} allowed)\nGreatest relative difference: 0.5 at index (1,) (up to {rtol} allowed)" in text


def test_mismatch_message_format():
    a = core.arange(10.0)
    b = a.clone()
    b[1] += 0.5
    b[3] += 0.25
    b[5] += 1e-6
    assert message_of(lambda: assert_close(b, a)) == (
        "Tensor-likes are not close!\n\nMismatched elements: 2 / 10 (20.0%)\n"
        "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.5 at index (1,) (up to 1.3e-06 allowed)")


def test_differences_are_computed_in_the_tensors_dtype():
    text = message_of(lambda: assert_close(core.tensor([0.1, 0.2, 0.3]), core.tensor([0.1, 0.25, 0.31])))
    assert "Mismatched elements: 2 / 3 (66.7%)" in text
    assert "Greatest absolute difference: 0.04999999701976776 at index (1,)" in text
    assert "Greatest relative difference: 0.19999998807907104 at index (1,)" in text
    half = message_of(lambda: assert_close(core.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=core.float16),
                                           core.tensor([[1.0, 2.0], [3.0, 4.01]], dtype=core.float16)))
    assert "Greatest absolute difference: 0.01171875 at index (1, 1) (up to 1e-05 allowed)" in half
    assert "Greatest relative difference: 0.00292205810546875 at index (1, 1) (up to 0.001 allowed)" in half


def test_integers_and_bools_compare_exactly():
    assert message_of(lambda: assert_close(core.tensor([1, 2, 3]), core.tensor([1, 2, 4]))) == (
        "Tensor-likes are not equal!\n\nMismatched elements: 1 / 3 (33.3%)\n"
        "Greatest absolute difference: 1 at index (2,)\nGreatest relative difference: 0.25 at index (2,)")
    assert_close(core.tensor([1, 2, 3]), core.tensor([1, 2, 4]), rtol=0, atol=1)
    text = message_of(lambda: assert_close(core.tensor([1, 5, 3]), core.tensor([1, 2, 0])))
    assert "Greatest absolute difference: 3 at index (1,)\nGreatest relative difference: inf at index (2,)" in text
    assert "Greatest relative difference: 1.0 at index (1,)" in message_of(
        lambda: assert_close(core.tensor([True, False]), core.tensor([True, True])))


def test_nan_and_inf():
    nan = float("nan")
    text = message_of(lambda: assert_close(core.tensor([1.0, nan]), core.tensor([1.0, nan])))
    assert "Greatest absolute difference: nan at index (1,)" in text
    assert_close(core.tensor([1.0, nan]), core.tensor([1.0, nan]), equal_nan=True)
    assert_close(core.tensor([float("inf")]), core.tensor([float("inf")]))
    text = message_of(lambda: assert_close(core.tensor([float("inf")]), core.tensor([float("-inf")])))
    assert "Greatest absolute difference: inf at index (0,)" in text and "relative difference: nan" in text
    assert "Greatest relative difference: inf at index (1,)" in message_of(
        lambda: assert_close(core.tensor([0.0, 2.0]), core.tensor([1e-6, 0.0])))


def test_zero_dim_tensors_use_the_scalar_message():
    assert message_of(lambda: assert_close(core.tensor(1.0), core.tensor(2.0))) == (
        "Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
        "Absolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)")
    assert message_of(lambda: assert_close(core.tensor(3), core.tensor(4))) == (
        "Scalars are not equal!\n\nExpected 4 but got 3.\nAbsolute difference: 1\nRelative difference: 0.25")


def test_attribute_mismatches():
    assert message_of(lambda: assert_close(core.ones(2), core.ones(3))) == (
        f"The values for attribute 'shape' do not match: {core.Size([2])} != {core.Size([3])}.")
    assert message_of(lambda: assert_close(core.ones(2), core.ones(2, dtype=core.float64))) == (
        f"The values for attribute 'dtype' do not match: {core.float32} != {core.float64}.")
    assert message_of(lambda: assert_close(core.ones(4, 3).t(), core.ones(3, 4), check_stride=True)) == (
        "The values for attribute 'stride()' do not match: (1, 3) != (4, 1).")
    assert_close(core.ones(4, 3).t(), core.ones(3, 4))


def test_check_dtype_false_promotes():
    assert_close(core.tensor([1.0, 2.0]), core.tensor([1.0, 2.0], dtype=core.float64), check_dtype=False)
    assert_close(core.ones(2, dtype=core.float16), core.ones(2), check_dtype=False)
    text = message_of(lambda: assert_close(core.tensor([1.0, 2.0]), core.tensor([1, 3]), check_dtype=False))
    assert "Greatest relative difference: 0.3333333432674408 at index (1,)" in text


def test_python_scalars():
    assert message_of(lambda: assert_close(1, 1.0)) == "The (d)types do not match: <class 'int'> != <class 'float'>."
    assert message_of(lambda: assert_close(1, 2)) == (
        "Scalars are not equal!\n\nExpected 2 but got 1.\nAbsolute difference: 1\nRelative difference: 0.5")
    assert message_of(lambda: assert_close(1.0, 1.1)) == (
        "Scalars are not close!\n\nExpected 1.1 but got 1.0.\n"
        "Absolute difference: 0.10000000000000009 (up to 1e-07 allowed)\n"
        "Relative difference: 0.09090909090909098 (up to 1e-07 allowed)")
    assert_close(1.0, 1.0 + 1e-8)
    assert_close(np.float32(1.0), 1.0)
    assert_close(float("inf"), float("inf"))
    assert message_of(lambda: assert_close(True, False)) == "Booleans mismatch: True is not False"
    assert message_of(lambda: assert_close(None, 1)) == "None mismatch: None is not 1"


def test_sequences_and_mappings_recurse_and_name_the_failing_item():
    assert message_of(lambda: assert_close([1, [2.0, core.ones(2)]], [1, [2.0, core.zeros(2)]])).endswith(
        "\n\nThe failure occurred for item [1][1]")
    assert message_of(lambda: assert_close({"a": 1, "b": 2}, {"a": 1, "c": 2})) == (
        "The keys of the mappings do not match:\nMissing keys in the actual mapping: ['c']\n"
        "Additional keys in the actual mapping: ['b']")
    assert message_of(lambda: assert_close([1, 2], [1, 2, 3])) == "The length of the sequences mismatch: 2 != 3"
    assert_close((1, 2), [1, 2])
    assert_close({"x": (core.ones(2), 3)}, {"x": [core.ones(2), 3]})


def test_msg_string_or_callable():
    assert message_of(lambda: assert_close(core.ones(2), core.zeros(2), msg="custom")) == "custom"
    text = message_of(lambda: assert_close({"x": [core.ones(2)]}, {"x": [core.zeros(2)]}, msg=lambda m: "H\n" + m))
    assert text.startswith("H\nTensor-likes are not close!") and text.endswith("The failure occurred for item ['x'][0]")


def test_unsupported_inputs_and_half_given_tolerances():
    assert "No comparison pair was able to handle inputs of type" in message_of(
        lambda: assert_close(core.ones(2), [1.0, 1.0]), TypeError)
    assert "No comparison pair" in message_of(lambda: assert_close("ab", "ab"), TypeError)
    assert message_of(lambda: assert_close(core.ones(2), core.ones(2), rtol=0.1), ValueError) == (
        "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.")


def test_subclasses_and_numpy_arrays():
    assert_close(core.nn.Parameter(core.ones(2)), core.ones(2))
    with pytest.raises(TypeError, match="No comparison pair"):
        assert_close(core.nn.Parameter(core.ones(2)), core.ones(2), allow_subclasses=False)
    assert "(up to 1e-07 allowed)" in message_of(lambda: assert_close(np.ones(2), np.zeros(2)))


def test_tensors_that_require_grad_compare_by_value():
    x = core.ones(3, requires_grad=True)
    assert_close(x * 2, core.full((3,), 2.0))


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        assert_allclose([1.0, 2.0], [1.0, 2.0001])
    with pytest.warns(FutureWarning):
        text = message_of(lambda: assert_allclose(core.tensor([1.0, 2.0]), [1.0, 2.1]))
    assert "Greatest relative difference: 0.04761900380253792 at index (1,) (up to 0.0001 allowed)" in text
    with pytest.warns(FutureWarning):
        assert_allclose(core.tensor([float("nan")]), core.tensor([float("nan")]))


def test_make_tensor_ranges_and_flags():
    core.manual_seed(0)
    x = make_tensor(50, 4, dtype=core.float32, device="cpu", low=-1, high=1)
    assert x.shape == (50, 4) and x.dtype == core.float32
    assert float(x.min()) >= -1 and float(x.max()) < 1
    ints = make_tensor((200,), dtype=core.int64, device="cpu")
    assert ints.dtype == core.int64 and int(ints.min()) >= -9 and int(ints.max()) <= 9
    small = make_tensor((200,), dtype=core.uint8, device="cpu")
    assert int(small.min()) >= 0 and int(small.max()) <= 9
    flags = make_tensor((100,), dtype=core.bool, device="cpu")
    assert flags.dtype == core.bool
    nonzero = make_tensor((500,), dtype=core.int32, device="cpu", low=-1, high=2, exclude_zero=True)
    assert not bool((nonzero == 0).any())
    strided = make_tensor((3, 4), dtype=core.float32, device="cpu", noncontiguous=True, requires_grad=True)
    assert strided.shape == (3, 4) and not strided.is_contiguous() and strided.requires_grad
    with pytest.raises(ValueError, match="`requires_grad=True` is not supported"):
        make_tensor((2,), dtype=core.int64, device="cpu", requires_grad=True)
    with pytest.raises(ValueError, match="`low` must be less than `high`"):
        make_tensor((2,), dtype=core.int64, device="cpu", low=3, high=1)
