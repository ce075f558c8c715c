"""Training-step time (forward + backward + AdamW step) of an MLP and a transformer block.

    python benchmarks/train_step.py

Prints mindnlp's median step time beside PyTorch's when torch is installed, with the ratio
mindnlp / torch from the same run (below 1 means mindnlp is faster). Both sides start from
identical weights and inputs. Each time is also given as the share of the machine's float32
matrix-product peak (roofline.py, measured in the same run) that the step's products would
take at that rate: 6 flops per weight per row (forward, and both gradients of each product),
the attention's products left out.

torch runs in a process of its own, which also draws the starting weights (seeded) and hands
them over in a file: in one process, torch's idle OpenMP threads spin on the cores numba's
pool then runs mindnlp's kernels on (a transformer block's step measured 58 ms beside torch,
36 ms alone).
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPEATS = 15


def median_time(step, repeats=REPEATS):
    step()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mlp(lib):
    return lib.nn.Sequential(lib.nn.Linear(512, 2048), lib.nn.GELU(), lib.nn.Linear(2048, 2048), lib.nn.GELU(),
                             lib.nn.Linear(2048, 10))


def block(lib, dim=256, heads=4):
    """A pre-norm transformer block built from either library's nn."""
    F = lib.nn.functional

    class TransformerBlock(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = lib.nn.LayerNorm(dim)
            self.qkv = lib.nn.Linear(dim, 3 * dim)
            self.proj = lib.nn.Linear(dim, dim)
            self.ln2 = lib.nn.LayerNorm(dim)
            self.fc1 = lib.nn.Linear(dim, 4 * dim)
            self.fc2 = lib.nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(attn.transpose(1, 2).reshape(b, t, dim))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    return TransformerBlock()


# name -> (builder, input shape, output shape)
WORKLOADS = {
    "MLP 512-2048-2048-10, batch 256": (mlp, (256, 512), (256, 10)),
    "transformer block d256 h4, 8x128": (block, (8, 128, 256), (8, 128, 256)),
}


def make_step(lib, model, inputs, target):
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        out = model(inputs)
        loss = lib.nn.functional.mse_loss(out, target)
        loss.backward()
        optimizer.step()

    return step


def batch(name):
    _, input_shape, output_shape = WORKLOADS[name]
    rng = np.random.default_rng(0)
    return (rng.standard_normal(input_shape).astype(np.float32), rng.standard_normal(output_shape).astype(np.float32))


def torch_worker(name, weights_path):
    """In the torch process: build the workload (seeded), save its starting weights, print the
    median step time."""
    import torch

    torch.manual_seed(0)
    model = WORKLOADS[name][0](torch)
    np.savez(weights_path, **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    x, y = batch(name)
    print(json.dumps(median_time(make_step(torch, model, torch.from_numpy(x), torch.from_numpy(y)))))


def step_flops(model, rows):
    """6 flops per weight of every matrix (2-D parameter) per input row: the forward product,
    the input's gradient and the weight's."""
    return 6 * rows * sum(p.numel() for p in model.parameters() if p.ndim == 2)


def bench(name, peak_gflops, with_torch):
    from mindnlp import core

    model = WORKLOADS[name][0](core)
    torch_time = None
    if with_torch:
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "weights.npz")
            result = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", name, path],
                                    capture_output=True, text=True, check=True)
            torch_time = json.loads(result.stdout.strip().splitlines()[-1])
            model.load_state_dict({k: core.from_numpy(v.copy()) for k, v in np.load(path).items()})
    x, y = batch(name)
    core_time = median_time(make_step(core, model, core.from_numpy(x), core.from_numpy(y)))
    flops = step_flops(model, int(np.prod(x.shape[:-1])))

    def timed(seconds):
        return f"{seconds * 1e3:7.2f} ms {flops / seconds / 1e9 / peak_gflops:4.0%}"

    row = [name, timed(core_time)]
    if torch_time is not None:
        row += [timed(torch_time), f"{core_time / torch_time:6.2f}x"]
    print("  ".join(f"{c:>14s}" if i else f"{c:32s}" for i, c in enumerate(row)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-worker", nargs=2, metavar=("WORKLOAD", "WEIGHTS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        torch_worker(*args.torch_worker)
        return
    from roofline import describe

    line, peak_gflops, _ = describe()
    print(line)
    with_torch = importlib.util.find_spec("torch") is not None
    header = ["step (fwd+bwd+AdamW)", "mindnlp, of peak"] + (["torch, of peak", "ratio"] if with_torch else [])
    print("  ".join(f"{c:>14s}" if i else f"{c:32s}" for i, c in enumerate(header)))
    for name in WORKLOADS:
        bench(name, peak_gflops, with_torch)


if __name__ == "__main__":
    main()
