# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""What runs inside a DataLoader worker process, and `get_worker_info()`.

A worker owns a copy of the dataset. It reads tasks `(task_index, indices)` from its own
index queue, fetches and collates the batch, and puts `(task_index, batch)` on the shared
result queue; the main process restores the order. `None` stops the worker.
"""
import random
import sys
import traceback

import numpy as np


class WorkerInfo:
    """id, num_workers, seed and dataset of the current worker process."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id = id
        self.num_workers = num_workers
        self.seed = seed
        self.dataset = dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_worker_info = None


def get_worker_info():
    """The WorkerInfo inside a worker process; None in the main process."""
    return _worker_info


class ResumeIteration:
    """Sent to persistent workers at a new epoch: restart the dataset iterator, then acknowledge."""


class IterableExhausted:
    """A worker's answer once its copy of an IterableDataset has no more samples."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback."""

    def __init__(self, where):
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.message = f"Caught {exc_type.__name__} {where}.\nOriginal {''.join(traceback.format_exc())}"

    def reraise(self):
        try:
            error = self.exc_type(self.message)
        except Exception:
            error = RuntimeError(self.message)
        raise error


def seed_worker(seed):
    """Seed Python's, NumPy's and core's random streams for one worker."""
    from ... import random as core_random

    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    core_random.manual_seed(seed)


def worker_loop(make_fetcher, index_queue, result_queue, dataset, worker_id, num_workers, seed, init_fn):
    global _worker_info
    seed_worker(seed)
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher()
    except Exception:
        init_error = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
    exhausted = False
    while True:
        task = index_queue.get()
        if task is None:
            break
        if isinstance(task, ResumeIteration):
            if init_error is None:
                fetcher = make_fetcher()
            exhausted = False
            result_queue.put((task, None))
            continue
        task_index, indices = task
        if init_error is not None:
            data, init_error = init_error, None
        elif exhausted:
            data = IterableExhausted(worker_id)
        else:
            try:
                data = fetcher.fetch(indices)
            except StopIteration:
                exhausted = True
                data = IterableExhausted(worker_id)
            except Exception:
                data = ExceptionWrapper(f"in DataLoader worker process {worker_id}")
        result_queue.put((task_index, data))
    result_queue.cancel_join_thread()
    result_queue.close()
