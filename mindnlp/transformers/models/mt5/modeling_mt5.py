# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mT5: T5 v1.1's model under its own names; only the config class (and model_type) differ."""
from ...generation import GenerationMixin
from ..t5.modeling_t5 import (
    T5EncoderModel,
    T5ForConditionalGeneration,
    T5ForQuestionAnswering,
    T5ForSequenceClassification,
    T5ForTokenClassification,
    T5Model,
    T5PreTrainedModel,
)
from .configuration_mt5 import MT5Config


class MT5PreTrainedModel(T5PreTrainedModel):
    config_class = MT5Config


class MT5Model(T5Model):
    config_class = MT5Config
    model_type = "mt5"


class MT5ForConditionalGeneration(T5ForConditionalGeneration, GenerationMixin):
    """GenerationMixin is named among the bases, as HF lists it, for code that inspects them."""

    config_class = MT5Config
    model_type = "mt5"


class MT5EncoderModel(T5EncoderModel):
    config_class = MT5Config
    model_type = "mt5"


class MT5ForSequenceClassification(T5ForSequenceClassification):
    config_class = MT5Config


class MT5ForTokenClassification(T5ForTokenClassification):
    config_class = MT5Config


class MT5ForQuestionAnswering(T5ForQuestionAnswering):
    config_class = MT5Config


__all__ = [
    "MT5EncoderModel",
    "MT5ForConditionalGeneration",
    "MT5ForQuestionAnswering",
    "MT5ForSequenceClassification",
    "MT5ForTokenClassification",
    "MT5Model",
    "MT5PreTrainedModel",
]
