"""Dropout's compiled keep masks: SplitMix64's outputs, the keep rule of a float32 draw,
independence of the thread count, and what dropout makes of them."""
import math

import numpy as np
import pytest

from mindnlp import core
from mindnlp.core.backends import cpu_jit
from mindnlp.core.nn import functional as F

pytestmark = pytest.mark.skipif(cpu_jit.load() is None, reason="needs numba")


def _splitmix64(key, count):
    """The first `count` outputs of SplitMix64 seeded with `key`, in Python integers (the
    published algorithm: state += gamma, then the two multiply-xorshift rounds)."""
    mask, state, outputs = (1 << 64) - 1, key, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        outputs.append(z ^ (z >> 31))
    return outputs


@pytest.mark.parametrize("size", [1, 2, 7, 64])
def test_mask_elements_follow_the_splitmix_stream(size):
    from mindnlp.core.backends import cpu_jit_random

    key, p = 0x0123456789ABCDEF, 0.375
    mask = cpu_jit_random.keep_mask((size,), np.dtype(np.float32), np.uint64(key), p, 2.5)
    threshold = math.ceil(p * (1 << 24))
    uniforms = []
    for z in _splitmix64(key, (size + 1) // 2):
        uniforms += [z >> 40, (z >> 8) & 0xFFFFFF]
    expected = np.array([2.5 if u >= threshold else 0.0 for u in uniforms[:size]], np.float32)
    np.testing.assert_array_equal(mask, expected)


def test_masks_do_not_depend_on_the_thread_count(monkeypatch):
    from mindnlp.core.backends import cpu_jit_random

    key, shape = np.uint64(987654321), (3, 5001)
    alone = cpu_jit_random.keep_mask(shape, np.dtype(np.float64), key, 0.2, 1.25)
    monkeypatch.setattr(cpu_jit_random, "_POOL_ELEMENTS", 1)
    for threads in (2, 3):
        monkeypatch.setattr(cpu_jit_random, "parts", lambda threads=threads: threads)
        np.testing.assert_array_equal(cpu_jit_random.keep_mask(shape, np.dtype(np.float64), key, 0.2, 1.25), alone)
    assert alone.dtype == np.float64 and set(np.unique(alone)) == {0.0, 1.25}


@pytest.mark.parametrize("p", [0.05, 0.5, 0.9])
def test_dropout_keeps_each_element_with_probability_one_minus_p(p):
    core.manual_seed(5)
    x = core.ones(256, 1024)                  # large enough for numba's threads
    kept = F.dropout(x, p).numpy() != 0
    n = kept.size
    assert abs(kept.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / n)
    # neighbours (the two halves of one 64-bit output) and rows are not correlated
    first, second = kept[:, 0::2].ravel().astype(float), kept[:, 1::2].ravel().astype(float)
    assert abs(np.corrcoef(first, second)[0, 1]) < 5 / math.sqrt(n / 2)
    again = F.dropout(x, p).numpy() != 0          # the next call draws another key
    assert abs(np.corrcoef(kept.ravel().astype(float), again.ravel().astype(float))[0, 1]) < 5 / math.sqrt(n)


def test_dropout_masks_follow_the_generator():
    core.manual_seed(11)
    a = F.dropout(core.ones(300), 0.5).numpy()
    b = F.dropout(core.ones(300), 0.5).numpy()
    state = core.get_rng_state()
    c = F.dropout(core.ones(300), 0.5).numpy()
    core.manual_seed(11)
    np.testing.assert_array_equal(F.dropout(core.ones(300), 0.5).numpy(), a)
    core.set_rng_state(state)
    np.testing.assert_array_equal(F.dropout(core.ones(300), 0.5).numpy(), c)
    assert not np.array_equal(a, b)
