"""Eager vs compiled (core.compile) forward time, beside torch eager (and torch.compile) when importable.

    python benchmarks/compile.py [--repeats 7] [--threads N] [--torch-compile] [--torch-python PYTHON]

Workloads: the tiny GPT-2 and Llama checkpoints of tests/fixtures, called on one token
(a decode step's shape without a cache; `generate.py --compiled` times compiled decoding
with a static KV cache) and on 16 tokens, and a MiniLM-shaped BERT (6 layers, hidden 384; random weights) encoding a
batch of 8 x 32 tokens. Tiny models measure the per-op dispatch that replay removes; the
MiniLM shape shows it beside real kernel work. Last, four pre-norm blocks written by hand
against the torch-like API (SmolLM's width: a norm as x * rsqrt(mean(x^2) + eps) * w,
masked attention scores, the tanh GELU as its formula; random weights) on 1 and 256 positions:
the model families are written as fused ops, user code like this is what the graph pass that
fuses elementwise chains serves. Each figure is the best of the repeats of
the mean time per call, under no_grad; the machine's roofline is measured in the same run.

torch runs each workload in a process of its own (under --torch-python, default this
interpreter): loaded beside mindnlp, its OpenMP runtime would set the spinning of the threads
numba's pool shares with it, and slow mindnlp's products (a MiniLM-shaped encode 42 -> 49 ms).
With --torch-compile that process also times torch.compile of the same model.
"""
import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roofline  # noqa: E402

from mindnlp import core  # noqa: E402
from mindnlp.core import nn  # noqa: E402
from mindnlp.transformers import AutoModel, AutoModelForCausalLM, BertConfig, BertModel  # noqa: E402

torch = transformers = None   # imported in the torch worker process only

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
MINILM = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
              intermediate_size=1536, max_position_embeddings=512)


def _time(fn, repeats, budget=0.3):
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-6)
    loops = max(1, int(budget / once))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def _workloads():
    """(name, model, inputs as NumPy arrays or plain values, tokens, a builder of torch's model)."""
    rng = np.random.default_rng(0)
    gpt2 = os.path.join(FIXTURES, "gpt2", "gpt2", "model")
    llama = os.path.join(FIXTURES, "decoders", "llama", "model")
    for name, path in (("gpt2-tiny", gpt2), ("llama-tiny", llama)):
        model = AutoModelForCausalLM.from_pretrained(path).eval()
        for length in (1, 16):
            ids = rng.integers(0, model.config.vocab_size, (1, length))
            yield f"{name} forward, {length} token(s)", model, {"input_ids": ids, "use_cache": False}, length, \
                (lambda p=path: transformers.AutoModelForCausalLM.from_pretrained(p).eval())
    config = BertConfig(**MINILM)
    core.manual_seed(0)
    model = BertModel(config).eval()
    ids = rng.integers(0, MINILM["vocab_size"], (8, 32))
    yield "MiniLM-shaped encode, 8x32", model, {"input_ids": ids}, ids.size, \
        (lambda: transformers.BertModel(transformers.BertConfig(**MINILM)).eval())
    core.manual_seed(0)
    blocks = _hand_written_blocks(core, nn)
    for length in (1, 256):
        x = rng.standard_normal((1, length, 576)).astype(np.float32)
        mask = np.triu(np.full((length, length), -1e9, np.float32), 1)
        yield f"hand-written blocks, {length} position(s)", blocks, {"x": x, "mask": mask}, length, \
            (lambda blocks=blocks: _torch_copy(_hand_written_blocks(torch, torch.nn), blocks))


def _hand_written_blocks(lib, lib_nn, count=4, width=576, heads=9, inner=1536):
    """`count` pre-norm transformer blocks built from the library's (torch's or the core's)
    plain ops, as a user would write them."""
    class Block(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.out = lib_nn.Linear(width, 3 * width, bias=False), lib_nn.Linear(width, width, bias=False)
            self.up, self.down = lib_nn.Linear(width, inner), lib_nn.Linear(inner, width)
            self.norm1, self.norm2 = lib_nn.Parameter(lib.ones(width)), lib_nn.Parameter(lib.ones(width))

        @staticmethod
        def norm(x, weight):
            return x * lib.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight

        def forward(self, x, mask):
            b, t, d = x.shape
            q, k, v = (z.view(b, t, heads, -1).transpose(1, 2) for z in self.qkv(self.norm(x, self.norm1)).split(d, -1))
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // heads) + mask
            attended = lib.softmax(scores, -1) @ v
            x = x + self.out(attended.transpose(1, 2).reshape(b, t, d)) * 0.5
            u = self.up(self.norm(x, self.norm2))
            return x + self.down(0.5 * u * (1 + lib.tanh(0.7978845608 * (u + 0.044715 * u * u * u))))

    class Blocks(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = lib_nn.ModuleList([Block() for _ in range(count)])

        def forward(self, x, mask):
            for block in self.blocks:
                x = block(x, mask)
            return x
    return Blocks().eval()


def _torch_copy(model, source):
    """torch's model with the core model's weights."""
    model.load_state_dict({name: torch.tensor(p.numpy()) for name, p in source.state_dict().items()})
    return model


def _as(lib_tensor, inputs):
    return {k: lib_tensor(v) if isinstance(v, np.ndarray) else v for k, v in inputs.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None, help="core.set_num_threads before timing")
    parser.add_argument("--torch-compile", action="store_true", help="also time torch.compile of each model")
    parser.add_argument("--torch-python", default=sys.executable, help="the Python that has torch + transformers")
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        _torch_worker(args.torch_worker, args.repeats, args.torch_compile)
        return
    if args.threads:
        core.set_num_threads(args.threads)
    line, gflops, _ = roofline.describe()
    print(line)
    header = (f"{'workload':38} {'eager ms':>9} {'compiled ms':>12} {'speedup':>8} {'of peak':>8} {'torch ms':>9} "
              f"{'torch/compiled':>15}" + (f" {'torch.compile ms':>17} {'t.c./compiled':>14}" if args.torch_compile else ""))
    print(header)
    print("-" * len(header))
    for name, model, inputs, tokens, _ in _workloads():
        kwargs = _as(core.tensor, inputs)
        compiled = core.compile(model.forward)
        with core.no_grad():
            eager_s = _time(lambda model=model, kwargs=kwargs: model(**kwargs), args.repeats)
            compiled(**kwargs)
            assert not compiled.breaks, compiled.breaks
            compiled_s = _time(lambda compiled=compiled, kwargs=kwargs: compiled(**kwargs), args.repeats)
        cells = []
        for torch_s in _torch_seconds(args, name):
            cells += ["-", "-"] if torch_s is None else [f"{torch_s * 1e3:.3f}", f"{torch_s / compiled_s:.2f}x"]
        peak = _flops(model, tokens) / compiled_s / 1e9 / gflops
        print(f"{name:38} {eager_s * 1e3:9.3f} {compiled_s * 1e3:12.3f} {eager_s / compiled_s:7.2f}x {peak:8.2%} "
              f"{cells[0]:>9} {cells[1]:>15}" + (f" {cells[2]:>17} {cells[3]:>14}" if args.torch_compile else ""))


def _torch_seconds(args, name):
    """torch's eager (and, with --torch-compile, torch.compile's) seconds per call of the
    workload `name`, from a process of its own; None where torch is not importable there."""
    command = [args.torch_python, os.path.abspath(__file__), "--torch-worker", name, "--repeats", str(args.repeats)]
    result = subprocess.run(command + (["--torch-compile"] if args.torch_compile else []), capture_output=True,
                            text=True)
    figures = result.stdout.split()[-2:] if result.returncode == 0 else ["none", "none"]
    return [None if f == "none" else float(f) for f in figures][:2 if args.torch_compile else 1]


def _torch_worker(name, repeats, with_compile):
    """Print torch's eager and torch.compile seconds per call of one workload ("none" where not run)."""
    global torch, transformers
    try:
        import torch
        import transformers
    except ImportError:
        print("none none")
        return
    _, _, inputs, _, make_torch = next(w for w in _workloads() if w[0] == name)
    ref, kwargs = make_torch(), _as(torch.tensor, inputs)
    with torch.no_grad():
        eager = _time(lambda: ref(**kwargs), repeats)
        compiled = "none"
        if with_compile:
            fast = torch.compile(ref)
            fast(**kwargs)
            compiled = _time(lambda: fast(**kwargs), repeats)
    print(eager, compiled)


def _flops(model, tokens):
    """Matrix-product flops of a forward: 2 per weight per token (embeddings excluded)."""
    weights = sum(p.numel() for n, p in model.named_parameters() if p.ndim == 2 and "embed" not in n and "wte" not in
                  n and "wpe" not in n)
    return 2 * weights * tokens


if __name__ == "__main__":
    main()
