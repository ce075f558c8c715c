"""Direct array kernels for the ops a replay runs most, registered in lower.KERNELS.

A decode step's graph is mostly views and elementwise arithmetic (reshape, permute, slice,
add, ...), each tiny: the cost of replaying it through the op's `forward` (tensor shells,
promotion, ctx bookkeeping) is several times the NumPy call itself. Each builder here looks
at one captured node and returns the NumPy call it amounts to, specialised on what capture
saw (the output shape, the operands' dtypes, the constant arguments), or None where the
node is not the plain case, which then replays through `forward` as before. Host (NumPy)
arrays only; half-precision arithmetic keeps its float32 compute path through `forward`.
"""
import numpy as np

from ..ops import elementwise, shape
from .graph import SlotRef
from .lower import kernel_for

_HALF = (np.dtype(np.float16),)


def _on_host(node, graph):
    """The node's SlotRef operands (distinct, in read order) when every one is a host array."""
    refs = [a for a in node.args if isinstance(a, SlotRef)]
    if node.kwargs or [r.slot for r in refs] != node.reads():
        return None
    if any(getattr(graph.slots[r.slot].device, "type", "cpu") != "cpu" for r in refs):
        return None
    return refs


@kernel_for(shape.Reshape)
def _reshape(node, graph):
    if _on_host(node, graph) is None:
        return None
    out = graph.slots[node.outputs[0]].shape
    return lambda a: a.reshape(out)


@kernel_for(shape.Permute)
def _permute(node, graph):
    if _on_host(node, graph) is None:
        return None
    dims = tuple(node.args[1])
    return lambda a: a.transpose(dims)


@kernel_for(shape.Slice)
def _slice(node, graph):
    if _on_host(node, graph) is None:
        return None
    key = node.args[1]
    return lambda a: a[key]


_BINARY = {elementwise.Add: np.add, elementwise.Sub: np.subtract, elementwise.Mul: np.multiply,
           elementwise.Div: np.true_divide}


def _binary(node, graph):
    """a op b on arrays (or an array and a Python number), as the op's forward computes it
    for every dtype but the half ones."""
    refs = _on_host(node, graph)
    if refs is None or len(node.args) != 2 or any(graph.slots[r.slot].dtype in _HALF for r in refs) or \
            graph.slots[refs[0].slot].dtype.name == "bfloat16":
        return None
    fn = _BINARY[node.op]
    a, b = node.args
    if isinstance(a, SlotRef) and isinstance(b, SlotRef):
        return fn
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        return lambda x: fn(x, b)
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return lambda x: fn(a, x)
    return None


for _op in _BINARY:
    kernel_for(_op)(_binary)
