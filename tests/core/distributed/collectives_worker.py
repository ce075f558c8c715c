"""Run by test_distributed.py under `mindnlp run`: every collective on every rank, checked
against the same reduction computed with NumPy from all ranks' inputs (which each rank can
rebuild: rank r's input is a known function of r). Each rank writes the names of the checks it
passed to <output dir>/rank<r>.json (files, not stdout: MPI may interleave the ranks' output)."""
import json
import os
import sys

import numpy as np

from mindnlp import core
from mindnlp.core import distributed as dist


def value(rank, shape=(2, 3), dtype=np.float32):
    """Rank r's input: distinct per rank and per element, exact in every dtype used."""
    return (np.arange(np.prod(shape)).reshape(shape) + 10 * rank + 1).astype(dtype)


PASSED = []


def check(name, got, want):
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                               rtol=1e-6, atol=0, err_msg=name)
    PASSED.append(name)


def main():
    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    everyone = np.stack([value(k) for k in range(n)])
    reductions = {dist.ReduceOp.SUM: everyone.sum(0), dist.ReduceOp.AVG: everyone.mean(0),
                  dist.ReduceOp.MAX: everyone.max(0), dist.ReduceOp.MIN: everyone.min(0),
                  dist.ReduceOp.PRODUCT: everyone.prod(0)}
    for op, want in reductions.items():
        for dtype in (core.float32, core.float64, core.float16, core.bfloat16):
            if dtype in (core.float16, core.bfloat16) and op == dist.ReduceOp.PRODUCT:
                continue  # products overflow 16-bit floats
            t = core.tensor(value(r)).to(dtype)
            dist.all_reduce(t, op=op)
            check(f"all_reduce {op} {dtype}", t.float().numpy(), want)  # small integers and halves: exact
        t = core.tensor(value(r))
        work = dist.all_reduce(t, op=op, async_op=True)
        work.wait()
        check(f"all_reduce async {op}", t.numpy(), want)
    ints = core.tensor(value(r, dtype=np.int64))
    dist.all_reduce(ints)
    check("all_reduce int64", ints.numpy(), everyone.sum(0))
    view = core.tensor(value(r, shape=(3, 2))).t()  # non-contiguous: staged and written back
    dist.all_reduce(view)
    check("all_reduce non-contiguous", view.numpy(), np.stack([value(k, (3, 2)) for k in range(n)]).sum(0).T)

    t = core.tensor(value(r))
    dist.reduce(t, dst=n - 1)
    check("reduce", t.numpy(), everyone.sum(0) if r == n - 1 else value(r))

    t = core.tensor(value(r))
    dist.broadcast(t, src=1)
    check("broadcast", t.numpy(), value(1))

    out = [core.zeros(2, 3) for _ in range(n)]
    dist.all_gather(out, core.tensor(value(r)))
    check("all_gather", np.stack([o.numpy() for o in out]), everyone)
    flat = core.zeros(n * 2, 3)
    dist.all_gather_into_tensor(flat, core.tensor(value(r)))
    check("all_gather_into_tensor", flat.numpy(), everyone.reshape(n * 2, 3))

    chunks = np.stack([value(k, shape=(n, 2)) for k in range(n)])  # rank k's input, n chunks of 2
    out = core.zeros(2)
    dist.reduce_scatter_tensor(out, core.tensor(value(r, shape=(n, 2)).reshape(-1)))
    check("reduce_scatter_tensor", out.numpy(), chunks.sum(0)[r])
    out = core.zeros(2)
    dist.reduce_scatter(out, [core.tensor(row) for row in value(r, shape=(n, 2))], op=dist.ReduceOp.MAX)
    check("reduce_scatter max", out.numpy(), chunks.max(0)[r])

    gathered = [core.zeros(2, 3) for _ in range(n)] if r == 0 else None
    dist.gather(core.tensor(value(r)), gathered, dst=0)
    if r == 0:
        check("gather", np.stack([g.numpy() for g in gathered]), everyone)
    out = core.zeros(2, 3)
    dist.scatter(out, [core.tensor(value(k) * 2) for k in range(n)] if r == 0 else None, src=0)
    check("scatter", out.numpy(), value(r) * 2)

    peer = (r + 1) % n
    if r % 2 == 0:
        dist.send(core.tensor(value(r)), dst=peer, tag=7)
    inbox = core.zeros(2, 3)
    if r % 2 == 1 or (n % 2 == 1 and r == 0):
        sender = dist.recv(inbox, tag=7)
        check("send/recv", inbox.numpy(), value(sender))
        check("recv sender", [sender], [(r - 1) % n])
    if n % 2 == 1 and r == n - 1:
        dist.send(core.tensor(value(r)), dst=0, tag=7)
    req = dist.isend(core.tensor(value(r)), dst=peer, tag=9)
    box = core.zeros(2, 3)
    dist.irecv(box, src=(r - 1) % n, tag=9).wait()
    req.wait()
    check("isend/irecv", box.numpy(), value((r - 1) % n))

    objects = [None] * n
    dist.all_gather_object(objects, {"rank": r, "text": "x" * r})
    check("all_gather_object", [o["rank"] for o in objects], list(range(n)))
    box = [{"step": 3}, "a"] if r == 0 else [None, None]
    dist.broadcast_object_list(box, src=0)
    check("broadcast_object_list", [box[0]["step"], len(box[1])], [3, 1])
    got = [None] * n if r == 0 else None
    dist.gather_object(r * r, got, dst=0)
    if r == 0:
        check("gather_object", got, [k * k for k in range(n)])
    out = [None]
    dist.scatter_object_list(out, [k + 100 for k in range(n)] if r == 0 else None, src=0)
    check("scatter_object_list", out, [r + 100])

    group = dist.new_group([0, 1])
    if r in (0, 1):
        t = core.tensor(value(r))
        dist.all_reduce(t, group=group)
        check("group all_reduce", t.numpy(), value(0) + value(1))
        check("group rank", [dist.get_rank(group), dist.get_world_size(group)], [r, 2])
    else:
        check("non-member rank", [dist.get_rank(group), dist.get_world_size(group)], [-1, -1])
    dist.barrier()
    with open(os.path.join(sys.argv[1], f"rank{r}.json"), "w") as f:
        json.dump(PASSED, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
