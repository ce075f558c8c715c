"""Training-step time (forward + backward + AdamW step) of an MLP and a transformer block.

    python benchmarks/train_step.py

Prints mindnlp's median step time beside PyTorch's when torch is installed, with the ratio
mindnlp / torch from the same run (below 1 means mindnlp is faster). Both sides start from
identical weights and inputs.
"""
import statistics
import time

import numpy as np

from mindnlp import core

try:
    import torch
except ImportError:
    torch = None

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


class Block:
    """A pre-norm transformer block built from either library's nn."""

    @staticmethod
    def build(lib, dim=256, heads=4):
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


def copy_weights(src_torch, dst_core):
    state = {k: core.from_numpy(v.detach().numpy().copy()) for k, v in src_torch.state_dict().items()}
    dst_core.load_state_dict(state)


def make_step(lib, model, inputs, target):
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        out = model(inputs)
        loss = lib.nn.functional.mse_loss(out, target)
        loss.backward()
        optimizer.step()

    return step


def bench(name, build, input_shape, output_shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(input_shape).astype(np.float32)
    y = rng.standard_normal(output_shape).astype(np.float32)
    ours = build(core)
    row = [name]
    if torch is not None:
        torch.manual_seed(0)
        theirs = build(torch)
        copy_weights(theirs, ours)
        torch_time = median_time(make_step(torch, theirs, torch.from_numpy(x), torch.from_numpy(y)))
    core_time = median_time(make_step(core, ours, core.from_numpy(x), core.from_numpy(y)))
    row.append(f"{core_time * 1e3:9.2f} ms")
    if torch is not None:
        row += [f"{torch_time * 1e3:9.2f} ms", f"{core_time / torch_time:6.2f}x"]
    print("  ".join(f"{c:>14s}" if i else f"{c:32s}" for i, c in enumerate(row)))


def main():
    header = ["step (fwd+bwd+AdamW)", "mindnlp"] + (["torch", "ratio"] if torch is not None else [])
    print("  ".join(f"{c:>14s}" if i else f"{c:32s}" for i, c in enumerate(header)))
    bench("MLP 512-2048-2048-10, batch 256", mlp, (256, 512), (256, 10))
    bench("transformer block d256 h4, 8x128", Block.build, (8, 128, 256), (8, 128, 256))


if __name__ == "__main__":
    main()
