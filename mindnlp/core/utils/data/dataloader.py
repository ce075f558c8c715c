# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`DataLoader`: batches from a dataset, in the main process or in worker processes.

With `num_workers > 0` each worker is a separate process (fork on Linux) that fetches and
collates whole batches; up to `prefetch_factor * num_workers` batches are in flight and the
results are handed out in sampler order. Batches cross processes by pickling (tensors
pickle as their host arrays).
"""
import itertools
import multiprocessing
import queue
import sys

from ... import random as core_random
from .collate import default_collate, default_convert
from .dataset import is_iterable_style
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import ExceptionWrapper, IterableExhausted, ResumeIteration, worker_loop

_STATUS_CHECK_INTERVAL = 5.0


class _InfiniteConstantSampler(Sampler):
    """Index source for iterable datasets: None forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.iterator = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.iterator))
        data = []
        for _ in index:
            try:
                data.append(next(self.iterator))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


class _FetcherFactory:
    """Builds a fetcher inside whichever process iterates (picklable for spawn contexts)."""

    def __init__(self, loader):
        self.dataset = loader.dataset
        self.iterable = loader._iterable_style
        self.auto_collation = loader._auto_collation
        self.collate_fn = loader.collate_fn
        self.drop_last = loader.drop_last

    def __call__(self):
        if self.iterable:
            return _IterableFetcher(self.dataset, self.auto_collation, self.collate_fn, self.drop_last)
        return _MapFetcher(self.dataset, self.auto_collation, self.collate_fn)


class DataLoader:
    """torch.utils.data.DataLoader: sampling, batching, collation, worker processes."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable_style = is_iterable_style(dataset)
        if self._iterable_style:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable_style:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.pin_memory = pin_memory  # host memory is not pinned: arrays are moved when a batch is used
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.persistent_workers = persistent_workers
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if self._auto_collation else default_convert)
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIterator(self)
        if not self.persistent_workers:
            return _MultiProcessIterator(self)
        if self._iterator is None:
            self._iterator = _MultiProcessIterator(self)
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._iterable_style:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


def _draw_base_seed(loader):
    """Each pass draws a seed from the loader's generator (workers get base_seed + id), as torch."""
    return int(core_random.randint(0, 2 ** 62, (1,), generator=loader.generator).item())


class _SingleProcessIterator:
    def __init__(self, loader):
        self._base_seed = _draw_base_seed(loader)
        self._sampler_iter = iter(loader._index_sampler)
        self._fetcher = _FetcherFactory(loader)()

    def __iter__(self):
        return self

    def __next__(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)


def _default_context():
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


class _MultiProcessIterator:
    """Feeds batch indices to workers round-robin and hands results back in order."""

    def __init__(self, loader):
        context = loader.multiprocessing_context
        if context is None:
            context = _default_context()
        elif isinstance(context, str):
            context = multiprocessing.get_context(context)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._base_seed = _draw_base_seed(loader)
        self._result_queue = context.Queue()
        self._index_queues = []
        self._workers = []
        self._shut_down = False
        make_fetcher = _FetcherFactory(loader)
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            worker = context.Process(
                target=worker_loop,
                args=(make_fetcher, index_queue, self._result_queue, loader.dataset, worker_id, self._num_workers,
                      self._base_seed + worker_id, loader.worker_init_fn),
                daemon=True,
            )
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._reset(loader, first=True)

    def _reset(self, loader, first=False):
        self._sampler_iter = iter(loader._index_sampler)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._tasks = {}  # task index -> [worker id] or [worker id, data] once it arrived early
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            pending = self._num_workers
            while pending:
                marker, _ = self._get()
                if isinstance(marker, ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch):
            self._put_task()

    def _put_task(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._active[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._send_idx, index))
        self._tasks[self._send_idx] = [worker_id]
        self._send_idx += 1

    def _get(self):
        """Next (task index, data) from any worker, watching for timeouts and dead workers."""
        if self._timeout > 0:
            try:
                return self._result_queue.get(timeout=self._timeout)
            except queue.Empty:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None
        while True:
            try:
                return self._result_queue.get(timeout=_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                dead = [str(w.pid) for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(dead)}) exited unexpectedly") from None

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            # Drop tasks that went to a worker whose iterable ran out (they hold no data).
            while self._rcvd_idx < self._send_idx:
                task = self._tasks[self._rcvd_idx]
                if len(task) == 2 or self._active[task[0]]:
                    break
                del self._tasks[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            task = self._tasks[self._rcvd_idx]
            if len(task) == 2:
                return self._deliver(task[1])
            task_index, data = self._get()
            if isinstance(task_index, ResumeIteration):
                continue
            if isinstance(data, IterableExhausted):
                self._active[data.worker_id] = False
                self._put_task()
                continue
            if task_index != self._rcvd_idx:
                self._tasks[task_index].append(data)
                continue
            return self._deliver(data)

    def _deliver(self, data):
        del self._tasks[self._rcvd_idx]
        self._rcvd_idx += 1
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            self._shutdown()
            data.reraise()
        return data

    def _shutdown(self):
        if self._shut_down:
            return
        self._shut_down = True
        for index_queue in self._index_queues:
            index_queue.put(None)
        for worker in self._workers:
            worker.join(timeout=_STATUS_CHECK_INTERVAL)
            if worker.is_alive():
                worker.terminate()
        for index_queue in self._index_queues:
            index_queue.close()
        self._result_queue.cancel_join_thread()
        self._result_queue.close()

    def __del__(self):
        try:
            self._shutdown()
        except Exception:
            pass
