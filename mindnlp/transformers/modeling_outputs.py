# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Output dataclasses of the model heads, with Hugging Face's names and field order."""
from dataclasses import dataclass
from typing import Optional

from .utils.generic import ModelOutput


@dataclass
class BaseModelOutput(ModelOutput):
    last_hidden_state: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class BaseModelOutputWithPooling(ModelOutput):
    last_hidden_state: Optional[object] = None
    pooler_output: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class BaseModelOutputWithPast(ModelOutput):
    last_hidden_state: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class BaseModelOutputWithPastAndCrossAttentions(ModelOutput):
    last_hidden_state: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None


@dataclass
class BaseModelOutputWithPoolingAndCrossAttentions(ModelOutput):
    last_hidden_state: Optional[object] = None
    pooler_output: Optional[object] = None
    hidden_states: Optional[tuple] = None
    past_key_values: Optional[object] = None
    attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None


@dataclass
class CausalLMOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class CausalLMOutputWithPast(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class MoeModelOutputWithPast(ModelOutput):
    last_hidden_state: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None
    router_logits: Optional[tuple] = None


@dataclass
class MoeCausalLMOutputWithPast(ModelOutput):
    loss: Optional[object] = None
    aux_loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None
    router_logits: Optional[tuple] = None


@dataclass
class CausalLMOutputWithCrossAttentions(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None


@dataclass
class MaskedLMOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class NextSentencePredictorOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class SequenceClassifierOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class SequenceClassifierOutputWithPast(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class TokenClassifierOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class QuestionAnsweringModelOutput(ModelOutput):
    loss: Optional[object] = None
    start_logits: Optional[object] = None
    end_logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class MultipleChoiceModelOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


@dataclass
class Seq2SeqModelOutput(ModelOutput):
    """An encoder-decoder's output: the decoder's (last hidden state, cache, per-layer states
    and self-/cross-attentions) followed by the encoder's."""

    last_hidden_state: Optional[object] = None
    past_key_values: Optional[object] = None
    decoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    encoder_last_hidden_state: Optional[object] = None
    encoder_hidden_states: Optional[tuple] = None
    encoder_attentions: Optional[tuple] = None


@dataclass
class Seq2SeqLMOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    decoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    encoder_last_hidden_state: Optional[object] = None
    encoder_hidden_states: Optional[tuple] = None
    encoder_attentions: Optional[tuple] = None


@dataclass
class Seq2SeqSequenceClassifierOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    past_key_values: Optional[object] = None
    decoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    encoder_last_hidden_state: Optional[object] = None
    encoder_hidden_states: Optional[tuple] = None
    encoder_attentions: Optional[tuple] = None


@dataclass
class Seq2SeqQuestionAnsweringModelOutput(ModelOutput):
    loss: Optional[object] = None
    start_logits: Optional[object] = None
    end_logits: Optional[object] = None
    past_key_values: Optional[object] = None
    decoder_hidden_states: Optional[tuple] = None
    decoder_attentions: Optional[tuple] = None
    cross_attentions: Optional[tuple] = None
    encoder_last_hidden_state: Optional[object] = None
    encoder_hidden_states: Optional[tuple] = None
    encoder_attentions: Optional[tuple] = None
