"""Decode speed of weight-only int8 / int4 models beside float32, in one run.

    python benchmarks/quantized_decode.py [--new-tokens 32] [--repeats 3] [--models smollm gpt2]

A SmolLM2-135M-shaped Llama and a GPT-2-small-shaped model are built with random weights
by mindnlp itself (HF's config shapes), saved, and loaded in float32, int8
(QuantoConfig(weights="int8")) and int4 (QuantoConfig(weights="int4")); HF transformers +
PyTorch float32 runs beside them when torch is importable. Decode tokens/s is one over the
mean step time of a greedy generate() after a 32-token prompt (benchmarks/generate.py's
StepClock). The machine's memory bandwidth, measured in the same run, gives each variant's
ceiling: the copy bandwidth over the bytes of weights read per token.

Quality: with random weights there is no text to score, so the quantized models are
compared with float32 on the same random prompt: the greedy tokens that agree, and the
increase in the float32 model's cross-entropy of its own greedy continuation
(perplexity of float32's text under each variant / under float32).
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from generate import StepClock, timed_generate  # noqa: E402
from roofline import describe  # noqa: E402


def build_smollm2_135m(directory):
    from mindnlp import core
    from mindnlp.transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                         num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
                         rms_norm_eps=1e-5, tie_word_embeddings=True, rope_theta=100000.0, bos_token_id=0,
                         eos_token_id=0)
    core.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(directory)
    return "SmolLM2-135M-shaped Llama"


def build_gpt2_small(directory):
    from mindnlp import core
    from mindnlp.transformers import GPT2Config, GPT2LMHeadModel

    core.manual_seed(0)
    GPT2LMHeadModel(GPT2Config()).save_pretrained(directory)
    return "GPT-2 small (124M)"


MODEL_BUILDERS = {"smollm": build_smollm2_135m, "gpt2": build_gpt2_small}


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


def measure_mindnlp(directory, prompt, new_tokens, repeats, quantization):
    from mindnlp import core
    from mindnlp.transformers import AutoModelForCausalLM, LogitsProcessorList, QuantoConfig

    config = None if quantization == "float32" else QuantoConfig(weights=quantization)
    model = AutoModelForCausalLM.from_pretrained(directory, quantization_config=config)
    ids = core.tensor(prompt)[None]

    def generate(clock):
        return model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                              logits_processor=LogitsProcessorList([clock]))

    generate(StepClock())
    _, step = timed_generate(generate, repeats)
    return model, 1.0 / step


def measure_torch(directory, prompt, new_tokens, repeats):
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    ids = torch.tensor(prompt)[None]

    def generate(clock):
        with torch.no_grad():
            model.generate(ids, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                           logits_processor=transformers.LogitsProcessorList([clock]))

    generate(StepClock())
    return 1.0 / timed_generate(generate, repeats)[1]


def cross_entropy(model, tokens):
    """Mean next-token cross-entropy of `tokens` (1-D) under the model."""
    from mindnlp import core

    with core.no_grad():
        logits = model(core.tensor(tokens)[None]).logits[0, :-1].numpy().astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(tokens) - 1), tokens[1:]].mean())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompt-length", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="*", default=list(MODEL_BUILDERS), choices=list(MODEL_BUILDERS))
    args = parser.parse_args()
    line, _, bandwidth = describe()
    print(line)
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
        print("torch + transformers not importable: the HF column is left out")
    rng = np.random.default_rng(0)
    print(f"batch 1, prompt {args.prompt_length} tokens, {args.new_tokens} new tokens, best of {args.repeats}")
    print(f"{'model':28} {'variant':10} {'MB/token':>9} {'ceiling tok/s':>14} {'decode tok/s':>13} "
          f"{'vs f32':>7} {'greedy agree':>13} {'ppl ratio':>10}")
    for key in args.models:
        with tempfile.TemporaryDirectory() as directory:
            name = MODEL_BUILDERS[key](directory)
            prompt = rng.integers(1, 1000, size=args.prompt_length).tolist()
            rows, reference = [], None
            for variant in ("float32", "int8", "int4"):
                model, rate = measure_mindnlp(directory, prompt, args.new_tokens, args.repeats, variant)
                text = model.generate(__import__("mindnlp").core.tensor(prompt)[None], max_new_tokens=args.new_tokens,
                                      do_sample=False)[0].tolist()
                if reference is None:
                    reference = (rate, text, model)
                base_rate, base_text, base_model = reference
                agree = np.mean(np.array(text[len(prompt):]) == np.array(base_text[len(prompt):]))
                ppl = np.exp(cross_entropy(model, base_text) - cross_entropy(base_model, base_text))
                size = weight_bytes(model)
                rows.append((variant, size, rate, rate / base_rate, agree, ppl))
            if have_torch:
                rows.append(("HF torch", None, measure_torch(directory, prompt, args.new_tokens, args.repeats),
                             None, None, None))
        for variant, size, rate, ratio, agree, ppl in rows:
            mb = f"{size / 1e6:9.0f}" if size else f"{'':9}"
            ceiling = f"{bandwidth * 1e9 / size:14.1f}" if size else f"{'':14}"
            tail = f" {ratio:6.2f}x {agree:13.2f} {ppl:10.4f}" if ratio is not None else ""
            print(f"{name:28} {variant:10} {mb} {ceiling} {rate:13.2f}{tail}")


if __name__ == "__main__":
    main()
