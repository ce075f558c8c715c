# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`DistributedSampler`: each process of a data-parallel job visits its own share of a dataset.

As torch's: every rank draws the same permutation (seeded by `seed + epoch`, so call
`set_epoch` at the start of each epoch for a new order), pads it by repeating indices to a
multiple of the number of replicas (or drops the tail with `drop_last`), and takes every
`num_replicas`-th index starting at its rank.
"""
import math

from ... import distributed as dist
from ... import random as core_random
from .sampler import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler needs num_replicas and rank, or an initialised "
                                   "process group to read them from")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            generator = core_random.Generator().manual_seed(self.seed + self.epoch)
            indices = core_random.randperm(n, generator=generator).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Make the next iteration use the permutation of `epoch` (the same on every rank)."""
        self.epoch = epoch
