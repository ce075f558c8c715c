"""Tensor repr in torch's format: `tensor([[1.0000, 2.5000]], requires_grad=True)`."""
import numpy as np

from . import _dtype

_DEFAULT_SUFFIX_FREE = ("int64", "bool")


def _float_formatter(values):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    if finite.size == 0:
        return lambda x: f"{x}"
    if np.all(finite == np.round(finite)):
        if nonzero.size and nonzero.max() > 1e8:
            return lambda x: f"{x:.4e}"
        return lambda x: f"{x:.0f}." if np.isfinite(x) else f"{x}"
    if nonzero.size and (nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8 or nonzero.min() < 1e-4):
        return lambda x: f"{x:.4e}"
    return lambda x: f"{x:.4f}"


def tensor_repr(t):
    data = t._host()
    dt = t.dtype
    if dt.is_floating_point:
        data = data.astype(np.float64)
        fmt = _float_formatter(data.reshape(-1))
        width = max((len(fmt(v)) for v in data.reshape(-1)), default=0)

        def formatter(x):
            return fmt(x).rjust(width)

        options = {"float_kind": formatter}
    elif dt is _dtype.bool_:
        options = {"bool": lambda x: "True" if x else "False"}
    else:
        options = None
    if data.ndim == 0:
        body = options["float_kind"](data.item()).strip() if dt.is_floating_point else repr(data.item())
    else:
        body = np.array2string(
            data, separator=", ", prefix="tensor(", formatter=options, threshold=1000, edgeitems=3, max_line_width=80
        )
    suffix = []
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if not (dt is _dtype.get_default_dtype() or dt.name in _DEFAULT_SUFFIX_FREE):
        suffix.append(f"dtype={dt}")
    if data.size == 0 and data.ndim != 1:
        suffix.append(f"size={tuple(data.shape)}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"
