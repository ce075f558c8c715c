"""Prefill and decode of a Mixtral-shaped small MoE (8 experts, top-2) beside HF transformers + PyTorch.

    python benchmarks/moe.py [--prompt-length 256] [--new-tokens 32] [--repeats 3]
                             [--torch-python PYTHON] [--no-torch] [--compiled]

The model (float32, random weights seeded, Mixtral's proportions at a small size: see
`CONFIG`) is built and saved once by mindnlp, in the per-expert layout of published Mixtral
checkpoints, and loaded by both libraries. Each library runs in its own process (torch's idle
threads would otherwise compete with NumPy's) and the two take turns, one greedy generate()
of `new_tokens` tokens at batch size 1 each, `repeats` times; the best of each is reported:

- prefill tokens/s: the prompt over the time from calling generate() to its first token;
- decode tokens/s: one over the mean time between later tokens (one cached step each).

With `--compiled`, a third process runs mindnlp with HF's compiled-generation recipe (a static
cache and the forward under `core.compile`): each decode step replays one captured graph, its
experts run without host-side grouping, gathering the two chosen experts' weights.
HF transformers runs under `--torch-python` (default: this interpreter), so torch may live in
another virtual environment. The same run names the CPU and measures its roofline
(benchmarks/roofline.py): prefill as a share of the float32 matmul peak (flops of the
tokens' active parameters), decode as a share of the bound set by streaming the active
weights (attention, router, two experts per layer, the LM head) at copy bandwidth. Ratio =
mindnlp speed / torch speed (above 1 is faster).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from generate import StepClock
from roofline import describe

CONFIG = dict(vocab_size=32000, hidden_size=1024, intermediate_size=3584, num_hidden_layers=4,
              num_attention_heads=16, num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2,
              max_position_embeddings=4096, rope_parameters={"rope_type": "default", "rope_theta": 1e6})


def build(directory):
    from mindnlp import core
    from mindnlp.transformers import MixtralConfig, MixtralForCausalLM

    core.manual_seed(0)
    MixtralForCausalLM(MixtralConfig(**CONFIG)).save_pretrained(directory)


def active_parameters(config):
    """(parameters a token's products use, weights a decode step streams): attention, router,
    top-k experts per layer and the LM head; the embedding is a row lookup."""
    h, i, heads = config["hidden_size"], config["intermediate_size"], config["num_attention_heads"]
    kv = h // heads * config["num_key_value_heads"]
    per_layer = 2 * h * h + 2 * h * kv + h * config["num_local_experts"] + config["num_experts_per_tok"] * 3 * h * i
    return config["num_hidden_layers"] * per_layer + h * config["vocab_size"]


def serve(library, folder, prompt_length, new_tokens):
    """Worker: load the model, generate once to warm up, then one timed generate() per "run" line
    on stdin, replying with its prefill and mean decode-step seconds and the new tokens."""
    if library.startswith("mindnlp"):
        from mindnlp import core as backend
        from mindnlp.transformers import AutoModelForCausalLM, LogitsProcessorList
    else:
        import torch as backend
        from transformers import AutoModelForCausalLM, LogitsProcessorList
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=backend.float32).eval()
    if library == "mindnlp-compiled":
        model.generation_config.cache_implementation = "static"
        model.forward = backend.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    prompt = backend.tensor([[(7 * j) % 31000 + 1 for j in range(prompt_length)]])

    def run():
        clock = StepClock()
        start = time.perf_counter()
        with backend.no_grad():
            out = model.generate(prompt, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                                 logits_processor=LogitsProcessorList([clock]))
        return {"prefill": clock.times[0] - start,
                "decode": (clock.times[-1] - clock.times[0]) / (len(clock.times) - 1),
                "tokens": out[0, prompt_length:].tolist()}

    run()
    reply({})
    for line in sys.stdin:
        if line.strip() == "run":
            reply(run())


def reply(message):
    print(json.dumps(message), flush=True)


class Worker:
    """One library's serving process, driven one command at a time."""

    def __init__(self, python, library, folder, prompt_length, new_tokens):
        command = [python, __file__, "--serve", library, "--model", folder, "--prompt-length", str(prompt_length),
                   "--new-tokens", str(new_tokens)]
        self.name = library
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=dict(os.environ, HF_HUB_OFFLINE="1"))
        self.read()

    def run(self):
        self.process.stdin.write("run\n")
        self.process.stdin.flush()
        return self.read()

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.name} worker exited (code {self.process.wait()}); its errors are above")
        return json.loads(line)

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def torch_side_available(python):
    probe = "import importlib.util as u; print(bool(u.find_spec('torch') and u.find_spec('transformers')))"
    return subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.strip() == "True"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-length", type=int, default=256)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="timed generate() calls per library, alternating")
    parser.add_argument("--torch-python", default=sys.executable, help="the Python that has torch + transformers")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--compiled", action="store_true", help="also time mindnlp's compiled decoding")
    parser.add_argument("--serve", choices=["mindnlp", "mindnlp-compiled", "torch"], help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.model, args.prompt_length, args.new_tokens)
        return

    pythons = {"mindnlp": sys.executable}
    if args.compiled:
        pythons["mindnlp-compiled"] = sys.executable
    if not args.no_torch and torch_side_available(args.torch_python):
        pythons["torch"] = args.torch_python
    best, tokens, machine, peak_gflops, peak_gbs = {}, {}, None, 0.0, 0.0
    with tempfile.TemporaryDirectory() as folder:
        build(folder)
        workers = [Worker(python, library, folder, args.prompt_length, args.new_tokens)
                   for library, python in pythons.items()]
        for _ in range(args.repeats):
            line, gflops, gbs = describe()
            if gflops > peak_gflops:
                machine, peak_gflops, peak_gbs = line, gflops, gbs
            for worker in workers:
                time.sleep(0.5)  # let the other library's threads go idle
                result = worker.run()
                prefill, decode = best.get(worker.name, (float("inf"), float("inf")))
                best[worker.name] = (min(prefill, result["prefill"]), min(decode, result["decode"]))
                tokens[worker.name] = result["tokens"]
        for worker in workers:
            worker.close()

    active = active_parameters(CONFIG)
    decode_bound = peak_gbs * 1e9 / (4 * active)
    print(machine)
    print(f"Mixtral-shaped MoE, {CONFIG['num_local_experts']} experts top-{CONFIG['num_experts_per_tok']}, "
          f"{CONFIG['num_hidden_layers']} layers, hidden {CONFIG['hidden_size']}, {active / 1e6:.0f}M active "
          f"parameters per token; float32, batch 1, prompt {args.prompt_length}, {args.new_tokens} new tokens, "
          f"best of {args.repeats} alternating runs")
    print(f"  {'library':16} {'prefill tok/s':>13} {'% of matmul peak':>17} {'decode tok/s':>13} {'% of copy bound':>16}")
    for library, (prefill, decode) in best.items():
        prefill_rate, decode_rate = args.prompt_length / prefill, 1 / decode
        share = 2 * active * prefill_rate / 1e9 / peak_gflops
        print(f"  {library:16} {prefill_rate:13.1f} {100 * share:16.0f}% {decode_rate:13.2f} "
              f"{100 * decode_rate / decode_bound:15.0f}%")
    if "torch" in best:
        tp, td = best["torch"]
        for library in (name for name in best if name.startswith("mindnlp")):
            mp, md = best[library]
            same = "identical" if tokens["torch"] == tokens[library] else "different"
            print(f"  ratio ({library} / torch): prefill {tp / mp:.2f}x, decode {td / md:.2f}x; greedy tokens {same}")


if __name__ == "__main__":
    main()
