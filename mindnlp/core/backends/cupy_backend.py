# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The CUDA backend: CuPy arrays on the current GPU."""
import numpy as np

from .._device import device


class CupyBackend:
    type = "cuda"

    def __init__(self):
        try:
            import cupy
        except ImportError as err:
            raise RuntimeError(
                "CUDA tensors need CuPy: install mindnlp with the 'gpu' extra (pip install mindnlp[gpu])"
            ) from err
        if cupy.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError("CuPy is installed but no CUDA device is visible")
        import cupyx.scipy.special

        self.xp = cupy
        self.special = cupyx.scipy.special
        self.device = device("cuda", 0)

    def from_host(self, array, index=None):
        with self.xp.cuda.Device(index or 0):
            return self.xp.asarray(array)

    def to_host(self, array):
        return self.xp.asnumpy(array) if not isinstance(array, np.ndarray) else array

    def synchronize(self):
        self.xp.cuda.Stream.null.synchronize()

    def fused(self, name, array, work=None):
        """No fused CUDA kernels yet: every op uses its composed CuPy form."""
        return None

    def run_each(self, task, n_items):
        """task(i) for every i in range(n_items), one after the other."""
        for i in range(n_items):
            task(i)
