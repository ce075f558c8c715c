# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The launcher: `mindnlp run --nproc-per-node N script.py args...` (also
`python -m mindnlp.launch ...`) starts N processes of the script through MPI's
`mpiexec`, as torchrun does for torch.

Each process starts in `worker_main`, which sets RANK, WORLD_SIZE, LOCAL_RANK and
LOCAL_WORLD_SIZE from MPI before the script runs (scripts written for torchrun read them at
import time). A rank whose script raises prints its traceback and aborts the MPI job, so the
other ranks end instead of waiting forever in a collective; `mpiexec` ends the job too when a
rank is killed. `--hostfile` passes MPI a list of machines to go beyond one node.
"""
import argparse
import os
import runpy
import shutil
import subprocess
import sys
import traceback


def find_mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), else the first on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("mindnlp run needs MPI's mpiexec: pip install 'mindnlp[distributed]' "
                                "(mpi4py and the mpich wheel)")
    return found


def build_command(nproc_per_node, script, script_args, hostfile=None, module=False):
    if nproc_per_node < 1:
        raise ValueError(f"--nproc-per-node must be at least 1, got {nproc_per_node}")
    command = [find_mpiexec(), "-n", str(nproc_per_node)]
    if hostfile:
        if not os.path.isfile(hostfile):
            raise FileNotFoundError(f"hostfile {hostfile} does not exist")
        command += ["-f", hostfile]
    target = ["-m", script] if module else [script]
    return command + [sys.executable, "-m", "mindnlp.launch", "--worker"] + target + list(script_args)


def launch(nproc_per_node, script, script_args, hostfile=None, module=False):
    """Run the job; returns mpiexec's exit status (non-zero when any rank failed)."""
    if not module and not os.path.isfile(script):
        raise FileNotFoundError(f"script {script} does not exist")
    return subprocess.call(build_command(nproc_per_node, script, script_args, hostfile, module))


def worker_main(argv):
    """Inside one MPI process: set torchrun's environment variables, then run the script as __main__."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    os.environ.update(RANK=str(comm.Get_rank()), WORLD_SIZE=str(comm.Get_size()),
                      LOCAL_RANK=str(local.Get_rank()), LOCAL_WORLD_SIZE=str(local.Get_size()))
    share_cores(local.Get_rank(), local.Get_size())
    local.Free()
    module = argv[0] == "-m"
    target = argv[1] if module else argv[0]
    sys.argv = [target] + argv[(2 if module else 1):]
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (None, 0):
            _report(f"[rank {comm.Get_rank()}] exited with status {exc.code}; ending the job\n")
            comm.Abort(exc.code if isinstance(exc.code, int) else 1)
        raise
    except BaseException:
        _report(f"[rank {comm.Get_rank()}] failed; ending the job:\n{traceback.format_exc()}")
        comm.Abort(1)


def share_cores(local_rank, local_size):
    """Give each process of a machine its own share of the cores (pinned, and the BLAS/OpenMP thread
    counts set to match), as torchrun sets OMP_NUM_THREADS: processes that each start a thread per
    core of the machine would fight over every core. Left alone when OMP_NUM_THREADS is set."""
    if local_size == 1 or "OMP_NUM_THREADS" in os.environ or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    share = max(1, len(cores) // local_size)
    first = (local_rank * share) % len(cores)
    os.sched_setaffinity(0, cores[first:first + share])
    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(share)


def _report(message):
    """Write to stderr in one system call, so that the ranks' reports do not interleave."""
    sys.stderr.flush()
    os.write(2, message.encode("utf-8", "replace"))


def add_arguments(parser):
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        help="processes to start on this machine")
    parser.add_argument("--hostfile", help="MPI hostfile listing the machines of a multi-node job")
    parser.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    parser.add_argument("script", help="the training script (or module, with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return worker_main(argv[1:])
    parser = argparse.ArgumentParser(prog="mindnlp run", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    return launch(args.nproc_per_node, args.script, args.script_args, args.hostfile, args.module)


if __name__ == "__main__":
    sys.exit(main())
