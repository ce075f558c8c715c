# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`core.cuda`: GPU availability and synchronisation, backed by CuPy when installed."""
from .backends import cuda_available, get_backend


def is_available():
    return cuda_available()


def device_count():
    if not cuda_available():
        return 0
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


def current_device():
    return 0


def synchronize(device=None):
    if cuda_available():
        get_backend("cuda").synchronize()


def manual_seed(seed):
    """All devices draw from the default generator, so this seeds it."""
    from .random import manual_seed as seed_all

    seed_all(seed)


manual_seed_all = manual_seed


def empty_cache():
    if cuda_available():
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()


def is_bf16_supported():
    return False
