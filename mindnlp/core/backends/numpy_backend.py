# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The CPU backend: NumPy arrays, float16/bfloat16 computed in float32."""
import ctypes
import platform

import ml_dtypes
import numpy as np
import scipy.special

from .._device import CPU
from . import cpu_kernels
from .cpu_threads import blas_threads, workers

# Arrays whose ops compute in float32, the only dtype the fused kernels are written for.
_FLOAT32_COMPUTED = (np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


# glibc mallopt parameters
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 256 << 20


def keep_freed_memory():
    """Have glibc's malloc keep freed array memory for reuse instead of returning it.

    Every op allocates its result, and a transformer layer's results are megabytes. With
    glibc's defaults many are fresh mmaps, or heap memory trimmed back to the system and
    faulted in again page by page: about 80,000 page faults per forward pass of a 135M
    model, a tenth of its time. Arrays below 32 MiB now come from the heap, which keeps
    up to 256 MiB of free memory. Returns whether the settings were applied (glibc only).
    """
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


keep_freed_memory()


class NumpyBackend:
    type = "cpu"
    xp = np
    special = scipy.special  # erf, erfinv, gammaln: not in NumPy itself
    device = CPU

    def from_host(self, array, index=None):
        return array

    def to_host(self, array):
        return array

    def synchronize(self):
        pass

    def fused(self, name, array, work=None):
        """The fused kernel `name` (see cpu_kernels.KERNELS) for an op on `array`, or None.

        None sends the op to its composed reference: float64 (which the kernels' float32
        approximations would not match) and work too small to repay the kernel's extra calls
        (`work` is the op's own measure where array.size is not it, e.g. attention's scores).
        """
        size = array.size if work is None else work
        if size >= cpu_kernels.min_work(name) and array.dtype in _FLOAT32_COMPUTED:
            return cpu_kernels.KERNELS[name]
        return None

    TASKS_PER_THREAD = 4

    def run_each(self, task, n_items):
        """Call task(i) for every i in range(n_items), the calls spread over the worker threads.

        For independent pieces of work (the batches of `SentenceTransformer.encode`): each
        task's ops run whole on the thread that took it, BLAS on one thread, instead of every
        op being split over the cores and joined again. On a machine shared with other busy
        processes that join waits for whichever thread was descheduled; here a thread that
        falls behind only takes fewer tasks. The tasks must not share mutable state.

        With fewer than TASKS_PER_THREAD tasks per thread they run one after the other, each
        op split over the threads as usual: the last few tasks would otherwise leave threads
        idle (three equal tasks on two threads take two tasks' time, not one and a half).
        """
        if n_items < self.TASKS_PER_THREAD * workers.count or workers.count == 1:
            for i in range(n_items):
                task(i)
            return
        with blas_threads.single():
            workers.run_each(task, n_items)
