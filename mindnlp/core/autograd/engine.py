# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The backward pass: walk the recorded graph from the outputs in dependency order.

Each node runs once, after every node that feeds it a gradient has run, with the summed
gradient of each of its outputs. Gradients are reduced to each input's shape (undoing
broadcasting) and dtype before they move on. A leaf's gradient is final as soon as every
edge that points at it has delivered (or been passed over): it then goes through the leaf's
hooks and is accumulated into `.grad` (or captured for `autograd.grad`), and the leaf's
post-accumulate hooks run at once, while the rest of the graph is still being walked. That
is what lets data-parallel training start reducing early gradients during backward.
Callbacks queued with `queue_callback` during a backward pass run when it ends.
"""
from . import grad_mode
from .function import Node


def _collect_dependencies(root_nodes):
    """How many edges from reachable nodes point at each node and at each leaf (by id)
    (iterative: graphs are deep)."""
    deps, leaf_deps = {}, {}
    seen = set(root_nodes)
    stack = list(root_nodes)
    while stack:
        node = stack.pop()
        for edge in node.next_functions:
            if edge is None:
                continue
            target = edge[0]
            if not isinstance(target, Node):
                leaf_deps[id(target)] = leaf_deps.get(id(target), 0) + 1
                continue
            deps[target] = deps.get(target, 0) + 1
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return deps, leaf_deps


_callback_stack = []  # one list of queued callbacks per backward pass in progress


def queue_callback(callback):
    """Run `callback()` when the backward pass in progress ends (after every gradient is
    accumulated), as torch's `Variable._execution_engine.queue_callback`."""
    if not _callback_stack:
        raise RuntimeError("queue_callback can only be called during a backward pass")
    _callback_stack[-1].append(callback)


def _reduce_to(grad, meta):
    """Sum a gradient over broadcast dimensions and cast it to the input's dtype."""
    from .. import ops

    shape, np_dtype = meta
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        if lead < 0:
            raise RuntimeError(f"gradient of shape {tuple(grad.shape)} is smaller than its input {tuple(shape)}")
        dims = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(shape) if n == 1 and grad.shape[i + lead] != 1
        )
        if dims:
            grad = ops.sum(grad, dim=dims, keepdim=True)
        if grad.shape != shape:  # drop the summed leading dims
            grad = ops.reshape(grad, shape)
    if grad._data.dtype != np_dtype:
        grad = grad.to(dtype=np_dtype)
    return grad


def _apply_hooks(hooks, grad):
    for hook in hooks:
        result = hook(grad)
        if result is not None:
            grad = result
    return grad


# The compiled-backward cache (core.jit.backward) while `set_context(backward="compiled")` is on.
compiled_backward = None
# Set by a compiled training forward (core.jit.training): the next backward runs compiled.
next_backward_compiled = False


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, accumulate=True, compiled=True):
    """Backpropagate from `tensors`; return the gradients of `inputs` when not accumulating.

    Under a compiled backward, a plain `.backward()` (accumulating into leaves, graph freed)
    of tensors that have history may replay a captured backward graph instead."""
    from .. import ops
    from .._tensor import Tensor

    global next_backward_compiled
    if retain_graph is None:
        retain_graph = create_graph
    cache = compiled_backward
    if next_backward_compiled:
        from ..jit.backward import CACHE as cache
        next_backward_compiled = False
    if (compiled and cache is not None and inputs is None and accumulate and not retain_graph
            and not _callback_stack and all(isinstance(t, Tensor) and t.grad_fn is not None and not t._hooks
                                            for t in tensors)
            and all(g is None and t.numel() == 1 or isinstance(g, Tensor) and g.shape == t.shape
                    for t, g in zip(tensors, grad_tensors))):
        if cache.run(tensors, grad_tensors):
            return []
    roots = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward expects tensors, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs (got shape {tuple(t.shape)})"
                )
            g = ops.ones_like(t)
        elif not isinstance(g, Tensor):
            g = ops.tensor(g, dtype=t.dtype, device=t.device)
        elif g.shape != t.shape:
            raise RuntimeError(f"grad of shape {tuple(g.shape)} does not match output of shape {tuple(t.shape)}")
        roots.append(((t.grad_fn, t._output_nr) if t.grad_fn is not None else (t, 0), g))

    wanted_nodes = {}  # (node, output_nr) -> index in inputs, for non-leaf inputs of autograd.grad
    wanted_leaves = {}  # id(leaf) -> index in inputs
    if inputs is not None:
        for idx, t in enumerate(inputs):
            if t.grad_fn is not None:
                wanted_nodes[(t.grad_fn, t._output_nr)] = idx
            else:
                wanted_leaves[id(t)] = idx
    captured = [None] * (len(inputs) if inputs is not None else 0)

    root_nodes = list({id(e[0]): e[0] for e, _ in roots if isinstance(e[0], Node)}.values())
    deps, leaf_deps = _collect_dependencies(root_nodes)
    for edge, _ in roots:
        if not isinstance(edge[0], Node):
            leaf_deps[id(edge[0])] = leaf_deps.get(id(edge[0]), 0) + 1
    buffers = {}
    leaf_grads = {}

    def finish_leaf(leaf, grad):
        if leaf._hooks:
            grad = _apply_hooks(leaf._hooks, grad)
        if inputs is not None and id(leaf) in wanted_leaves:
            captured[wanted_leaves[id(leaf)]] = grad
        if accumulate and (inputs is None or id(leaf) in wanted_leaves):
            if not create_graph:
                grad = grad.detach()
            leaf.grad = grad if leaf.grad is None else leaf.grad + grad
            for hook in leaf.__dict__.get("_post_accumulate_grad_hooks", ()):
                hook(leaf)

    def deliver(edge, grad):
        """Hand `grad` (None: this edge carries nothing) to a node's buffer or a leaf."""
        target, nr = edge
        if isinstance(target, Node):
            if grad is None:
                return
            buf = buffers.get(target)
            if buf is None:
                buf = buffers[target] = [None] * target._n_outputs
            buf[nr] = grad if buf[nr] is None else buf[nr] + grad
            return
        key = id(target)
        if grad is not None:
            entry = leaf_grads.get(key)
            if entry is None:
                leaf_grads[key] = [target, grad]
            else:
                entry[1] = entry[1] + grad
        leaf_deps[key] -= 1
        if leaf_deps[key] == 0 and key in leaf_grads:
            finish_leaf(*leaf_grads.pop(key))

    state = grad_mode._state
    prev_mode = state.enabled
    state.enabled = create_graph
    _callback_stack.append([])
    try:
        for edge, g in roots:
            deliver(edge, g)
        ready = [n for n in root_nodes if deps.get(n, 0) == 0]
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is not None:
                _run_node(node, grads, wanted_nodes, captured, deliver)
            else:  # nothing flows through this node, but its leaves must still hear so
                for edge in node.next_functions:
                    if edge is not None and not isinstance(edge[0], Node):
                        deliver(edge, None)
            for edge in node.next_functions:
                if edge is not None and isinstance(edge[0], Node):
                    target = edge[0]
                    deps[target] -= 1
                    if deps[target] == 0:
                        ready.append(target)
            if not retain_graph:
                node._release()
    finally:
        state.enabled = prev_mode
        callbacks = _callback_stack.pop()
    for callback in callbacks:
        callback()
    return captured


def _run_node(node, grads, wanted_nodes, captured, deliver):
    from .. import ops

    if node._released:
        raise RuntimeError(
            "Trying to backward through the graph a second time (or directly access saved tensors after "
            "they have already been freed). Specify retain_graph=True on the first backward call if you "
            "need to backward through the graph a second time."
        )
    for nr in range(len(grads)):
        if grads[nr] is None:
            continue
        if node._pre_hooks and nr in node._pre_hooks:
            grads[nr] = _apply_hooks(node._pre_hooks[nr], grads[nr])
        if node._retained and nr in node._retained:
            tensor = node._retained[nr]()
            if tensor is not None:
                g = grads[nr] if grad_mode.is_grad_enabled() else grads[nr].detach()
                tensor.grad = g if tensor.grad is None else tensor.grad + g
        key = (node, nr)
        if key in wanted_nodes:
            captured[wanted_nodes[key]] = grads[nr]
    if node.materialize_grads:
        for nr, g in enumerate(grads):
            if g is None and node._output_meta[nr] is not None:
                shape, np_dtype, device = node._output_meta[nr]
                grads[nr] = ops.zeros(shape, dtype=np_dtype, device=device)
    in_grads = node._fn.backward(node, *grads)
    if not isinstance(in_grads, tuple):
        in_grads = (in_grads,)
    n_inputs = len(node.next_functions)
    if len(in_grads) < n_inputs or any(g is not None for g in in_grads[n_inputs:]):
        raise RuntimeError(
            f"function {node.name()} returned {len(in_grads)} gradients, expected {n_inputs} "
            "(one per forward argument)"
        )
    for edge, grad, meta in zip(node.next_functions, in_grads, node._input_meta):
        if edge is not None:
            deliver(edge, None if grad is None else _reduce_to(grad, meta))
