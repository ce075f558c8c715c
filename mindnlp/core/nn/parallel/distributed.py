# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`DistributedDataParallel`: each process runs the whole model on its share of the batch and
the gradients are averaged across processes during backward.

As torch's: parameters and buffers are broadcast from the group's first rank when the model is
wrapped (so every replica starts equal), and buffers again before each forward. Gradients are
reduced in buckets of about `bucket_cap_mb`, filled in reverse registration order (roughly the
order backward produces them). A post-accumulate hook on each parameter marks it ready; a full
bucket starts a nonblocking all-reduce at once, so communication overlaps the rest of backward.
Buckets are launched strictly in index order, which keeps the collectives of all ranks matched.
When backward ends every bucket is waited for and the averaged gradients are written back.

`no_sync()` skips the reduction (gradient accumulation: the next synchronised backward averages
the accumulated gradients). A parameter that gets no gradient is an error naming it, unless
`find_unused_parameters=True`: then it counts as zero, and keeps no gradient if no rank used it.
"""
import contextlib

from ... import distributed as dist
from ... import ops
from ...autograd import grad_mode
from ...autograd.engine import queue_callback
from ..._tensor import Tensor
from ..modules.module import Module


def _tensors_in(output):
    """Every tensor in a forward's output (a tensor, or tuples, lists and dicts of them, such as
    a ModelOutput)."""
    if isinstance(output, Tensor):
        yield output
    elif isinstance(output, dict):
        for value in output.values():
            yield from _tensors_in(value)
    elif isinstance(output, (tuple, list)):
        for value in output:
            yield from _tensors_in(value)


class _Bucket:
    def __init__(self, params):
        self.params = params
        self.ready = set()
        self.flat = None
        self.work = None


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel needs the default process group: call "
                               "core.distributed.init_process_group() first")
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self._source = dist.get_global_rank(process_group, 0)
        params = list({id(p): p for p in module.parameters() if p.requires_grad}.values())
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module has no parameter that "
                               "requires gradient")
        with grad_mode.no_grad():
            for tensor in params + list(module.buffers()):
                dist.broadcast(tensor.detach(), src=self._source, group=process_group)
        self._buckets = self._make_buckets(params, bucket_cap_mb * 1024 * 1024)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        self._syncing = False
        self._next_bucket = 0
        self._hooks = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in params]

    @staticmethod
    def _make_buckets(params, cap_bytes):
        """Consecutive parameters, last first, of one dtype and device, up to cap_bytes per bucket."""
        buckets, current, size = [], [], 0
        for p in reversed(params):
            nbytes = p.numel() * p.element_size()
            if current and (size + nbytes > cap_bytes or p.dtype != current[0].dtype or p.device != current[0].device):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(p)
            size += nbytes
        buckets.append(_Bucket(current))
        return buckets

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside only accumulate local gradients; the next one outside reduces them."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            with grad_mode.no_grad():
                for buffer in self.module.buffers():
                    dist.broadcast(buffer.detach(), src=self._source, group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            for tensor in _tensors_in(output):
                if tensor.requires_grad:
                    tensor.register_hook(self._on_backward_start)
        return output

    def _on_backward_start(self, grad):
        """The first gradient of an output: this backward must end with the reduction."""
        if not self._syncing:
            self._syncing = True
            self._next_bucket = 0
            for bucket in self._buckets:
                bucket.ready.clear()
                bucket.work = None
            queue_callback(self._finish_reduction)

    def _on_grad_ready(self, param):
        if not self._syncing:
            return
        bucket = self._bucket_of[id(param)]
        bucket.ready.add(id(param))
        self._launch_ready_buckets()

    def _launch_ready_buckets(self):
        while self._next_bucket < len(self._buckets):
            bucket = self._buckets[self._next_bucket]
            if len(bucket.ready) < len(bucket.params):
                return
            self._launch(bucket)
            self._next_bucket += 1

    def _launch(self, bucket):
        grads = [p.grad.reshape(-1) if id(p) in bucket.ready else ops.zeros(p.numel(), dtype=p.dtype, device=p.device)
                 for p in bucket.params]
        bucket.flat = ops.cat(grads)
        bucket.work = dist.all_reduce(bucket.flat, op=dist.ReduceOp.AVG, group=self.process_group, async_op=True)

    def _finish_reduction(self):
        self._syncing = False
        unused = [p for b in self._buckets[self._next_bucket:] for p in b.params if id(p) not in b.ready]
        if unused and not self.find_unused_parameters:
            names = {id(p): n for n, p in self.module.named_parameters()}
            raise RuntimeError(
                "DistributedDataParallel: these parameters received no gradient in this backward pass: "
                f"{[names.get(id(p), '?') for p in unused]}. Pass find_unused_parameters=True to "
                "DistributedDataParallel if some parameters are legitimately unused.")
        used_anywhere = None
        if self.find_unused_parameters:
            used_anywhere = self._globally_used()
        for bucket in self._buckets[self._next_bucket:]:
            self._launch(bucket)
        for bucket in self._buckets:
            bucket.work.wait()
            offset = 0
            for p in bucket.params:
                n = p.numel()
                if used_anywhere is None or used_anywhere[id(p)]:
                    averaged = bucket.flat[offset:offset + n].view(p.shape)
                    if p.grad is None:
                        p.grad = averaged.clone()
                    else:
                        p.grad.copy_(averaged)
                offset += n
            bucket.flat = bucket.work = None

    def _globally_used(self):
        """{id(param): whether any rank produced a gradient for it} (one small all-reduce)."""
        params = [p for b in self._buckets for p in b.params]
        flags = ops.tensor([float(id(p) in b.ready) for b in self._buckets for p in b.params])
        dist.all_reduce(flags, op=dist.ReduceOp.MAX, group=self.process_group)
        return {id(p): bool(flag) for p, flag in zip(params, flags.tolist())}
