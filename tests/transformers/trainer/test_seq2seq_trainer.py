"""Seq2SeqTrainer with DataCollatorForSeq2Seq on a tiny BART: labels padded with -100, decoder
inputs from the model's shift, evaluation that generates, and LoRA through TaskType.SEQ_2_SEQ_LM."""
import os

import pytest

from mindnlp import core
from mindnlp.peft import LoraConfig, TaskType, get_peft_model
from mindnlp.transformers import (BartConfig, BartForConditionalGeneration, BartTokenizer, DataCollatorForSeq2Seq,
                                  Seq2SeqTrainer, Seq2SeqTrainingArguments)

TOKENIZER = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tokenizers", "roberta_vocab_merges_only")
PAIRS = [("one two", "two one"), ("three four five", "five four three"), ("six", "six"), ("seven eight", "eight seven")]


@pytest.fixture(scope="module")
def tokenizer():
    return BartTokenizer.from_pretrained(TOKENIZER)


def tiny_bart(tokenizer):
    core.manual_seed(0)
    config = BartConfig(vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1, encoder_ffn_dim=16,
                        decoder_ffn_dim=16, encoder_attention_heads=2, decoder_attention_heads=2,
                        max_position_embeddings=64, dropout=0.0, pad_token_id=tokenizer.pad_token_id,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                        decoder_start_token_id=tokenizer.eos_token_id, forced_eos_token_id=tokenizer.eos_token_id)
    return BartForConditionalGeneration(config)


def features(tokenizer):
    return [dict(tokenizer(source), labels=tokenizer(text_target=target)["input_ids"]) for source, target in PAIRS]


def test_collator_pads_labels_and_shifts_them_with_the_model(tokenizer):
    model = tiny_bart(tokenizer)
    batch = DataCollatorForSeq2Seq(tokenizer, model=model)(features(tokenizer))
    labels = batch["labels"]
    assert labels.shape == batch["decoder_input_ids"].shape
    lengths = [len(tokenizer(text_target=t)["input_ids"]) for _, t in PAIRS]
    for row, length in enumerate(lengths):
        assert (labels[row, length:] == -100).all()
    expected = model.prepare_decoder_input_ids_from_labels(labels)
    assert batch["decoder_input_ids"].tolist() == expected.tolist()
    assert (batch["decoder_input_ids"][:, 0] == tokenizer.eos_token_id).all()
    assert not (batch["decoder_input_ids"] == -100).any()


def test_predict_with_generate_returns_generated_ids(tokenizer, tmp_path):
    model = tiny_bart(tokenizer)
    seen = {}

    def compute_metrics(prediction):
        seen["predictions"], seen["labels"] = prediction.predictions, prediction.label_ids
        return {"rows": len(prediction.predictions)}

    args = Seq2SeqTrainingArguments(str(tmp_path), per_device_eval_batch_size=2, predict_with_generate=True,
                                    generation_max_length=9, generation_num_beams=2, disable_tqdm=True,
                                    report_to="none")
    trainer = Seq2SeqTrainer(model, args, data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
                             eval_dataset=features(tokenizer), processing_class=tokenizer,
                             compute_metrics=compute_metrics)
    metrics = trainer.evaluate()
    assert metrics["eval_rows"] == len(PAIRS) and "eval_loss" in metrics
    predictions = seen["predictions"]
    assert predictions.shape == (len(PAIRS), 9)
    for row, (source, _) in enumerate(PAIRS):
        ids = model.generate(**tokenizer(source, return_tensors="pt"), max_length=9, num_beams=2)[0].tolist()
        assert predictions[row].tolist() == ids + [tokenizer.pad_token_id] * (9 - len(ids))
    assert seen["labels"].shape[1] == max(9, max(len(tokenizer(text_target=t)["input_ids"]) for _, t in PAIRS))
    out = trainer.predict(features(tokenizer)[:2], max_length=5, num_beams=1)
    assert out.predictions.shape == (2, 5)


def test_training_lowers_the_loss_and_lora_trains_only_adapters(tokenizer, tmp_path):
    model = get_peft_model(tiny_bart(tokenizer), LoraConfig(task_type=TaskType.SEQ_2_SEQ_LM, r=4, lora_alpha=8))
    assert type(model).__name__ == "PeftModelForSeq2SeqLM"
    trainable = [name for name, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    assert any("q_proj.lora_A" in name for name in trainable) and any("v_proj.lora_B" in name for name in trainable)
    args = Seq2SeqTrainingArguments(str(tmp_path), per_device_train_batch_size=4, num_train_epochs=15,
                                    learning_rate=5e-2, logging_steps=1, save_strategy="no", disable_tqdm=True,
                                    report_to="none")
    collator = DataCollatorForSeq2Seq(tokenizer, model=model.get_base_model())
    trainer = Seq2SeqTrainer(model, args, data_collator=collator, train_dataset=features(tokenizer))
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert losses[-1] < losses[0]
    generated = model.generate(**tokenizer("one two", return_tensors="pt"), max_new_tokens=5)
    assert generated.shape[0] == 1


def test_arguments_serialise_a_generation_config(tmp_path):
    from mindnlp.transformers import GenerationConfig

    args = Seq2SeqTrainingArguments(str(tmp_path), generation_config=GenerationConfig(num_beams=3))
    assert '"num_beams": 3' in args.to_json_string()
    model = tiny_bart(BartTokenizer.from_pretrained(TOKENIZER))
    trainer = Seq2SeqTrainer(model, args)
    assert trainer.model.generation_config.num_beams == 3
