"""Per-op overhead and throughput of mindnlp.core, side by side with PyTorch when installed.

    python benchmarks/core_ops.py [--repeats 7] [--only matmul,sum] [--no-torch]

Small tensors (8x8) measure the fixed cost of one op call (argument handling, dtype
promotion, Function.apply, wrapping); large ones (1024x1024 elementwise and reductions,
512x512 matmul) measure throughput. Each op runs forward only (no tensor requires grad) and
forward + backward (inputs require grad, `out.backward(ones)`). Every figure is the median
over the repeats of the mean time per call; the ratio is mindnlp time / torch time in the
same run (torch keeps its default thread count; NumPy elementwise ops use one core).
"""
import argparse
import statistics
import time

import numpy as np

from mindnlp import core
from mindnlp.core.nn import functional as core_functional

try:
    import torch
except ImportError:  # the table then has mindnlp's column only
    torch = None

SMALL, LARGE, MATMUL_LARGE, ROWS = (8, 8), (1024, 1024), (512, 512), (64, 32000)


def _functional(lib):
    return core_functional if lib is core else lib.nn.functional


# name -> (shapes of the float inputs per size, the op written against either library)
OPS = {
    "add": (2, lambda lib, a, b: a + b),
    "mul": (2, lambda lib, a, b: a * b),
    "matmul": (2, lambda lib, a, b: a @ b),
    "exp": (1, lambda lib, a: lib.exp(a)),
    "sum": (1, lambda lib, a: a.sum()),
    "sum(dim=-1)": (1, lambda lib, a: a.sum(-1)),
    "softmax(dim=-1)": (1, lambda lib, a: _functional(lib).softmax(a, dim=-1)),
    "var(dim=-1)": (1, lambda lib, a: a.var(-1)),
    "logsumexp(dim=-1)": (1, lambda lib, a: lib.logsumexp(a, -1)),
    "cumsum(dim=-1)": (1, lambda lib, a: lib.cumsum(a, -1)),
    "norm(dim=-1)": (1, lambda lib, a: lib.linalg.vector_norm(a, dim=-1)),
    "a[:, 1:5]": (1, lambda lib, a: a[:, 1:5]),
    "a[idx]": (1, lambda lib, a: a[_index(lib, a)]),
    "cat": (2, lambda lib, a, b: lib.cat([a, b], 0)),
    "view+transpose": (1, lambda lib, a: a.view(a.shape[1], a.shape[0]).transpose(0, 1)),
    "sort(dim=-1)": (1, lambda lib, a: lib.sort(a, -1)[0]),
    "topk(k=50)": (1, lambda lib, a: lib.topk(a, 50 if a.shape[-1] > 50 else 2)[0]),
}

_INDEX_CACHE = {}


def _index(lib, a):
    """A fixed integer index (every other row) built once per library and size."""
    key = (lib.__name__, a.shape[0])
    if key not in _INDEX_CACHE:
        _INDEX_CACHE[key] = lib.arange(0, a.shape[0], 2)
    return _INDEX_CACHE[key]


def _shape_for(name, size):
    if size == "small":
        return SMALL
    if name == "matmul":
        return MATMUL_LARGE
    if name.startswith("topk"):
        return ROWS
    return LARGE


def _make_inputs(lib, arrays, requires_grad):
    if lib is core:
        return [core.tensor(a, requires_grad=requires_grad) for a in arrays]
    return [torch.tensor(a, requires_grad=requires_grad) for a in arrays]


def _time_per_call(fn, repeats, budget_s):
    """Median over repeats of the mean per-call time, with the loop length chosen so that one
    repeat takes about budget_s."""
    fn()
    start = time.perf_counter()
    for _ in range(3):
        fn()
    once = max((time.perf_counter() - start) / 3, 1e-7)
    number = max(1, int(budget_s / once))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


def _runner(lib, op, arrays, backward):
    inputs = _make_inputs(lib, arrays, backward)
    if not backward:
        no_grad = lib.no_grad
        with no_grad():
            op(lib, *inputs)

        def forward():
            with no_grad():
                op(lib, *inputs)

        return forward
    grad = lib.ones_like(op(lib, *inputs))

    def forward_backward():
        for t in inputs:
            t.grad = None
        op(lib, *inputs).backward(grad)

    return forward_backward


def run(names, repeats, use_torch, budget_s):
    rng = np.random.default_rng(0)
    rows = []
    for size in ("small", "large"):
        for name in names:
            n_inputs, op = OPS[name]
            shape = _shape_for(name, size)
            arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(n_inputs)]
            for backward in (False, True):
                ours = _time_per_call(_runner(core, op, arrays, backward), repeats, budget_s)
                theirs = _time_per_call(_runner(torch, op, arrays, backward), repeats, budget_s) if use_torch else None
                rows.append((name, "x".join(map(str, shape)), "fwd+bwd" if backward else "fwd", ours, theirs))
    return rows


def _fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def print_table(rows):
    header = ("op", "shape", "pass", "mindnlp", "torch", "mindnlp/torch")
    lines = [header]
    for name, shape, mode, ours, theirs in rows:
        ratio = f"{ours / theirs:.1f}x" if theirs else "-"
        lines.append((name, shape, mode, _fmt_time(ours), _fmt_time(theirs), ratio))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print("  ".join(cell.ljust(w) if j < 3 else cell.rjust(w) for j, (cell, w) in enumerate(zip(line, widths))))
        if i == 0:
            print("  ".join("-" * w for w in widths))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9, help="timed repeats per figure (the median is shown)")
    parser.add_argument("--budget", type=float, default=0.02, help="seconds per repeat (sets the loop length)")
    parser.add_argument("--only", default="", help="comma-separated op names to run (default: all)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        parser.error(f"unknown ops {unknown}; choose from {list(OPS)}")
    use_torch = torch is not None and not args.no_torch
    print(f"mindnlp.core vs torch {torch.__version__ if use_torch else '(not installed)'}; "
          f"median of {args.repeats} repeats")
    print_table(run(names, args.repeats, use_torch, args.budget))


if __name__ == "__main__":
    main()
