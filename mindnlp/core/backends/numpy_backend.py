"""The CPU backend: NumPy arrays, float16/bfloat16 computed in float32."""
import numpy as np
import scipy.special

from .._device import CPU


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
