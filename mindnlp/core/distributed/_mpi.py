# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The MPI process group: torch.distributed's collectives on an MPI communicator (mpi4py).

MPI knows NumPy's dtypes but not float16 or bfloat16, and it reads host memory: a tensor
that MPI cannot use in place (a 16-bit float, a CUDA tensor, a non-contiguous view) is staged
through a contiguous host copy (16-bit floats widened to float32 so sums do not round at every
hop) and written back when the operation completes. Nonblocking operations return a `Work`
whose `wait()` completes the request and then does that write-back.
"""
import numpy as np

from .. import ops
from .._tensor import Tensor


class ReduceOp:
    """The reductions of torch.distributed.ReduceOp."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError(
            "mindnlp.core.distributed runs on MPI through mpi4py, which is not installed: "
            "pip install 'mindnlp[distributed]' (mpi4py and the mpich wheel)") from exc
    return MPI


def _mpi_op(op):
    MPI = _mpi()
    table = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
             ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}
    if op not in table:
        raise ValueError(f"unknown reduce op {op!r}: use one of ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR")
    return table[op]


class _Staged:
    """A host array MPI can read and write for `tensor`, and how to copy it back."""

    def __init__(self, tensor, name="tensor"):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name} must be a core.Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        data = tensor._data
        mpi_native = data.dtype.kind in "iuc" or data.dtype.kind == "f" and data.dtype.itemsize >= 4
        self.in_place = type(data) is np.ndarray and data.flags.c_contiguous and mpi_native
        if self.in_place:
            self.array = data
        else:
            host = np.ascontiguousarray(tensor.detach().cpu().numpy())
            if host.dtype.kind == "f" and host.dtype.itemsize < 4 or host.dtype.kind == "V":
                host = host.astype(np.float32)
            elif host.dtype == np.bool_:
                host = host.astype(np.uint8)
            self.array = host

    def write_back(self, scale=None):
        if scale is not None:
            if self.array.dtype.kind not in "fc":
                raise TypeError(f"ReduceOp.AVG needs a floating point tensor, got {self.tensor.dtype}")
            self.array /= scale
        if not self.in_place:
            with_dtype = ops.from_numpy(self.array).to(dtype=self.tensor.dtype, device=self.tensor.device)
            self.tensor.detach().copy_(with_dtype)


class Work:
    """The handle of an operation started with async_op=True: `wait()` blocks until it is done."""

    def __init__(self, request=None, finish=None, result=None):
        self._request = request
        self._finish = finish
        self._done = request is None
        self._result = result
        if self._done and finish is not None:
            finish()

    def wait(self, timeout=None):
        if not self._done:
            self._request.Wait()
            self._done = True
            if self._finish is not None:
                self._finish()
        return True

    def is_completed(self):
        if not self._done and self._request.Test():
            self.wait()
        return self._done

    def result(self):
        self.wait()
        return self._result


class ProcessGroup:
    """A set of ranks sharing an MPI communicator. Ranks given to collectives (src, dst) are
    global ranks, as in torch; `ranks` lists the global rank of each member in order."""

    def __init__(self, comm, ranks):
        self.comm = comm
        self.ranks = list(ranks)

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def group_rank(self, global_rank, what):
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"{what} rank {global_rank} is not in this process group (ranks {self.ranks})") from None

    # --- collectives on tensors ---
    def _run(self, blocking, nonblocking, async_op, finish):
        """Start an MPI operation, as a request when async, and finish it (write-backs)."""
        if async_op:
            return Work(nonblocking(), finish)
        blocking()
        finish()
        return None

    def all_reduce(self, tensor, op, async_op):
        MPI = _mpi()
        staged, mpi_op = _Staged(tensor), _mpi_op(op)
        scale = self.size() if op == ReduceOp.AVG else None
        return self._run(lambda: self.comm.Allreduce(MPI.IN_PLACE, staged.array, mpi_op),
                         lambda: self.comm.Iallreduce(MPI.IN_PLACE, staged.array, mpi_op),
                         async_op, lambda: staged.write_back(scale))

    def reduce(self, tensor, dst, op, async_op):
        MPI = _mpi()
        root, staged, mpi_op = self.group_rank(dst, "dst"), _Staged(tensor), _mpi_op(op)
        send = MPI.IN_PLACE if self.rank() == root else staged.array
        recv = staged.array if self.rank() == root else None
        scale = self.size() if op == ReduceOp.AVG else None

        def finish():
            if self.rank() == root:
                staged.write_back(scale)
        return self._run(lambda: self.comm.Reduce(send, recv, mpi_op, root=root),
                         lambda: self.comm.Ireduce(send, recv, mpi_op, root=root), async_op, finish)

    def broadcast(self, tensor, src, async_op):
        root, staged = self.group_rank(src, "src"), _Staged(tensor)
        return self._run(lambda: self.comm.Bcast(staged.array, root=root),
                         lambda: self.comm.Ibcast(staged.array, root=root), async_op, staged.write_back)

    def all_gather_into_tensor(self, output, input_, async_op):
        if output.numel() != input_.numel() * self.size():
            raise ValueError(f"all_gather_into_tensor: output has {output.numel()} elements, expected "
                             f"{input_.numel()} x world size {self.size()}")
        out, inp = _Staged(output, "output_tensor"), _Staged(input_, "input_tensor")
        _same_dtype(out, inp)
        return self._run(lambda: self.comm.Allgather(inp.array, out.array),
                         lambda: self.comm.Iallgather(inp.array, out.array), async_op, out.write_back)

    def reduce_scatter_tensor(self, output, input_, op, async_op):
        if input_.numel() != output.numel() * self.size():
            raise ValueError(f"reduce_scatter_tensor: input has {input_.numel()} elements, expected "
                             f"{output.numel()} x world size {self.size()}")
        out, inp = _Staged(output, "output"), _Staged(input_, "input")
        _same_dtype(out, inp)
        mpi_op = _mpi_op(op)
        scale = self.size() if op == ReduceOp.AVG else None
        return self._run(lambda: self.comm.Reduce_scatter_block(inp.array, out.array, mpi_op),
                         lambda: self.comm.Ireduce_scatter_block(inp.array, out.array, mpi_op),
                         async_op, lambda: out.write_back(scale))

    def gather_into(self, tensor, gathered, dst, async_op):
        """Gather every rank's tensor into `gathered` (a tensor of world-size rows) on dst."""
        root = self.group_rank(dst, "dst")
        inp = _Staged(tensor)
        out = _Staged(gathered, "gather_list") if gathered is not None else None
        recv = out.array if out is not None else None

        def finish():
            if out is not None:
                out.write_back()
        return self._run(lambda: self.comm.Gather(inp.array, recv, root=root),
                         lambda: self.comm.Igather(inp.array, recv, root=root), async_op, finish)

    def scatter_from(self, tensor, stacked, src, async_op):
        """Scatter the rows of `stacked` (given on src) into each rank's tensor."""
        root = self.group_rank(src, "src")
        out = _Staged(tensor)
        inp = _Staged(stacked, "scatter_list") if stacked is not None else None
        send = inp.array if inp is not None else None
        return self._run(lambda: self.comm.Scatter(send, out.array, root=root),
                         lambda: self.comm.Iscatter(send, out.array, root=root), async_op, out.write_back)

    def barrier(self, async_op):
        return self._run(self.comm.Barrier, self.comm.Ibarrier, async_op, lambda: None)

    def send(self, tensor, dst, tag):
        staged = _Staged(tensor)
        self.comm.Send(staged.array, dest=self.group_rank(dst, "dst"), tag=tag)

    def isend(self, tensor, dst, tag):
        staged = _Staged(tensor)
        return Work(self.comm.Isend(staged.array, dest=self.group_rank(dst, "dst"), tag=tag))

    def recv(self, tensor, src, tag):
        MPI = _mpi()
        staged, status = _Staged(tensor), MPI.Status()
        source = MPI.ANY_SOURCE if src is None else self.group_rank(src, "src")
        self.comm.Recv(staged.array, source=source, tag=tag, status=status)
        staged.write_back()
        return self.ranks[status.Get_source()]

    def irecv(self, tensor, src, tag):
        MPI = _mpi()
        staged = _Staged(tensor)
        source = MPI.ANY_SOURCE if src is None else self.group_rank(src, "src")
        return Work(self.comm.Irecv(staged.array, source=source, tag=tag), staged.write_back)


def _same_dtype(a, b):
    if a.array.dtype != b.array.dtype:
        raise TypeError(f"the tensors of one collective must share a dtype, got {a.tensor.dtype} and {b.tensor.dtype}")
