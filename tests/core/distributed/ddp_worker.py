"""Run by test_distributed.py under `mindnlp run`: trains a small model data-parallel and, on
rank 0, the same model in one process on the full batch, then compares the weights."""
import contextlib
import json
import sys

import numpy as np

from mindnlp import core
from mindnlp.core import distributed as dist
from mindnlp.core.nn.parallel import DistributedDataParallel


class Net(core.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = core.nn.Linear(6, 16)
        self.unused = core.nn.Linear(16, 16)  # used only when the model is told to
        self.head = core.nn.Linear(16, 3)

    def forward(self, x, use_all=False):
        h = core.tanh(self.embed(x))
        if use_all:
            h = h + self.unused(h)
        return self.head(h)


def make_model(seed):
    core.manual_seed(seed)
    return Net()


def data(steps, batch):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((steps, batch, 6)).astype(np.float32)
    ys = rng.integers(0, 3, (steps, batch))
    return xs, ys


def train(model, xs, ys, rank, world, accumulate, use_all):
    """SGD steps on this rank's rows of each batch; with `accumulate`, each step is two
    half-batches, the first under no_sync."""
    opt = core.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = core.nn.CrossEntropyLoss()
    for x, y in zip(xs, ys):
        x, y = core.tensor(x[rank::world]), core.tensor(y[rank::world])
        opt.zero_grad()
        if accumulate:
            half = x.shape[0] // 2
            with model.no_sync():
                (loss_fn(model(x[:half], use_all=use_all), y[:half]) / 2).backward()
            (loss_fn(model(x[half:], use_all=use_all), y[half:]) / 2).backward()
        else:
            loss_fn(model(x, use_all=use_all), y).backward()
        opt.step()


def main():
    mode = sys.argv[1]
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    xs, ys = data(steps=4, batch=4 * world)
    # every rank seeds differently: the wrap must broadcast rank 0's weights
    ddp = DistributedDataParallel(make_model(seed=rank), bucket_cap_mb=0.001,
                                  find_unused_parameters=(mode == "unused"))  # "unused_without_flag": an error
    use_all = mode in ("all", "no_sync")
    train(ddp, xs, ys, rank, world, accumulate=(mode == "no_sync"), use_all=use_all)
    weights = {k: v.numpy() for k, v in ddp.module.state_dict().items()}
    gathered = [None] * world
    dist.all_gather_object(gathered, weights)
    if rank == 0:
        reference = make_model(seed=0)
        train(_Plain(reference), xs, ys, 0, 1, accumulate=(mode == "no_sync"), use_all=use_all)
        ref = {k: v.numpy() for k, v in reference.state_dict().items()}
        worst = max(float(np.abs(w[k] - ref[k]).max()) for w in gathered for k in ref)
        grads_of_unused = ddp.module.unused.weight.grad is None
        print(json.dumps({"max_diff": worst, "unused_grad_is_none": grads_of_unused}))
    dist.destroy_process_group()


class _Plain(core.nn.Module):
    """The single-process reference, with DDP's no_sync() as a no-op."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def no_sync(self):
        return contextlib.nullcontext()


if __name__ == "__main__":
    main()
