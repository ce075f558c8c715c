# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen2 (Qwen team, 2024): Llama's decoder with biased q/k/v projections, with Hugging Face's
parameter names.

What differs from Llama: only the q, k and v projections carry a bias (o_proj and the MLP
have none). `config.layer_types` says per layer whether attention is full or limited to a
sliding window of `config.sliding_window` positions (Qwen2 enables windows only with
`use_sliding_window`, from layer `max_window_layers` on); the shared decoder gives each
kind its own mask.
"""
from ...generation import GenerationMixin
from ..llama.modeling_llama import (LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaForQuestionAnswering,
                                    LlamaForSequenceClassification, LlamaForTokenClassification, LlamaModel,
                                    LlamaPreTrainedModel)
from .configuration_qwen2 import Qwen2Config


class Qwen2Attention(LlamaAttention):
    qkv_bias = True
    o_bias = False


class Qwen2DecoderLayer(LlamaDecoderLayer):
    attention_class = Qwen2Attention


class Qwen2PreTrainedModel(LlamaPreTrainedModel):
    config_class = Qwen2Config
    _no_split_modules = ["Qwen2DecoderLayer"]


class Qwen2Model(LlamaModel, Qwen2PreTrainedModel):
    layer_class = Qwen2DecoderLayer


class Qwen2ForCausalLM(LlamaForCausalLM, Qwen2PreTrainedModel, GenerationMixin):
    base_model_class = Qwen2Model


class Qwen2ForSequenceClassification(LlamaForSequenceClassification, Qwen2PreTrainedModel):
    base_model_class = Qwen2Model


class Qwen2ForTokenClassification(LlamaForTokenClassification, Qwen2PreTrainedModel):
    base_model_class = Qwen2Model


class Qwen2ForQuestionAnswering(LlamaForQuestionAnswering, Qwen2PreTrainedModel):
    base_model_class = Qwen2Model


__all__ = [
    "Qwen2ForCausalLM", "Qwen2ForQuestionAnswering", "Qwen2ForSequenceClassification", "Qwen2ForTokenClassification",
    "Qwen2Model", "Qwen2PreTrainedModel",
]
