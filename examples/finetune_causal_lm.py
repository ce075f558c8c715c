"""LoRA fine-tuning of a causal LM with the Trainer, then generation with the merged model.

By default the model is a tiny Llama built from a config (random weights, so it runs in seconds on
a CPU) with the small test tokenizer of tests/fixtures/tokenizers/llama_chat; it learns to
continue a handful of sentences. Pass --model with a folder or hub id of a real causal LM
(e.g. a small Llama or Qwen2 checkpoint) to fine-tune that instead.

    python examples/finetune_causal_lm.py [--model NAME_OR_FOLDER] [--epochs 30] [--prompt "the cat"]

LoRA (r=8, alpha=16) goes on every attention and MLP projection; after training the adapter is
merged into the base weights (`merge_and_unload`), the merged model is checked to give the same
logits as the adapter model, and greedy generation continues the prompt.
"""
import argparse
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE_TOKENIZER = os.path.join(REPO, "tests", "fixtures", "tokenizers", "llama_chat")
CORPUS = [
    "the cat sat on the mat and looked at the moon.",
    "the dog ran in the park and found a red ball.",
    "a bird sang in the tree before the rain came.",
    "the cat sat on the mat and fell asleep in the sun.",
]
TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def tiny_llama(tokenizer):
    from mindnlp.transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    return LlamaForCausalLM(config)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="causal LM folder or hub id (default: a tiny random Llama)")
    parser.add_argument("--epochs", type=float, default=30)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--prompt", default="the cat sat")
    parser.add_argument("--max-new-tokens", type=int, default=12)
    parser.add_argument("--output-dir", default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import datasets
    except ImportError:
        sys.exit("this example needs the `datasets` library: pip install 'mindnlp[examples]'")

    from mindnlp import core
    from mindnlp.peft import LoraConfig, TaskType, get_peft_model
    from mindnlp.transformers import (AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer,
                                      TrainingArguments, set_seed)

    set_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(args.model or FIXTURE_TOKENIZER)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(args.model) if args.model else tiny_llama(tokenizer)
    model = get_peft_model(model, LoraConfig(task_type=TaskType.CAUSAL_LM, r=8, lora_alpha=16, lora_dropout=0.0,
                                             target_modules=TARGET_MODULES))
    model.print_trainable_parameters()

    texts = [text + tokenizer.eos_token for text in CORPUS]
    dataset = datasets.Dataset.from_dict({"text": texts}).map(
        lambda batch: tokenizer(batch["text"]), batched=True, remove_columns=["text"])
    output_dir = args.output_dir or tempfile.mkdtemp(prefix="finetune_causal_lm_")
    training_args = TrainingArguments(output_dir=output_dir, per_device_train_batch_size=4,
                                      num_train_epochs=args.epochs, learning_rate=args.lr, logging_steps=5,
                                      save_strategy="no", report_to="none", seed=args.seed)
    trainer = Trainer(model=model, args=training_args, train_dataset=dataset,
                      data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
    result = trainer.train()
    print(f"final training loss {result.training_loss:.4f}; logs and loss curve in {output_dir}")

    prompt = tokenizer(args.prompt, return_tensors="pt")
    model.eval()
    with core.no_grad():
        adapter_logits = model(**prompt).logits
    merged = model.merge_and_unload()
    with core.no_grad():
        merged_logits = merged(**prompt).logits
    difference = (adapter_logits - merged_logits).abs().max().item()
    print(f"max |logits(adapter) - logits(merged)| = {difference:.2e}")
    if difference > 1e-4:
        sys.exit("the merged model does not reproduce the adapter model")
    generated = merged.generate(**prompt, max_new_tokens=args.max_new_tokens, do_sample=False,
                                pad_token_id=tokenizer.pad_token_id)
    text = tokenizer.decode(generated[0], skip_special_tokens=True)
    print(f"generation from {args.prompt!r}: {text!r}")
    return text


if __name__ == "__main__":
    main()
