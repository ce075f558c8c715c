# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Seq2SeqTrainer`: the Trainer, with evaluation and prediction that can generate.

With `args.predict_with_generate`, `prediction_step` returns the ids `model.generate` produces
(padded with the pad id to the generation's maximum length, so batches stack) where the Trainer
returns logits, and the labels padded the same way: `compute_metrics` then scores text against
text. The loss is still the teacher-forced loss on the labels.
"""
from copy import deepcopy

from .. import core
from .generation.configuration_utils import GenerationConfig
from .trainer import Trainer, _unwrap_peft


class Seq2SeqTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        generation_config = getattr(self.args, "generation_config", None)
        if generation_config is not None:
            self.model.generation_config = self.load_generation_config(generation_config)

    @staticmethod
    def load_generation_config(gen_config_arg):
        """A GenerationConfig as given, or loaded from a folder, file or hub id; validated."""
        if isinstance(gen_config_arg, GenerationConfig):
            config = deepcopy(gen_config_arg)
        else:
            config = GenerationConfig.from_pretrained(str(gen_config_arg))
        config.validate()
        return config

    def _generation_kwargs(self, gen_kwargs):
        """The caller's generate() arguments, `generation_max_length` / `generation_num_beams` where
        the caller gives none."""
        gen_kwargs = dict(gen_kwargs)
        if gen_kwargs.get("max_length") is None and gen_kwargs.get("max_new_tokens") is None:
            gen_kwargs["max_length"] = self.args.generation_max_length
        if gen_kwargs.get("num_beams") is None:
            gen_kwargs["num_beams"] = self.args.generation_num_beams
        return gen_kwargs

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", **gen_kwargs):
        self._gen_kwargs = self._generation_kwargs(gen_kwargs)
        return super().evaluate(eval_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test", **gen_kwargs):
        self._gen_kwargs = self._generation_kwargs(gen_kwargs)
        return super().predict(test_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None, **gen_kwargs):
        """(loss, generated ids, labels) with `predict_with_generate`, else the Trainer's step."""
        if not self.args.predict_with_generate or prediction_loss_only:
            return super().prediction_step(model, inputs, prediction_loss_only=prediction_loss_only,
                                           ignore_keys=ignore_keys)
        has_labels = "labels" in inputs
        inputs = self._prepare_inputs(inputs)
        if not gen_kwargs:
            gen_kwargs = dict(getattr(self, "_gen_kwargs", {}))
        gen_kwargs = {k: v for k, v in gen_kwargs.items() if not (k in ("num_beams", "max_length") and v is None)}
        generation_inputs = dict(inputs)
        labels = inputs.get("labels")
        decoder_input_ids = inputs.get("decoder_input_ids")
        if labels is not None and decoder_input_ids is not None and labels.shape == decoder_input_ids.shape:
            # decoder inputs made from the labels (teacher forcing) would hand generate the answer
            generation_inputs = {k: v for k, v in inputs.items() if k not in ("decoder_input_ids",
                                                                                "decoder_attention_mask")}
        generation_inputs.pop("labels", None)
        generated = self.model.generate(**generation_inputs, **gen_kwargs)
        gen_config = _unwrap_peft(self.model).generation_config
        max_length = gen_kwargs.get("max_length") or gen_config.max_length
        max_new_tokens = gen_kwargs.get("max_new_tokens", gen_config.max_new_tokens)
        target_length = max_new_tokens + 1 if max_new_tokens is not None and "max_length" not in gen_kwargs \
            else max_length
        generated = self._pad_tensors_to_max_len(generated, target_length)

        loss = None
        if has_labels:
            with core.no_grad(), self.compute_loss_context_manager():
                outputs = model(**inputs)
            if self.label_smoother is not None:
                loss = self.label_smoother(outputs, inputs["labels"]).detach().mean()
            else:
                loss = (outputs["loss"] if isinstance(outputs, dict) else outputs[0]).detach().mean()
        if self.args.prediction_loss_only:
            return loss, None, None
        if has_labels:
            labels = self._pad_tensors_to_max_len(inputs["labels"], target_length)
        return loss, generated, labels

    def _pad_tensors_to_max_len(self, tensor, max_length):
        """`tensor` (batch, length) right-padded with the pad id (the tokenizer's, else its EOS,
        else the model's) to `max_length`; longer tensors are left as they are."""
        if tensor.shape[-1] >= max_length:
            return tensor
        tokenizer = self.processing_class
        if tokenizer is not None and getattr(tokenizer, "pad_token_id", None) is not None:
            pad_token_id = tokenizer.pad_token_id
        elif tokenizer is not None and getattr(tokenizer, "eos_token_id", None) is not None:
            pad_token_id = tokenizer.eos_token_id
        elif getattr(_unwrap_peft(self.model).config, "pad_token_id", None) is not None:
            pad_token_id = _unwrap_peft(self.model).config.pad_token_id
        else:
            raise ValueError("Pad_token_id must be set in the configuration of the model, in order to pad tensors")
        padded = core.full((tensor.shape[0], max_length), pad_token_id, dtype=tensor.dtype, device=tensor.device)
        padded[:, : tensor.shape[-1]] = tensor
        return padded


__all__ = ["Seq2SeqTrainer"]
