# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Random number generation: `Generator`, `manual_seed`, and the sampling ops.

Numbers are drawn on the host by NumPy's PCG64 and moved to the tensor's device, so a seed
gives the same values on cpu and cuda. Streams differ from torch's (its Mersenne Twister
transforms are not reproduced); code that needs torch's exact numbers uses fixtures.
"""
import json

import numpy as np

from . import _dtype
from ._device import as_device, default_device
from ._tensor import Tensor, _wrap
from .backends import get_backend

DEFAULT_SEED = 67280421310721


class Generator:
    """A seedable random stream, as torch.Generator."""

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed & 0xFFFFFFFFFFFFFFFF))
        return self

    def seed(self):
        seed = int(np.random.SeedSequence().entropy) & 0xFFFFFFFFFFFFFFFF
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The stream's state as a uint8 tensor (JSON of NumPy's bit-generator state)."""
        blob = json.dumps({"seed": self._seed, "state": self._rng.bit_generator.state}).encode()
        return _wrap(np.frombuffer(blob, dtype=np.uint8).copy())

    def set_state(self, state):
        payload = json.loads(bytes(np.asarray(state._host() if isinstance(state, Tensor) else state,
                                              dtype=np.uint8)).decode())
        self._seed = payload["seed"]
        self._rng = np.random.Generator(np.random.PCG64())
        self._rng.bit_generator.state = payload["state"]
        return self


default_generator = Generator()


def manual_seed(seed):
    """Seed the default generator (all devices draw from it)."""
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _rng(generator):
    return (generator or default_generator)._rng


def _draw_key(generator=None):
    """One uint64 drawn from the generator: the key of a stream that compiled code expands
    (core.backends.cpu_jit_random's dropout masks), so that seeding still decides it."""
    return _rng(generator).integers(0, 1 << 64, dtype=np.uint64)


def _place(array, device, requires_grad=False):
    device = as_device(device) if device is not None else default_device()
    if device is not None and device.type != "cpu":
        array = get_backend(device).from_host(array, device.index)
    t = _wrap(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _float_dtype(dtype):
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if not dtype.is_floating_point:
        raise TypeError(f"expected a floating point dtype, got {dtype}")
    return dtype


def _sample(shape, dtype, device, requires_grad, draw):
    """A tensor of draw()'s host samples on device (the default one when None). A meta tensor
    holds no samples: nothing is drawn and the generator does not advance, as in torch."""
    device = as_device(device) if device is not None else default_device()
    if device is not None and device.type == "meta":
        from .ops.creation import empty

        return empty(shape, dtype=dtype, device=device, requires_grad=requires_grad)
    return _place(draw(), device, requires_grad)


def _draw_float(rng_call, shape, dtype):
    """Sample in float32/float64 and round to half dtypes afterwards."""
    native = dtype.np_dtype if dtype in (_dtype.float32, _dtype.float64) else np.float32
    return rng_call(shape, native).astype(dtype.np_dtype, copy=False)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return _creation_out("rand", out, dtype, lambda dt, dev: rand(*size, generator=generator, dtype=dt, device=dev))
    dtype = _float_dtype(dtype)
    shape = _shape(size)
    return _sample(shape, dtype, device, requires_grad,
                   lambda: _draw_float(lambda s, d: _rng(generator).random(s, dtype=d), shape, dtype))


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return _creation_out("randn", out, dtype,
                             lambda dt, dev: randn(*size, generator=generator, dtype=dt, device=dev))
    dtype = _float_dtype(dtype)
    shape = _shape(size)
    return _sample(shape, dtype, device, requires_grad,
                   lambda: _draw_float(lambda s, d: _rng(generator).standard_normal(s, dtype=d), shape, dtype))


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers in [low, high); called as randint(high, size) or randint(low, high, size)."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() needs high and size")
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    shape = tuple(size)
    return _sample(shape, dtype, device, requires_grad,
                   lambda: _rng(generator).integers(low, high, size=shape).astype(dtype.np_dtype))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = _dtype.as_dtype(dtype) if dtype is not None else _dtype.int64
    return _sample((int(n),), dtype, device, requires_grad,
                   lambda: _rng(generator).permutation(int(n)).astype(dtype.np_dtype))


def rand_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return rand(tuple(input.shape), generator=generator, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return randn(tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
                 device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None, generator=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Samples from N(mean, std); mean and std may be tensors (broadcast) or floats."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        if ref.is_meta:
            shape = np.broadcast_shapes(tuple(getattr(mean, "shape", ())), tuple(getattr(std, "shape", ())))
            return ref.new_empty(shape)
        m = mean._host() if isinstance(mean, Tensor) else mean
        s = std._host() if isinstance(std, Tensor) else std
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        noise = _rng(generator).standard_normal(shape)
        array = (m + s * noise).astype(ref._data.dtype)
        return _place(array, ref.device)
    dtype = _float_dtype(dtype)
    shape = tuple(size)
    return _sample(shape, dtype, device, requires_grad,
                   lambda: _rng(generator).normal(mean, std, size=shape).astype(dtype.np_dtype))


def bernoulli(input, p=None, *, generator=None):
    """1 with probability input (or p), else 0, in input's dtype."""
    if input.is_meta:
        return input.new_empty(tuple(input.shape))
    probs = input._host() if p is None else np.broadcast_to(np.float64(p), input.shape)
    draws = _rng(generator).random(input.shape) < probs
    return _place(draws.astype(input._data.dtype), input.device)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw category indices from each row of (unnormalised) probabilities."""
    probs = input._host().astype(np.float64)
    squeeze = probs.ndim == 1
    rows = probs.reshape(1, -1) if squeeze else probs
    if np.any(rows < 0) or np.any(~np.isfinite(rows)):
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or element < 0")
    rng = _rng(generator)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i, row in enumerate(rows):
        total = row.sum()
        if total <= 0:
            raise RuntimeError("multinomial: invalid probability distribution (sum of probabilities <= 0)")
        if not replacement and num_samples > np.count_nonzero(row):
            raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        out[i] = rng.choice(row.size, size=num_samples, replace=replacement, p=row / total)
    return _place(out[0] if squeeze else out, input.device)


def uniform_(t, a=0.0, b=1.0, generator=None):
    """Fill t in place with U(a, b) samples."""
    return _fill_inplace(t, lambda: _rng(generator).uniform(a, b, size=t.shape))


def normal_(t, mean=0.0, std=1.0, generator=None):
    return _fill_inplace(t, lambda: _rng(generator).normal(mean, std, size=t.shape))


def bernoulli_(t, p=0.5, generator=None):
    return _fill_inplace(t, lambda: _rng(generator).random(t.shape) < p)


def exponential_(t, lambd=1.0, generator=None):
    return _fill_inplace(t, lambda: _rng(generator).exponential(1.0 / lambd, size=t.shape))


def random_(t, low=0, high=None, generator=None):
    if high is None:
        low, high = 0, (low if low else 2 ** min(t.dtype.itemsize * 8 - 1, 53))
    return _fill_inplace(t, lambda: _rng(generator).integers(low, high, size=t.shape))


def _creation_out(name, out, dtype, make):
    from .ops._out import creation_out

    return creation_out(name, out, dtype, make)


def _fill_inplace(t, draw):
    """Write draw()'s samples into t (a meta tensor draws none)."""
    from .ops.inplace import write_inplace

    return write_inplace(t, draw)
