"""SST-2 LoRA fine-tuning of all-MiniLM-L6-v2: mindnlp vs HF transformers + peft + torch, side by side.

Both runs use the recipe of examples/finetune_lora.py on the same sentences (r=8, alpha=16,
query/value, AdamW lr 1e-3, batch 32, 4,000 training sentences, max length 64, one epoch) and
report accuracy on the 872 validation sentences and wall time. Each implementation runs in its
own process so that neither one's threads or imports affect the other's timing.

    python benchmarks/finetune.py [--train-size 4000] [--eval-size N] [--data DIR] [--only mindnlp|hf]

The HF run is skipped, with a note, when torch, transformers or peft is not installed. The
summary names the CPU and the machine's roofline (roofline.py), measured after both runs.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "finetune_lora.py")


def load_example():
    spec = importlib.util.spec_from_file_location("finetune_lora", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_hf(args):
    """The same recipe with HF transformers' Trainer, HF peft and torch; returns the summary dict."""
    import datasets
    import numpy as np
    from peft import LoraConfig, TaskType, get_peft_model
    from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, Trainer,
                              TrainingArguments, set_seed)

    example = load_example()
    splits = example.load_splits(args.data, args.eval_size, args.seed)
    train_sentences, train_labels = example.subset(splits["train"], args.train_size, args.seed)
    eval_sentences, eval_labels = example.subset(splits["eval"], args.eval_size, args.seed)
    folder = args.model or example.packaged_model_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder)

    def tokenize(batch):
        return tokenizer(batch["sentence"], truncation=True, max_length=args.max_length)

    train_set = datasets.Dataset.from_dict({"sentence": train_sentences, "label": train_labels}).map(
        tokenize, batched=True)
    eval_set = datasets.Dataset.from_dict({"sentence": eval_sentences, "label": eval_labels}).map(
        tokenize, batched=True)
    set_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)
    model = get_peft_model(model, LoraConfig(task_type=TaskType.SEQ_CLS, r=8, lora_alpha=16, lora_dropout=0.1,
                                             target_modules=["query", "value"]))

    def accuracy(prediction):
        logits, labels = prediction
        return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}

    output_dir = os.path.join(args.output_dir, "hf")
    training_args = TrainingArguments(
        output_dir=output_dir, per_device_train_batch_size=32, per_device_eval_batch_size=64, learning_rate=1e-3,
        num_train_epochs=1, logging_steps=10, save_strategy="no", seed=args.seed, report_to="none", use_cpu=True)
    trainer = Trainer(model=model, args=training_args, train_dataset=train_set, eval_dataset=eval_set,
                      processing_class=tokenizer, data_collator=DataCollatorWithPadding(tokenizer),
                      compute_metrics=accuracy)
    start = time.perf_counter()
    output = trainer.train()
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    metrics = trainer.evaluate()
    eval_seconds = time.perf_counter() - start
    return {"implementation": "hf+peft+torch", "train_sentences": len(train_sentences),
            "eval_sentences": len(eval_sentences), "train_loss": output.training_loss,
            "accuracy": metrics["eval_accuracy"], "train_seconds": round(train_seconds, 2),
            "eval_seconds": round(eval_seconds, 2)}


def common_flags(args):
    flags = ["--data", args.data, "--train-size", str(args.train_size), "--seed", str(args.seed),
             "--max-length", str(args.max_length)]
    if args.eval_size is not None:
        flags += ["--eval-size", str(args.eval_size)]
    if args.model:
        flags += ["--model", args.model]
    return flags


def run_in_subprocess(command):
    """Run a command, stream its progress to stderr, and return the JSON summary on its last line."""
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def hf_available():
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "transformers", "peft"))


def main():
    example = load_example()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=example.DEFAULT_DATA)
    parser.add_argument("--model", default=None)
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--eval-size", type=int, default=None)
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output-dir", default=None, help="checkpoints of both runs (default: a temp folder)")
    parser.add_argument("--only", choices=["mindnlp", "hf"], default=None)
    parser.add_argument("--hf-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    args.output_dir = args.output_dir or tempfile.mkdtemp(prefix="finetune_benchmark_")
    if args.hf_worker:
        print(json.dumps(run_hf(args)))
        return
    results = []
    if args.only in (None, "mindnlp"):
        results.append(run_in_subprocess([sys.executable, EXAMPLE, *common_flags(args), "--output-dir",
                                          os.path.join(args.output_dir, "mindnlp")]))
    if args.only in (None, "hf"):
        if hf_available():
            results.append(run_in_subprocess([sys.executable, __file__, "--hf-worker", *common_flags(args),
                                              "--output-dir", args.output_dir]))
        else:
            print("HF transformers + peft + torch are not installed: only the mindnlp run is reported")
    from roofline import describe

    print("\n" + describe()[0])
    print(f"SST-2 LoRA fine-tuning, all-MiniLM-L6-v2, {results[0]['train_sentences']} training sentences, "
          f"accuracy on {results[0]['eval_sentences']} validation sentences")
    print(f"{'implementation':<16}{'accuracy':>10}{'train loss':>12}{'train s':>10}{'eval s':>9}")
    for r in results:
        print(f"{r['implementation']:<16}{r['accuracy']:>10.4f}{r['train_loss']:>12.4f}{r['train_seconds']:>10.1f}"
              f"{r['eval_seconds']:>9.1f}")
    if len(results) == 2:
        print(f"time ratio mindnlp / HF (train): {results[0]['train_seconds'] / results[1]['train_seconds']:.2f}")


if __name__ == "__main__":
    main()
