"""Run by test_distributed.py under `mindnlp run`: DDP + ZeroRedundancyOptimizer(AdamW) against
one process with a plain AdamW on the full batch, and the consolidated state against the plain
optimizer's. Rank 0 prints one JSON line."""
import json

import numpy as np

from mindnlp import core
from mindnlp.core import distributed as dist
from mindnlp.core.distributed.optim import ZeroRedundancyOptimizer
from mindnlp.core.nn.parallel import DistributedDataParallel


def make_model():
    core.manual_seed(0)
    return core.nn.Sequential(core.nn.Linear(5, 12), core.nn.Tanh(), core.nn.Linear(12, 7), core.nn.Tanh(),
                              core.nn.Linear(7, 2))


def train(model, optimizer, rank, world, batch, steps=4):
    """`steps` AdamW steps on this rank's rows of each batch, with a learning-rate schedule."""
    rng = np.random.default_rng(1)
    scheduler = core.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for _ in range(steps):
        x = rng.standard_normal((batch, 5)).astype(np.float32)
        y = rng.standard_normal((batch, 2)).astype(np.float32)
        optimizer.zero_grad()
        core.nn.functional.mse_loss(model(core.tensor(x[rank::world])), core.tensor(y[rank::world])).backward()
        optimizer.step()
        scheduler.step()


def main():
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    model = make_model()
    zero = ZeroRedundancyOptimizer(model.parameters(), core.optim.AdamW, lr=0.05, weight_decay=0.1)
    owned = sum(p.numel() for g in zero.optim.param_groups for p in g["params"])
    train(DistributedDataParallel(model), zero, rank, world, batch=4 * world)
    zero.consolidate_state_dict(to=0)
    weights = [None] * world
    dist.all_gather_object(weights, [p.detach().numpy() for p in model.parameters()])
    owned_all = [None] * world
    dist.all_gather_object(owned_all, owned)
    # a new sharded optimizer resumes from the consolidated state: each rank keeps its own shard
    full = [zero.state_dict() if rank == 0 else None]
    dist.broadcast_object_list(full, src=0)
    resumed = ZeroRedundancyOptimizer(model.parameters(), core.optim.AdamW, lr=1.0)
    resumed.load_state_dict(full[0])
    index = resumed._global_index()
    resume_diff = max([0.0] + [float(np.abs(state["exp_avg"].numpy() - full[0]["state"][index[id(p)]]["exp_avg"].numpy())
                                     .max()) for p, state in resumed.state.items()])
    resume_diffs = [None] * world
    dist.all_gather_object(resume_diffs, (resume_diff, len(resumed.state), resumed.param_groups[0]["lr"]))
    if rank == 0:
        reference = make_model()
        plain = core.optim.AdamW(reference.parameters(), lr=0.05, weight_decay=0.1)
        train(reference, plain, 0, 1, batch=4 * world)
        ref = [p.detach().numpy() for p in reference.parameters()]
        weight_diff = max(float(np.abs(a - b).max()) for w in weights for a, b in zip(w, ref))
        ours, theirs = zero.state_dict(), plain.state_dict()
        state_diff = max(float(np.abs(ours["state"][i][k].numpy() - theirs["state"][i][k].numpy()).max())
                         for i in theirs["state"] for k in ("exp_avg", "exp_avg_sq"))
        # the consolidated state loads into a fresh plain optimizer
        fresh = core.optim.AdamW(make_model().parameters(), lr=1.0)
        fresh.load_state_dict(ours)
        print(json.dumps({"weight_diff": weight_diff, "state_diff": state_diff, "owned": owned_all,
                          "total": sum(p.numel() for p in model.parameters()),
                          "lr": fresh.param_groups[0]["lr"], "ref_lr": plain.param_groups[0]["lr"],
                          "resumed": resume_diffs}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
