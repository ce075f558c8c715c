# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The CPU backend's threads: one pool of workers, and BLAS kept off its own.

Every parallel kernel runs on `workers`, a persistent pool with one thread per core this
process may run on (NumPy's ufuncs and BLAS calls release the GIL). OpenBLAS keeps a pool
of its own whose idle threads spin for tens of milliseconds after each threaded call: a
kernel that runs next on our workers shares its cores with them and takes up to twice as
long. So the kernels split matrix products over the workers themselves and hold BLAS to
one thread while they do (`blas_threads.single`); matrix-vector products run on numba's
pool (cpu_jit_parallel), which spins for microseconds, not milliseconds.
"""
import contextlib
import itertools
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

def usable_cores():
    """The number of cores this process may run on (its affinity mask, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class _Workers:
    """A persistent pool that splits a range of work items into one contiguous part per core.

    The calling thread runs the last part itself. A call made from inside a worker, or with
    a single part, runs inline, so kernels can be nested or called from user threads safely.
    """

    def __init__(self):
        self.count = usable_cores()
        self._pool = None
        self._lock = threading.Lock()
        self._local = threading.local()
        if hasattr(os, "register_at_fork"):
            # A forked child (a DataLoader worker) has none of the parent's threads.
            os.register_at_fork(after_in_child=self._forget_pool)

    def _forget_pool(self):
        self._pool = None
        self._lock = threading.Lock()
        self._local = threading.local()

    def resize(self, count):
        """Use `count` threads from now on (the calling thread included)."""
        with self._lock:
            old, self._pool = self._pool, None
            self.count = count
        if old is not None:
            old.shutdown(wait=False)

    def _executor(self):
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.count - 1, thread_name_prefix="mindnlp-cpu")
            return self._pool

    def run(self, task, n_items, min_items=1):
        """Call task(start, stop) so that the calls cover range(n_items), in parallel when worthwhile."""
        parts = min(self.count, n_items // max(min_items, 1))
        if parts <= 1 or self.inside():
            task(0, n_items)
            return
        bounds = [n_items * i // parts for i in range(parts + 1)]
        pool = self._executor()
        futures = [pool.submit(self._guarded, task, bounds[i], bounds[i + 1]) for i in range(parts - 1)]
        try:
            self._guarded(task, bounds[-2], bounds[-1])
        finally:
            for future in futures:
                future.result()

    def inside(self):
        """Whether the calling thread is running one of this pool's parts (its cores are taken
        by the other parts: a kernel called here should not split its work again)."""
        return getattr(self._local, "inside", False)

    def run_each(self, task, n_items):
        """Call task(i) for every i in range(n_items), each thread taking the next undone
        item as it finishes one (items of unequal cost balance themselves)."""
        if self.count == 1 or n_items < 2 or self.inside():
            for i in range(n_items):
                task(i)
            return
        counter = itertools.count()           # next() is atomic under the GIL

        def drain(start, stop):
            for i in iter(counter.__next__, None):
                if i >= n_items:
                    return
                task(i)

        self.run(drain, min(self.count, n_items))

    def _guarded(self, task, start, stop):
        self._local.inside = True
        try:
            task(start, stop)
        finally:
            self._local.inside = False


workers = _Workers()


class _BlasThreads:
    """Hold the BLAS libraries NumPy loaded to one thread while any kernel needs it.

    The setting is process-wide, so nested or concurrent holders are counted: the first
    saves the thread counts and the last restores them. threadpoolctl finds the libraries.
    """

    def __init__(self):
        self._controllers = None
        self._lock = threading.Lock()
        self._holders = 0
        self._saved = ()

    def _blas(self):
        if self._controllers is None:
            from threadpoolctl import ThreadpoolController

            self._controllers = ThreadpoolController().select(user_api="blas").lib_controllers
        return self._controllers

    @contextlib.contextmanager
    def single(self):
        with self._lock:
            if self._holders == 0:
                self._saved = tuple(c.num_threads for c in self._blas())
                for c in self._blas():
                    c.set_num_threads(1)
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    for c, n in zip(self._blas(), self._saved):
                        c.set_num_threads(n)


blas_threads = _BlasThreads()


def get_num_threads():
    """The number of threads CPU ops run on (torch.get_num_threads)."""
    return workers.count


def set_num_threads(n):
    """Run CPU ops on n threads: the kernels' worker pool, NumPy's BLAS and (for the calling
    thread, numba's setting being per thread) numba's pool (torch.set_num_threads).

    On a machine shared with other busy processes, fewer threads than cores can be faster:
    threads that wait for each other lose the most when one of them is descheduled.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    workers.resize(n)
    for c in blas_threads._blas():
        c.set_num_threads(n)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
        kernels = sys.modules.get("mindnlp.core.backends.cpu_jit_parallel")
        if kernels is not None:
            kernels.set_parts(numba.get_num_threads())
