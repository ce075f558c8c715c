"""All-reduce bandwidth of mindnlp.core.distributed against the MPI library's own, in one job.

    mindnlp run --nproc-per-node 2 benchmarks/allreduce.py [--max-mb 64]

For each message size, rank 0 prints the time of `core.distributed.all_reduce` on a float32 tensor
and of mpi4py's `Allreduce` on a NumPy array of the same size (the MPI library's own figure, with
nothing of mindnlp in between), as algorithm bandwidth (bytes / time) and bus bandwidth
(algorithm bandwidth x 2(n-1)/n: the bytes each process sends and receives in a ring all-reduce,
comparable across process counts), with the ratio of the two. The machine's copy bandwidth is
measured in the same run: processes on one machine exchange data through shared memory, so
that is the ceiling.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mpi4py import MPI  # noqa: E402

import roofline  # noqa: E402
from mindnlp import core  # noqa: E402
from mindnlp.core import distributed as dist  # noqa: E402


def best_time(fn, repeats):
    """The fastest of `repeats` synchronised runs (each starts after a barrier)."""
    best = float("inf")
    for _ in range(repeats):
        MPI.COMM_WORLD.Barrier()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return MPI.COMM_WORLD.allreduce(best, op=MPI.MAX)  # the slowest rank's best bounds the collective


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-mb", type=float, default=64)
    args = parser.parse_args()
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        line = roofline.describe()[0]
        print(f"{line}\n{world} processes, MPI: {MPI.Get_library_version().splitlines()[0].strip()}")
        print(f"{'bytes':>12} {'mindnlp us':>11} {'MPI us':>9} {'mindnlp busbw GB/s':>19} "
              f"{'MPI busbw GB/s':>15} {'MPI / mindnlp time':>19}")
    size = 1024
    while size <= args.max_mb * 2 ** 20:
        n = size // 4
        repeats = max(5, min(200, int(2e8 // size)))
        tensor = core.ones(n)
        array = np.ones(n, dtype=np.float32)
        ours = best_time(lambda tensor=tensor: dist.all_reduce(tensor), repeats)
        theirs = best_time(lambda array=array: MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, array, MPI.SUM), repeats)
        if rank == 0:
            bus = 2 * (world - 1) / world
            print(f"{size:>12} {ours * 1e6:>11.1f} {theirs * 1e6:>9.1f} {size / ours * bus / 1e9:>19.2f} "
                  f"{size / theirs * bus / 1e9:>15.2f} {theirs / ours:>19.2f}")
        size *= 4
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
