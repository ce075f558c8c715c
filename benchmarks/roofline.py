"""What this machine can do at best, measured in the same run as a benchmark's figures.

A ratio between two libraries says nothing about how far both are from the hardware; these
ceilings do: the float32 matrix-product rate of NumPy's BLAS on every core (the bound of
compute-heavy work such as encoding), and the memory bandwidth (the bound of weight-streaming
work such as decoding), both as a copy on one thread and as what a matrix-vector product of
NumPy's BLAS reads on every core, which is what decoding does (on a 2-core AMD EPYC: about 27
GB/s copied, 33-48 GB/s read, varying with the machine's load). `describe()` gives one line
naming the CPU with all three.
"""
import functools
import os
import platform
import time

import numpy as np


def cpu_name():
    """The CPU's marketing name (from /proc/cpuinfo on Linux) and its logical core count."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} logical cores"


def matmul_gflops(sizes=(512, 1024), repeats=10):
    """Best float32 GFLOP/s of square matrix products (2 n^3 flops each) through NumPy's BLAS,
    over a few sizes: small ones fit the caches, large ones amortise the threads' start."""
    rng = np.random.default_rng(0)
    best = 0.0
    for size in sizes:
        a = rng.standard_normal((size, size), dtype=np.float32)
        b = rng.standard_normal((size, size), dtype=np.float32)
        out = np.empty_like(a)
        np.matmul(a, b, out=out)
        best = max(best, 2 * size ** 3 / _best_time(functools.partial(np.matmul, a, b, out=out), repeats) / 1e9)
    return best


def copy_gbs(megabytes=256, repeats=5):
    """Best GB/s of copying a buffer far larger than the caches (bytes read + bytes written)."""
    source = np.ones(megabytes * 2 ** 20 // 8)
    target = np.empty_like(source)
    np.copyto(target, source)
    return 2 * source.nbytes / _best_time(functools.partial(np.copyto, target, source), repeats) / 1e9


_read_samples = []


def matvec_gbs(again=False, rows=16384, columns=4096, repeats=10):
    """Best GB/s of a float32 matrix (256 MB, far larger than the caches) times a vector through
    NumPy's BLAS on every core: the bytes of the matrix read, a weight-streaming decoding step's
    ceiling. The best of every measurement in this process: measured the first time, and again
    when `again` (a benchmark asks between its models). On a shared machine one measurement
    can land in a busy moment (29.7-45.5 GB/s in one day's runs here), and a ceiling taken
    from it would flatter what is measured against it."""
    if again or not _read_samples:
        matrix = np.ones((rows, columns), np.float32)
        vector, out = np.ones(columns, np.float32), np.empty(rows, np.float32)
        np.matmul(matrix, vector, out=out)
        _read_samples.append(matrix.nbytes / _best_time(functools.partial(np.matmul, matrix, vector, out=out),
                                                        repeats) / 1e9)
    return max(_read_samples)


def _best_time(fn, repeats):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def describe():
    """(one printable line, peak float32 GFLOP/s, copy GB/s); the line also gives matvec_gbs()'s
    first measurement."""
    gflops, gbs, read = matmul_gflops(), copy_gbs(), matvec_gbs()
    return (f"{cpu_name()}; roofline: {gflops:.0f} GFLOP/s float32 matmul (NumPy BLAS), {gbs:.1f} GB/s copy "
            f"(one thread), {read:.1f} GB/s read by a matrix-vector product (NumPy BLAS)"), gflops, gbs


def describe_gpu():
    """describe() for the CUDA GPU CuPy sees: its name, cuBLAS's float32 matrix-product rate and
    its device-to-device copy bandwidth, timed with CUDA events."""
    import cupy

    def best_gpu_time(fn, repeats=10):
        fn()
        best = float("inf")
        for _ in range(repeats):
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            best = min(best, cupy.cuda.get_elapsed_time(start, stop) / 1e3)
        return best

    size = 8192
    a = cupy.random.standard_normal((size, size), dtype=cupy.float32)
    b = cupy.random.standard_normal((size, size), dtype=cupy.float32)
    out = cupy.empty_like(a)
    gflops = 2 * size ** 3 / best_gpu_time(lambda: cupy.matmul(a, b, out=out)) / 1e9
    source = cupy.ones(2 ** 30 // 4, dtype=cupy.float32)
    target = cupy.empty_like(source)
    gbs = 2 * source.nbytes / best_gpu_time(lambda: cupy.copyto(target, source)) / 1e9
    name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return f"{name}; roofline: {gflops:.0f} GFLOP/s float32 matmul (cuBLAS), {gbs:.0f} GB/s copy", gflops, gbs
