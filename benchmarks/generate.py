"""Prefill and decode speed of mindnlp beside HF transformers + PyTorch, in one run.

    python benchmarks/generate.py [--prompt-length 512] [--new-tokens 64] [--repeats 3]
                                  [--models gpt2 smollm mistral qwen3 t5] [--compiled] [--dtype bfloat16]

Each model is built once with random weights by HF transformers, saved, and loaded by both
libraries, so both run the same float32 weights at batch size 1. Figures per model:

- prefill tokens/s: `prompt_length` over the time from calling generate() to its first
  token (the prompt's forward pass with a fresh cache, keeping the last position's logits;
  for the encoder-decoder T5, summarising the prompt, the encoder's pass and the decoder's
  first step);
- decode tokens/s: one over the mean time between later tokens (one cached forward step
  each) of a greedy generate() of `new_tokens` tokens with no early stop.

With `--device cuda` both libraries run on the GPU (mindnlp through its CuPy backend) and the
roofline is the GPU's. The last columns are the decode rate's weight traffic (every weight read once per token) as a
fraction of the machine's copy bandwidth (one thread) and, on a CPU, of what a matrix-vector product of NumPy's BLAS
reads on every core (roofline.matvec_gbs, the best of its measurements before the run and after each
model's): the ceiling of weight-streaming decoding. With
`--compiled`, mindnlp is also timed with static caches and a `core.compile`d forward (HF's
compiled-generation recipe; for T5, static self- and cross-attention caches, the encoder's
pass and the decoder's first step eager, every later step a replayed graph); with
`--torch-compile`, torch runs the same recipe through torch.compile.

Both come from the same runs, timed by a logits processor that notes each step. The best of
`repeats` runs is reported (timings on a shared machine only get slower), then mindnlp /
PyTorch ratios, beside the machine's roofline measured in the same run. torch and
transformers are needed here only.

The checkpoint is built, and each library measured, in a fresh process of its own, as a
user runs one library: loading torch starts its GNU OpenMP runtime, which numba's thread
pool (mindnlp's matrix-vector products) then shares with torch's settings (idle threads
that spin for a long time, competing with mindnlp's workers between products), and torch's
own idle threads would compete too.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from roofline import describe, describe_gpu, matvec_gbs


def build_smollm_135m(directory):
    """A random-initialised Llama shaped like SmolLM-135M (tied embeddings)."""
    import torch
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
        num_key_value_heads=3, max_position_embeddings=2048, rms_norm_eps=1e-5, tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(config).save_pretrained(directory)
    return "SmolLM-135M-shaped Llama"


def build_mistral_sliding(directory):
    """SmolLM-135M's shape as a Mistral whose every layer slides over 128 positions, so decoding
    after a longer prompt reads a window, not the whole past (the compiled steps roll a
    window-sized static buffer)."""
    import torch
    import transformers

    config = transformers.MistralConfig(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
        num_key_value_heads=3, head_dim=64, max_position_embeddings=2048, rms_norm_eps=1e-5, sliding_window=128,
        tie_word_embeddings=True, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    transformers.MistralForCausalLM(config).save_pretrained(directory)
    return "Mistral-shaped, window 128"


def build_qwen3_06b(directory):
    """A random-initialised Qwen3 shaped like Qwen3-0.6B (q/k norm, 128-wide heads, tied
    embeddings over a 151,936-token vocabulary: 2.4 GB of float32 weights)."""
    import torch
    import transformers

    config = transformers.Qwen3Config(
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
        num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, rms_norm_eps=1e-6,
        tie_word_embeddings=True, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
        bos_token_id=151643, eos_token_id=151645)
    torch.manual_seed(0)
    transformers.Qwen3ForCausalLM(config).save_pretrained(directory)
    return "Qwen3-0.6B-shaped"


def build_t5_small(directory):
    """A random-initialised T5-small (60M: 6 + 6 layers, 512 wide, relative position buckets)."""
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    transformers.T5ForConditionalGeneration(config).save_pretrained(directory)
    return "T5-small (summarise)"


def build_gpt2_small(directory):
    """A random-initialised GPT-2 small (124M: 12 layers, 768 wide, tied embeddings)."""
    import torch
    import transformers

    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(transformers.GPT2Config()).save_pretrained(directory)
    return "GPT-2 small (124M)"


# name -> builder(directory) that saves a random HF checkpoint there and returns a display name.
MODEL_BUILDERS = {
    "gpt2": build_gpt2_small,
    "smollm": build_smollm_135m,
    "mistral": build_mistral_sliding,
    "qwen3": build_qwen3_06b,
    "t5": build_t5_small,
}


def _is_seq2seq(directory):
    import json

    with open(os.path.join(directory, "config.json"), encoding="utf-8") as fh:
        return bool(json.load(fh).get("is_encoder_decoder"))


class StepClock:
    """A logits processor that notes the time of each generation step and changes nothing.

    generate() calls it once per new token, right after that token's forward pass, so the
    first call marks the end of the prefill and the gaps between calls are decode steps;
    both libraries accept it through `logits_processor=`.
    """

    def __init__(self):
        self.times = []

    def __call__(self, input_ids, scores):
        self.times.append(time.perf_counter())
        return scores


def timed_generate(generate, repeats):
    """Best prefill and best decode time (seconds) over `repeats` runs, from one clock per run:
    (first step - start) and (last step - first step) / (steps - 1)."""
    prefill, decode = [], []
    for _ in range(repeats):
        clock = StepClock()
        start = time.perf_counter()
        generate(clock)
        prefill.append(clock.times[0] - start)
        decode.append((clock.times[-1] - clock.times[0]) / (len(clock.times) - 1))
    return min(prefill), min(decode)


def measure_torch(directory, prompt, new_tokens, repeats, compiled=False, dtype="float32", device="cpu"):
    """torch eager; with `compiled`, the same recipe as mindnlp's compiled run through
    torch.compile (inductor; the warm-up call pays its compilation)."""
    import torch
    import transformers

    auto = transformers.AutoModelForSeq2SeqLM if _is_seq2seq(directory) else transformers.AutoModelForCausalLM
    model = auto.from_pretrained(directory, dtype=getattr(torch, dtype)).to(device).eval()
    if compiled:
        model.generation_config.cache_implementation = "static"
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    ids = torch.tensor(prompt)[None].to(device)

    def generate(clock):
        with torch.no_grad():
            model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                           logits_processor=transformers.LogitsProcessorList([clock]))

    generate(StepClock())  # warm-up
    return timed_generate(generate, repeats)


def measure_mindnlp(directory, prompt, new_tokens, repeats, compiled=False, dtype="float32", device="cpu"):
    """mindnlp eager; with `compiled`, HF's compiled-generation recipe: a static cache and
    the forward under core.compile, so each decode step replays one captured graph."""
    from mindnlp import core
    from mindnlp.transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, LogitsProcessorList

    auto = AutoModelForSeq2SeqLM if _is_seq2seq(directory) else AutoModelForCausalLM
    model = auto.from_pretrained(directory, dtype=getattr(core, dtype), attn_implementation="sdpa", device_map=device)
    if compiled:
        model.generation_config.cache_implementation = "static"
        model.forward = core.compile(model.forward, mode="reduce-overhead", fullgraph=True)
    ids = core.tensor(prompt, device=device)[None]

    def generate(clock):
        model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                       logits_processor=LogitsProcessorList([clock]))

    generate(StepClock())  # warm-up
    return timed_generate(generate, repeats)


def _weight_bytes(directory):
    """Bytes a decode step streams at least: every weight once (tied embeddings once)."""
    from safetensors import safe_open

    total = 0
    for file in sorted(f for f in os.listdir(directory) if f.endswith(".safetensors")):   # one file or shards
        with safe_open(os.path.join(directory, file), "np") as fh:
            for name in fh.keys():
                total += fh.get_tensor(name).nbytes
    return total


def rates(prefill_time, step_time, prompt_length):
    return prompt_length / prefill_time, 1.0 / step_time


def child(task, directory, args):
    """Run one task of this script in a fresh Python process; its printed JSON result."""
    command = [sys.executable, __file__, "--task", task, "--directory", directory,
               "--prompt-length", str(args.prompt_length), "--new-tokens", str(args.new_tokens),
               "--repeats", str(args.repeats), "--dtype", args.dtype, "--device", args.device]
    output = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(output.splitlines()[-1])


def run_task(task, directory, args):
    """A child's work: "build:<model>" saves the checkpoint, the others measure one library
    on the prompt saved beside it."""
    if task.startswith("build:"):
        return MODEL_BUILDERS[task.split(":", 1)[1]](directory)
    with open(os.path.join(directory, "prompt.json"), encoding="utf-8") as fh:
        prompt = json.load(fh)
    if task.startswith("torch"):
        times = measure_torch(directory, prompt, args.new_tokens, args.repeats, compiled=task == "torch.compile",
                              dtype=args.dtype, device=args.device)
    else:
        times = measure_mindnlp(directory, prompt, args.new_tokens, args.repeats, compiled=task == "compiled",
                                dtype=args.dtype, device=args.device)
    return rates(*times, args.prompt_length)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompt-length", type=int, default=512)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="*", default=list(MODEL_BUILDERS), choices=list(MODEL_BUILDERS))
    parser.add_argument("--compiled", action="store_true",
                        help="also time mindnlp's compiled decoding (static cache + core.compile)")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time torch.compile on the same recipe (compiles for minutes on a small machine)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                        help="the weights' and activations' dtype in both libraries (bfloat16: what dtype='auto' "
                             "gives for most current checkpoints)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="where both libraries run (cuda: mindnlp's CuPy backend beside torch's CUDA build)")
    parser.add_argument("--task", help=argparse.SUPPRESS)
    parser.add_argument("--directory", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task:
        print(json.dumps(run_task(args.task, args.directory, args)))
        return
    rng = np.random.default_rng(0)
    line, _, copy_gbs = describe() if args.device == "cpu" else describe_gpu()
    read_gbs = matvec_gbs() if args.device == "cpu" else None
    print(line)
    print(f"batch 1, {args.dtype}, prompt {args.prompt_length} tokens, {args.new_tokens} new tokens, "
          f"best of {args.repeats}")
    header = f"{'model':28} {'library':13} {'prefill tok/s':>14} {'decode tok/s':>13}"
    for key in args.models:
        with tempfile.TemporaryDirectory() as directory:
            name = child(f"build:{key}", directory, args)
            with open(os.path.join(directory, "prompt.json"), "w", encoding="utf-8") as fh:
                json.dump(rng.integers(1, 1000, size=args.prompt_length).tolist(), fh)
            libraries = ["torch", "mindnlp"]
            if args.compiled:
                libraries.append("compiled")
            if args.torch_compile:
                libraries.append("torch.compile")
            results = {library: child(library, directory, args) for library in libraries}
            weight_bytes = _weight_bytes(directory) // (2 if args.dtype == "bfloat16" else 1)  # saved in float32
        if read_gbs:
            read_gbs = matvec_gbs(again=True)
        print(header + f" {'of copy roofline':>17}" + (f" {'of read roofline':>17}" if read_gbs else ""))
        for library, (prefill, decode) in results.items():
            streamed = weight_bytes * decode / 1e9
            read = f" {streamed / read_gbs:17.0%}" if read_gbs else ""
            print(f"{name:28} {library:13} {prefill:14.1f} {decode:13.2f} {streamed / copy_gbs:17.0%}{read}")
        (tp, td) = results["torch"]
        for library in [k for k in results if not k.startswith("torch")]:
            mp, md = results[library]
            print(f"{name:28} {'ratio':13} {mp / tp:13.2f}x {md / td:12.2f}x   ({library} / torch)")
        if "torch.compile" in results and "compiled" in results:
            (cp, cd), (mp, md) = results["torch.compile"], results["compiled"]
            print(f"{name:28} {'ratio':13} {mp / cp:13.2f}x {md / cd:12.2f}x   (compiled / torch.compile)")


if __name__ == "__main__":
    main()
