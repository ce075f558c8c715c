# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen3 (Qwen team, 2025): Qwen2's decoder with q/k norm, with Hugging Face's parameter names.

What differs from Qwen2: each head's query and key pass through an RMSNorm over head_dim
(`q_norm`, `k_norm`) before the rotary embedding, which keeps attention logits bounded
without the q/k/v biases, so the projections are biased only when `config.attention_bias`
says so (as in Llama).
"""
from ...generation import GenerationMixin
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from ..qwen2.modeling_qwen2 import (Qwen2ForCausalLM, Qwen2ForQuestionAnswering, Qwen2ForSequenceClassification,
                                    Qwen2ForTokenClassification, Qwen2Model, Qwen2PreTrainedModel)
from .configuration_qwen3 import Qwen3Config


class Qwen3Attention(LlamaAttention):
    qk_norm = "head"


class Qwen3DecoderLayer(LlamaDecoderLayer):
    attention_class = Qwen3Attention


class Qwen3PreTrainedModel(Qwen2PreTrainedModel):
    config_class = Qwen3Config
    _no_split_modules = ["Qwen3DecoderLayer"]


class Qwen3Model(Qwen2Model, Qwen3PreTrainedModel):
    layer_class = Qwen3DecoderLayer


class Qwen3ForCausalLM(Qwen2ForCausalLM, Qwen3PreTrainedModel, GenerationMixin):
    base_model_class = Qwen3Model


class Qwen3ForSequenceClassification(Qwen2ForSequenceClassification, Qwen3PreTrainedModel):
    base_model_class = Qwen3Model


class Qwen3ForTokenClassification(Qwen2ForTokenClassification, Qwen3PreTrainedModel):
    base_model_class = Qwen3Model


class Qwen3ForQuestionAnswering(Qwen2ForQuestionAnswering, Qwen3PreTrainedModel):
    base_model_class = Qwen3Model


__all__ = [
    "Qwen3ForCausalLM", "Qwen3ForQuestionAnswering", "Qwen3ForSequenceClassification", "Qwen3ForTokenClassification",
    "Qwen3Model", "Qwen3PreTrainedModel",
]
