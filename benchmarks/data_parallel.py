"""Data-parallel scaling: examples/finetune_lora.py (LoRA on all-MiniLM-L6-v2, SST-2 sample) on one
process and on N processes started by `mindnlp run`, same per-process batch, one run each.

    python benchmarks/data_parallel.py [--processes 2] [--train-size 2000] [--eval-size 200]

Reports training throughput (sentences per second) and the scaling efficiency
throughput(N) / (N x throughput(1)), with the accuracy of each run, the CPU and its roofline.
On one machine the processes share its cores and memory bandwidth: one process already uses
every core for its matrix products, so efficiency here says what the communication and the
smaller per-process share of the machine cost, not what N machines would give.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "finetune_lora.py")
sys.path.insert(0, HERE)

import roofline  # noqa: E402


def run(processes, args):
    command = [EXAMPLE, "--train-size", str(args.train_size), "--eval-size", str(args.eval_size)]
    if processes == 1:
        command = [sys.executable] + command
    else:
        command = [sys.executable, "-m", "mindnlp.launch", "--nproc-per-node", str(processes)] + command
    job = subprocess.run(command, capture_output=True, text=True)
    if job.returncode != 0:
        sys.exit(f"{processes} process(es) failed:\n{job.stderr[-3000:]}")
    return json.loads(job.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--train-size", type=int, default=2000)
    parser.add_argument("--eval-size", type=int, default=200)
    args = parser.parse_args()
    print(roofline.describe()[0])
    results = {n: run(n, args) for n in (1, args.processes)}
    base = results[1]["train_sentences"] / results[1]["train_seconds"]
    print(f"{'processes':>9} {'train s':>8} {'sentences/s':>12} {'efficiency':>10} {'accuracy':>9}")
    for n, summary in results.items():
        rate = summary["train_sentences"] / summary["train_seconds"]
        print(f"{n:>9} {summary['train_seconds']:>8.1f} {rate:>12.1f} {rate / (n * base):>10.2f} "
              f"{summary['accuracy']:>9.4f}")


if __name__ == "__main__":
    main()
