"""Training steps eager, with the backward compiled, and compiled whole, beside torch.

    python benchmarks/compiled_backward.py [--repeats 5]

Three ways to run the same step: eager; `set_context(backward="compiled")` (forward eager,
backward replayed); and the model wrapped in `core.compile` (forward replayed through the
ops' autograd Functions, backward replayed). Workloads (random weights, float32, AdamW): a
MiniLM-shaped BERT classifier (6 layers, hidden 384) on 8 x 64 tokens, and a Llama of
SmolLM-135M's width (hidden 576, 9 heads / 3 key-value heads, intermediate 1536, vocabulary
49152) cut to 6 layers, as a causal LM on 4 x 64 tokens (use_cache=False, as in training).
Each figure is the median over `repeats` steps after two warm-up steps (the first ones
capture). "of peak" is the fastest variant's matrix-product flops (6 per weight per token)
over its time, as a fraction of the machine's float32 matmul peak measured in the same run.
torch + HF transformers run the same steps in a process of their own, when importable.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import roofline  # noqa: E402

import mindnlp  # noqa: E402
from mindnlp import core  # noqa: E402
from mindnlp.transformers import BertConfig, BertForSequenceClassification, LlamaConfig, LlamaForCausalLM  # noqa: E402


BERT = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
            hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
LLAMA = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=9,
             num_key_value_heads=3, tie_word_embeddings=True)
WORKLOADS = {
    "MiniLM-shaped BERT, 8x64": ("BertConfig", "BertForSequenceClassification", BERT, (8, 64), True),
    "SmolLM-width Llama (6 layers), 4x64": ("LlamaConfig", "LlamaForCausalLM", LLAMA, (4, 64), False),
}


def _median_step(step, repeats):
    step()
    step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _step(lib, model, ids, labels, compiled_forward=False):
    opt = lib.optim.AdamW(model.parameters(), lr=1e-4)
    forward = lib.compile(model) if compiled_forward else model

    def step():
        forward(input_ids=ids, labels=labels, use_cache=False).loss.backward()
        opt.step()
        opt.zero_grad()
    return step


def _torch_step_seconds(name, repeats):
    """torch's median step for the workload `name`, measured in a process of its own: torch
    loads its own OpenMP runtime, whose settings would otherwise hold for mindnlp's kernels
    too (and mindnlp's for torch's)."""
    command = [sys.executable, os.path.abspath(__file__), "--torch-worker", name, "--repeats", str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        return None
    answer = result.stdout.split()[-1]
    return None if answer == "none" else float(answer)      # "none": torch or transformers not importable


def _torch_worker(name, repeats):
    try:
        import torch
        import transformers
    except ImportError:
        print("none")
        return
    config_name, model_name, config, shape, classify = WORKLOADS[name]
    ids, labels = _inputs(config, shape, classify)
    torch.manual_seed(0)
    ref = getattr(transformers, model_name)(getattr(transformers, config_name)(**config)).train()
    print(_median_step(_step(torch, ref, torch.tensor(ids), torch.tensor(labels)), repeats))


def _inputs(config, shape, classify):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, config["vocab_size"], shape)
    return ids, (rng.integers(0, 2, shape[:1]) if classify else ids)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        _torch_worker(args.torch_worker, args.repeats)
        return
    line, gflops, _ = roofline.describe()
    print(line)
    mine = {"BertConfig": BertConfig, "BertForSequenceClassification": BertForSequenceClassification,
            "LlamaConfig": LlamaConfig, "LlamaForCausalLM": LlamaForCausalLM}
    header = (f"{'workload':38} {'eager s':>8} {'bwd compiled s':>15} {'compiled s':>11} {'speedup':>8} "
              f"{'of peak':>8} {'torch s':>8} {'torch/best':>11}")
    print(header)
    print("-" * len(header))
    for name, (config_name, model_name, config, shape, classify) in WORKLOADS.items():
        ids, labels = _inputs(config, shape, classify)
        core.manual_seed(0)
        model = mine[model_name](mine[config_name](**config)).train()
        times = {}
        for variant, backward, compiled_forward in (("eager", "eager", False), ("backward", "compiled", False),
                                                    ("compiled", "compiled", True)):
            mindnlp.set_context(backward=backward)
            step = _step(core, model, core.tensor(ids), core.tensor(labels), compiled_forward)
            times[variant] = _median_step(step, args.repeats)
        mindnlp.set_context(backward="eager")
        best = min(times["backward"], times["compiled"])
        torch_cell = ratio_cell = "-"
        torch_s = _torch_step_seconds(name, args.repeats)
        if torch_s is not None:
            torch_cell, ratio_cell = f"{torch_s:.3f}", f"{torch_s / best:.2f}x"
        weights = sum(p.numel() for n, p in model.named_parameters() if p.ndim == 2 and "embed" not in n)
        peak = 6 * weights * ids.size / best / 1e9 / gflops
        print(f"{name:38} {times['eager']:8.3f} {times['backward']:15.3f} {times['compiled']:11.3f} "
              f"{times['eager'] / best:7.2f}x {peak:8.1%} {torch_cell:>8} {ratio_cell:>11}")

if __name__ == "__main__":
    main()
