# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Seq2SeqTrainingArguments`: the Trainer's settings plus how evaluation generates (HF's names)."""
from dataclasses import dataclass
from pathlib import Path

from .generation.configuration_utils import GenerationConfig
from .training_args import TrainingArguments


@dataclass
class Seq2SeqTrainingArguments(TrainingArguments):
    """`predict_with_generate`: evaluation and prediction return generated ids (for BLEU or ROUGE)
    instead of logits; `generation_max_length` / `generation_num_beams` are the `max_length` /
    `num_beams` they generate with (default: the model's generation config);
    `generation_config` (a GenerationConfig, or a path or hub id to load one from) replaces the
    model's. `sortish_sampler` is HF's name for sorting by length within random chunks, which
    `group_by_length` does here."""

    sortish_sampler: bool = False
    predict_with_generate: bool = False
    generation_max_length: int = None
    generation_num_beams: int = None
    generation_config: object = None

    def to_dict(self):
        """As TrainingArguments, with a GenerationConfig written as its dict."""
        values = super().to_dict()
        if isinstance(values["generation_config"], GenerationConfig):
            values["generation_config"] = values["generation_config"].to_dict()
        elif isinstance(values["generation_config"], Path):
            values["generation_config"] = str(values["generation_config"])
        return values


__all__ = ["Seq2SeqTrainingArguments"]
