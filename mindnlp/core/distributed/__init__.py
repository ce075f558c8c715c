# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""torch.distributed's API on MPI: process groups, collectives, point-to-point, objects.

Start one process per worker with `mindnlp run --nproc-per-node N script.py` (or
`mpiexec -n N python script.py`), then `init_process_group("mpi")` in each. Ranks and world
size come from MPI; RANK / WORLD_SIZE / LOCAL_RANK are set in the environment as torchrun
sets them, and when they are already set they must agree with MPI's.

Every collective takes `group=` (None: every process) and `async_op=` (True: returns a
`Work` whose `wait()` completes it). `src`/`dst` are global ranks. MPI collectives cannot
time out: a rank that dies is handled by the launcher, which ends the whole job.
"""
import os


from .. import ops
from ._mpi import ProcessGroup, ReduceOp, Work, _mpi

__all__ = [
    "ReduceOp", "Work", "ProcessGroup", "GroupMember", "is_available", "is_mpi_available", "is_nccl_available",
    "init_process_group", "is_initialized", "destroy_process_group", "get_backend", "get_rank", "get_world_size",
    "new_group", "get_process_group_ranks", "get_global_rank", "barrier", "all_reduce", "reduce", "broadcast",
    "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather", "scatter",
    "send", "recv", "isend", "irecv", "all_gather_object", "broadcast_object_list", "gather_object",
    "scatter_object_list",
]

BACKENDS = ("mpi",)


class GroupMember:
    """`GroupMember.WORLD`: the default group once initialised (torch's spelling)."""

    WORLD = None


_state = {"backend": None}


def is_available():
    return True


def is_mpi_available():
    try:
        _mpi()
    except ImportError:
        return False
    return True


def is_nccl_available():
    """NCCL collectives (CuPy's cupy.cuda.nccl) are not implemented yet: MPI serves every device."""
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the job's default process group. `backend` "mpi" (or None) is the one backend;
    world_size and rank, when given, must be MPI's."""
    if is_initialized():
        raise RuntimeError("trying to initialize the default process group twice")
    backend = (backend or "mpi").lower()
    if backend not in BACKENDS:
        raise ValueError(f"unknown or unavailable backend {backend!r}: mindnlp.core.distributed runs on "
                         f"{', '.join(BACKENDS)} (NCCL through CuPy is not implemented yet)")
    MPI = _mpi()
    comm = MPI.COMM_WORLD
    for name, given, actual in (("world_size", world_size, comm.Get_size()), ("rank", rank, comm.Get_rank())):
        if given not in (-1, None) and int(given) != actual:
            raise ValueError(f"init_process_group({name}={given}) but MPI started this process with "
                             f"{name} {actual}: launch with `mindnlp run --nproc-per-node N` or `mpiexec -n N`")
    for var, actual in (("RANK", comm.Get_rank()), ("WORLD_SIZE", comm.Get_size())):
        if var in os.environ and int(os.environ[var]) != actual:
            raise ValueError(f"{var}={os.environ[var]} in the environment but MPI gives {actual}: "
                             "was the script started by another launcher?")
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    os.environ.update(RANK=str(comm.Get_rank()), WORLD_SIZE=str(comm.Get_size()),
                      LOCAL_RANK=str(local.Get_rank()), LOCAL_WORLD_SIZE=str(local.Get_size()))
    local.Free()
    GroupMember.WORLD = ProcessGroup(comm.Dup(), range(comm.Get_size()))
    _state["backend"] = backend


def is_initialized():
    return GroupMember.WORLD is not None


def _group(group):
    if GroupMember.WORLD is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return GroupMember.WORLD if group is None else group


def destroy_process_group(group=None):
    """Leave a group (None: the default group, and every group made from it)."""
    target = _group(group)
    target.comm.Free()
    if group is None or group is GroupMember.WORLD:
        GroupMember.WORLD = None
        _state["backend"] = None


def get_backend(group=None):
    _group(group)
    return _state["backend"]


def get_rank(group=None):
    """This process's rank in `group`; -1 when it is not a member (as torch)."""
    if group is not None and group.comm is None:
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    if group is not None and group.comm is None:
        return -1
    return _group(group).size()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False):
    """A group of the given global ranks (None: all). Every process of the job must call it, as
    in torch; one that is not a member gets a group whose rank and size are -1."""
    world = _group(None)
    ranks = sorted(range(world.size()) if ranks is None else {int(r) for r in ranks})
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is outside the world of {world.size()} processes")
    mpi_group = world.comm.Get_group().Incl(ranks)
    comm = world.comm.Create(mpi_group)
    mpi_group.Free()
    return ProcessGroup(comm if comm != _mpi().COMM_NULL else None, ranks)


def get_process_group_ranks(group):
    return list(_group(group).ranks)


def get_global_rank(group, group_rank):
    return _group(group).ranks[group_rank]


# --- collectives on tensors ---
def barrier(group=None, async_op=False, device_ids=None):
    return _group(group).barrier(async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group; every rank ends with the result, in place."""
    return _group(group).all_reduce(tensor, op, async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce `tensor` across the group into rank dst's tensor (the others keep theirs)."""
    return _group(group).reduce(tensor, dst, op, async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Copy rank src's tensor into every rank's tensor."""
    return _group(group).broadcast(tensor, src, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Concatenate every rank's input along dim 0 (or stack, for an output one dim larger) into output."""
    return _group(group).all_gather_into_tensor(output_tensor, input_tensor, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[i] = rank i's tensor, on every rank."""
    pg = _group(group)
    _check_list(tensor_list, pg.size(), tensor, "tensor_list")
    stacked = ops.empty((pg.size(), *tensor.shape), dtype=tensor.dtype, device=tensor.device)
    work = pg.all_gather_into_tensor(stacked, tensor, async_op)
    return _then(work, lambda: [t.detach().copy_(stacked[i]) for i, t in enumerate(tensor_list)])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):  # noqa: A002 (torch's name)
    """Reduce `input` (world-size chunks along dim 0) across ranks; rank i gets chunk i in output."""
    return _group(group).reduce_scatter_tensor(output, input, op, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce input_list[i] across ranks into rank i's output."""
    pg = _group(group)
    _check_list(input_list, pg.size(), output, "input_list")
    return pg.reduce_scatter_tensor(output, ops.stack(list(input_list)), op, async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """gather_list[i] = rank i's tensor, on rank dst only (the others pass no list)."""
    pg = _group(group)
    stacked = None
    if pg.rank() == pg.group_rank(dst, "dst"):
        _check_list(gather_list, pg.size(), tensor, "gather_list")
        stacked = ops.empty((pg.size(), *tensor.shape), dtype=tensor.dtype, device=tensor.device)
    elif gather_list:
        raise ValueError("gather: only the destination rank passes gather_list")
    work = pg.gather_into(tensor, stacked, dst, async_op)
    return _then(work, lambda: stacked is not None and [t.detach().copy_(stacked[i]) for i, t in
                                                         enumerate(gather_list)])


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank i's tensor = scatter_list[i] given on rank src."""
    pg = _group(group)
    stacked = None
    if pg.rank() == pg.group_rank(src, "src"):
        _check_list(scatter_list, pg.size(), tensor, "scatter_list")
        stacked = ops.stack(list(scatter_list)).contiguous()
    elif scatter_list:
        raise ValueError("scatter: only the source rank passes scatter_list")
    return pg.scatter_from(tensor, stacked, src, async_op)


def send(tensor, dst, group=None, tag=0):
    _group(group).send(tensor, dst, tag)


def recv(tensor, src=None, group=None, tag=0):
    """Receive into tensor from src (None: any rank); returns the sender's global rank."""
    return _group(group).recv(tensor, src, tag)


def isend(tensor, dst, group=None, tag=0):
    return _group(group).isend(tensor, dst, tag)


def irecv(tensor, src=None, group=None, tag=0):
    return _group(group).irecv(tensor, src, tag)


def _check_list(tensors, size, like, name):
    if tensors is None or len(tensors) != size:
        got = "None" if tensors is None else f"{len(tensors)} tensors"
        raise ValueError(f"{name} must hold one tensor per rank ({size}), got {got}")
    for t in tensors:
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ValueError(f"every tensor of {name} must have shape {tuple(like.shape)} and dtype {like.dtype}, "
                             f"got {tuple(t.shape)} {t.dtype}")


def _then(work, finish):
    """Run finish after work: now when it was blocking, at wait() when async."""
    if work is None:
        finish()
        return None
    inner = work._finish

    def both():
        if inner is not None:
            inner()
        finish()
    work._finish = both
    return work


# --- picklable objects (mpi4py's pickle-based collectives) ---
def all_gather_object(object_list, obj, group=None):
    pg = _group(group)
    if len(object_list) != pg.size():
        raise ValueError(f"object_list must have one slot per rank ({pg.size()}), got {len(object_list)}")
    object_list[:] = pg.comm.allgather(obj)


def broadcast_object_list(object_list, src=0, group=None, device=None):
    pg = _group(group)
    object_list[:] = pg.comm.bcast(list(object_list), root=pg.group_rank(src, "src"))


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    pg = _group(group)
    gathered = pg.comm.gather(obj, root=pg.group_rank(dst, "dst"))
    if gathered is not None:
        if object_gather_list is None or len(object_gather_list) != pg.size():
            raise ValueError(f"the destination rank must pass object_gather_list with {pg.size()} slots")
        object_gather_list[:] = gathered


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None):
    pg = _group(group)
    root = pg.group_rank(src, "src")
    if pg.rank() == root and (scatter_object_input_list is None or len(scatter_object_input_list) != pg.size()):
        raise ValueError(f"the source rank must pass scatter_object_input_list with {pg.size()} objects")
    scatter_object_output_list[0] = pg.comm.scatter(
        list(scatter_object_input_list) if pg.rank() == root else None, root=root)
