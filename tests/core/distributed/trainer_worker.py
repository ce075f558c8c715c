"""Run by test_distributed.py, alone or under `mindnlp run`: a Trainer fine-tunes a tiny Llama
(no dropout, so runs differ only in how batches are split; some labels masked with -100, so the
processes hold different numbers of label tokens and the loss must be normalised over the whole
job's) and rank 0 writes the final weights and the log history to <output>/result.npz and
result.json.

    trainer_worker.py OUTPUT PER_DEVICE_BATCH MAX_STEPS [--resume CHECKPOINT]
"""
import json
import os
import sys

import numpy as np

from mindnlp import core
from mindnlp.transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments


def dataset(n=48, length=6):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 60, (n, length))
    masked = rng.random((n, length)) < 0.3
    return [{"input_ids": row.tolist(), "attention_mask": [1] * length,
             "labels": np.where(mask, -100, row).tolist()} for row, mask in zip(ids, masked)]


def main():
    output, per_device, max_steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    resume = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--resume" else None
    core.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         num_key_value_heads=1, intermediate_size=32)
    model = LlamaForCausalLM(config)
    args = TrainingArguments(output_dir=output, per_device_train_batch_size=per_device,
                             per_device_eval_batch_size=5, max_steps=max_steps, learning_rate=1e-2,
                             logging_steps=1, save_steps=2, eval_strategy="steps", eval_steps=3,
                             report_to=[], seed=7)
    data = dataset()
    trainer = Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:13])
    trainer.train(resume_from_checkpoint=resume)
    if trainer.is_world_process_zero():
        np.savez(os.path.join(output, "result.npz"), **{k: v.numpy() for k, v in model.state_dict().items()})
        checkpoint = os.path.join(output, "checkpoint-2")
        with open(os.path.join(output, "result.json"), "w") as f:
            json.dump({"log_history": trainer.state.log_history, "world_size": args.world_size,
                       "files": sorted(os.listdir(checkpoint)) if os.path.isdir(checkpoint) else []}, f)


if __name__ == "__main__":
    main()
