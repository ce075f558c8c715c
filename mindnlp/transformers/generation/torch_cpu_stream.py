# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""PyTorch's CPU random stream, reproduced for the watermarks that are defined by it.

Hugging Face's watermarking processors pick their "green" tokens and SynthID's g-value table
with `torch.Generator` on the CPU: a Mersenne Twister (MT19937) seeded with the low 32 bits
of the seed, read one 32-bit word at a time. A watermark is only detectable with the exact
lists it was made with, so text watermarked by HF must be checked with the same lists here
and the other way round. mindnlp.core's generator is NumPy's PCG64 (a different stream), so
these functions draw from NumPy's MT19937, seeded as torch seeds it, and apply torch's
transforms:

- `randperm(n)` (n < 2**32 / 20): r = 0..n-1, then for i in 0..n-2 swap r[i] with
  r[i + word % (n - i)];
- `randint(low, high)` (high - low < 2**32): low + word % (high - low), element by element.

The draws are host-side integer bookkeeping, not tensor math, so they stay in NumPy.
"""
from functools import lru_cache

import numpy as np

_SMALL_RANDPERM_LIMIT = (2 ** 32 - 1) // 20


def mt19937_words(seed, count):
    """The first `count` 32-bit outputs of torch's CPU generator after `manual_seed(seed)`."""
    # RandomState seeds an integer in [0, 2**32) with MT19937's reference init_genrand, as
    # torch's mt19937 engine does with the seed's low 32 bits; randint over the full uint32
    # range returns the raw words.
    state = np.random.RandomState(int(seed) & 0xFFFFFFFF)
    return state.randint(0, 2 ** 32, size=int(count), dtype=np.uint32).astype(np.int64)


def randperm(seed, n, prefix=None):
    """torch.randperm(n, generator=torch.Generator().manual_seed(seed)) as a list, or only its
    first `prefix` entries (which the swaps fix after `prefix` steps: later ones never touch
    them)."""
    n = int(n)
    if n >= _SMALL_RANDPERM_LIMIT:
        raise ValueError(f"randperm of {n} elements uses torch's 64-bit path, which is not reproduced")
    steps = max(n - 1, 0) if prefix is None else min(int(prefix), max(n - 1, 0))
    offsets = np.arange(steps, dtype=np.int64)
    targets = (offsets + mt19937_words(seed, steps) % (n - offsets)).tolist()
    permutation = list(range(n))
    for i, j in enumerate(targets):
        permutation[i], permutation[j] = permutation[j], permutation[i]
    return permutation if prefix is None else permutation[:int(prefix)]


def randperm_prefix_contains(seed, n, prefix, value):
    """Whether `value` is among the first `prefix` entries of `randperm(seed, n)`, without
    building the permutation: only the value's own path through the swaps is followed.

    The value starts at index `value`. Swap i (of positions i and j_i >= i) moves it only if
    it sits at i (to j_i) or at j_i (to i, where no later swap reaches it again). So from
    its index p, the first step in [i, p) whose j equals p fixes it there; if there is none,
    step p sends it on to j_p. Each search is one vectorised scan."""
    n, prefix, value = int(n), int(prefix), int(value)
    if n >= _SMALL_RANDPERM_LIMIT:
        raise ValueError(f"randperm of {n} elements uses torch's 64-bit path, which is not reproduced")
    steps = min(prefix, max(n - 1, 0))
    offsets = np.arange(steps, dtype=np.int64)
    targets = offsets + mt19937_words(seed, steps) % (n - offsets)
    i, position = 0, value
    while position < steps:
        hits = np.flatnonzero(targets[i:position] == position)
        if hits.size:
            return i + int(hits[0]) < prefix
        if targets[position] == position:
            return position < prefix          # swapped with itself: fixed at a step < prefix
        i, position = position + 1, int(targets[position])
    # No swap reaches it any more (every step whose j could equal its index has passed).
    hits = np.flatnonzero(targets[i:] == position)
    return bool(hits.size) and i + int(hits[0]) < prefix


@lru_cache(maxsize=8)
def randint_table(seed, low, high, size):
    """torch.randint(low, high, (size,), generator=...manual_seed(seed)) as a read-only int64 array."""
    if not 0 < high - low < 2 ** 32:
        raise ValueError(f"randint range [{low}, {high}) uses torch's 64-bit path, which is not reproduced")
    table = low + mt19937_words(seed, size) % (high - low)
    table.setflags(write=False)
    return table


@lru_cache(maxsize=4)
def randperm_table(seed, n):
    """A full `randperm(seed, n)` as a read-only int64 array, kept for reuse (large tables
    take a noticeable fraction of a second to build)."""
    table = np.asarray(randperm(seed, n), dtype=np.int64)
    table.setflags(write=False)
    return table
