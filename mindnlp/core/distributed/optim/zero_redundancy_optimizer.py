# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`ZeroRedundancyOptimizer`: the optimizer state sharded across the ranks of a data-parallel job.

Each parameter is owned by one rank (the largest parameters are dealt out first, each to the
rank holding the fewest elements so far, as torch does). A rank keeps optimizer state only for
the parameters it owns and updates only those; after its step every owner broadcasts its
updated parameters (one flat buffer per owner), so all replicas hold the same weights again.
Gradients must already be averaged (DistributedDataParallel does it). Adam's two moments then
cost 1/world_size of their size per rank.

`param_groups` lists every parameter, so learning-rate schedulers work unchanged; hyper-parameters
are copied to the local optimizer before each step. `state_dict()` needs
`consolidate_state_dict(to=rank)` first, and gives the state of every parameter in the layout a
plain optimizer of `optimizer_class` uses; `load_state_dict` takes that layout on every rank.
"""
from ... import ops
from ...autograd import grad_mode
from ...optim.optimizer import Optimizer
from .. import broadcast, gather_object, get_global_rank, get_rank, get_world_size


class ZeroRedundancyOptimizer(Optimizer):
    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer(overlap_with_ddp=True) is not supported: step after "
                                      "backward instead")
        self.process_group = process_group
        self.optimizer_class = optimizer_class
        self.rank, self.world_size = get_rank(process_group), get_world_size(process_group)
        super().__init__(params, defaults)
        self._owner = self._partition()
        local_groups = [{**{k: v for k, v in g.items() if k not in ("params", "param_names")},
                         "params": [p for p in g["params"] if self._owner[id(p)] == self.rank]}
                        for g in self.param_groups]
        self.optim = optimizer_class(local_groups, **defaults)
        self._consolidated = None

    def _partition(self):
        """{id(param): owning rank}: largest first, each to the least-loaded rank."""
        load = [0] * self.world_size
        owner = {}
        params = [p for g in self.param_groups for p in g["params"]]
        for p in sorted(params, key=lambda t: -t.numel()):
            rank = min(range(self.world_size), key=lambda r: load[r])
            owner[id(p)] = rank
            load[rank] += p.numel()
        return owner

    @property
    def state(self):
        return self.optim.state

    @state.setter
    def state(self, value):  # Optimizer.__init__ assigns an empty state; ours is the local optimizer's
        if value:
            raise AttributeError("ZeroRedundancyOptimizer's state lives in its local optimizer")

    def step(self, closure=None):
        """Update this rank's parameters, then share them with the others; returns closure()'s loss."""
        for ours, local in zip(self.param_groups, self.optim.param_groups):
            local.update({k: v for k, v in ours.items() if k not in ("params", "param_names")})
        loss = self.optim.step(closure)
        with grad_mode.no_grad():
            for rank in range(self.world_size):
                owned = [p for g in self.param_groups for p in g["params"] if self._owner[id(p)] == rank]
                if not owned:
                    continue
                flat = ops.cat([p.detach().reshape(-1) for p in owned])
                broadcast(flat, src=get_global_rank(self.process_group, rank), group=self.process_group)
                offset = 0
                for p in owned:
                    p.detach().copy_(flat[offset:offset + p.numel()].view(p.shape))
                    offset += p.numel()
        return loss

    def _global_index(self):
        """{id(param): its index in a plain optimizer's state_dict}."""
        return {id(p): i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}

    def consolidate_state_dict(self, to=0):
        """Gather every rank's optimizer state onto rank `to` (a collective: every rank calls it)."""
        index = self._global_index()
        local = self.optim.state_dict()
        local_params = [p for g in self.optim.param_groups for p in g["params"]]
        mine = {index[id(local_params[i])]: {k: v.cpu() if hasattr(v, "cpu") else v for k, v in s.items()}
                for i, s in local["state"].items()}
        gathered = [None] * self.world_size if self.rank == to else None
        gather_object(mine, gathered, dst=get_global_rank(self.process_group, to), group=self.process_group)
        self._consolidated = None
        if gathered is not None:
            state = {}
            for part in gathered:
                state.update(part)
            self._consolidated = state

    def state_dict(self):
        if self._consolidated is None:
            raise RuntimeError("call consolidate_state_dict(to=rank) on every rank first; state_dict() then "
                               "works on that rank")
        index = self._global_index()
        groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [index[id(p)] for p in g["params"]]}
                  for g in self.param_groups]
        return {"state": dict(sorted(self._consolidated.items())), "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a plain optimizer's state_dict (every rank passes the whole of it)."""
        saved_groups = state_dict["param_groups"]
        if [len(g["params"]) for g in saved_groups] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError("loaded state dict's parameter groups do not match this optimizer's (sizes "
                             f"{[len(g['params']) for g in saved_groups]} vs "
                             f"{[len(g['params']) for g in self.param_groups]})")
        index = self._global_index()
        local_params = [p for g in self.optim.param_groups for p in g["params"]]
        by_index = {index[id(p)]: i for i, p in enumerate(local_params)}
        local_groups = [{**{k: v for k, v in saved.items() if k not in ("params", "param_names")},
                         "params": [by_index[i] for i in saved["params"] if i in by_index]}
                        for saved in state_dict["param_groups"]]
        self.optim.load_state_dict({"state": {by_index[i]: s for i, s in state_dict["state"].items() if i in by_index},
                                    "param_groups": local_groups})
        for ours, saved in zip(self.param_groups, state_dict["param_groups"]):
            ours.update({k: v for k, v in saved.items() if k not in ("params", "param_names")})

    def _update_group(self, group):
        raise RuntimeError("ZeroRedundancyOptimizer steps through its local optimizer")
