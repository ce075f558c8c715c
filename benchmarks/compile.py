"""Eager vs compiled (core.compile) forward time, beside torch eager when importable.

    python benchmarks/compile.py [--repeats 7] [--threads N]

Workloads: the tiny GPT-2 and Llama checkpoints of tests/fixtures, called on one token
(a decode step's shape without a cache; `generate.py --compiled` times compiled decoding
with a static KV cache) and on 16 tokens, and a MiniLM-shaped BERT (6 layers, hidden 384; random weights) encoding a
batch of 8 x 32 tokens. Tiny models measure the per-op dispatch that replay removes; the
MiniLM shape shows it beside real kernel work. Each figure is the best of the repeats of
the mean time per call, under no_grad; the machine's roofline is measured in the same run.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roofline  # noqa: E402

from mindnlp import core  # noqa: E402
from mindnlp.transformers import AutoModel, AutoModelForCausalLM, BertConfig, BertModel  # noqa: E402

try:
    import torch
    import transformers
except ImportError:            # the table then has mindnlp's columns only
    torch = transformers = None

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
    rng = np.random.default_rng(0)
    gpt2 = os.path.join(FIXTURES, "gpt2", "gpt2", "model")
    llama = os.path.join(FIXTURES, "decoders", "llama", "model")
    for name, path in (("gpt2-tiny", gpt2), ("llama-tiny", llama)):
        model = AutoModelForCausalLM.from_pretrained(path).eval()
        for length in (1, 16):
            ids = rng.integers(0, model.config.vocab_size, (1, length))
            yield f"{name} forward, {length} token(s)", model, ids, {"use_cache": False}, \
                (lambda p=path: transformers.AutoModelForCausalLM.from_pretrained(p).eval())
    config = BertConfig(**MINILM)
    core.manual_seed(0)
    model = BertModel(config).eval()
    ids = rng.integers(0, MINILM["vocab_size"], (8, 32))
    yield "MiniLM-shaped encode, 8x32", model, ids, {}, \
        (lambda: transformers.BertModel(transformers.BertConfig(**MINILM)).eval())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None, help="core.set_num_threads before timing")
    args = parser.parse_args()
    if args.threads:
        core.set_num_threads(args.threads)
    line, gflops, _ = roofline.describe()
    print(line)
    header = (f"{'workload':34} {'eager ms':>9} {'compiled ms':>12} {'speedup':>8} {'of peak':>8} {'torch ms':>9} "
              f"{'torch/compiled':>15}")
    print(header)
    print("-" * len(header))
    for name, model, ids, extra, make_torch in _workloads():
        x = core.tensor(ids)
        compiled = core.compile(model.forward)
        with core.no_grad():
            eager_s = _time(lambda model=model, x=x, extra=extra: model(input_ids=x, **extra), args.repeats)
            compiled(input_ids=x, **extra)
            assert not compiled.breaks, compiled.breaks
            compiled_s = _time(lambda compiled=compiled, x=x, extra=extra: compiled(input_ids=x, **extra), args.repeats)
        torch_cell, ratio_cell = "-", "-"
        if torch is not None:
            ref = make_torch()
            tx = torch.tensor(ids)
            with torch.no_grad():
                torch_s = _time(lambda ref=ref, tx=tx, extra=extra: ref(input_ids=tx, **extra), args.repeats)
            torch_cell, ratio_cell = f"{torch_s * 1e3:.3f}", f"{torch_s / compiled_s:.2f}x"
        peak = _flops(model, ids) / compiled_s / 1e9 / gflops
        print(f"{name:34} {eager_s * 1e3:9.3f} {compiled_s * 1e3:12.3f} {eager_s / compiled_s:7.2f}x {peak:8.2%} "
              f"{torch_cell:>9} {ratio_cell:>15}")


def _flops(model, ids):
    """Matrix-product flops of a forward: 2 per weight per token (embeddings excluded)."""
    weights = sum(p.numel() for n, p in model.named_parameters() if p.ndim == 2 and "embed" not in n and "wte" not in
                  n and "wpe" not in n)
    return 2 * weights * ids.size


if __name__ == "__main__":
    main()
