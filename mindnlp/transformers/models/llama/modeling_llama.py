# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Llama (Touvron et al., 2023): a decoder-only transformer with Hugging Face's parameter names.

Each layer is pre-norm: RMSNorm → self-attention with rotary position embeddings (RoPE) →
residual, then RMSNorm → SwiGLU MLP → residual. Attention may be grouped-query
(`num_key_value_heads` < `num_attention_heads`); `attention_bias` and `mlp_bias` add biases
to the projections. The RoPE variant (default, linear, dynamic, yarn, longrope, llama3) comes from
`config.rope_parameters`.

Llama is the shared decoder blocks of `modeling_decoder` as they are, under Llama's names;
the families built like it (Mistral, Qwen2, Gemma, ...) subclass these classes.
"""
from ...generation import GenerationMixin
from ...modeling_decoder import (DecoderAttention, DecoderLayer, DecoderModel, DecoderPreTrainedModel, GatedMLP,
                                 GenericForCausalLM, RMSNorm)
from ...modeling_layers import (GenericForQuestionAnswering, GenericForSequenceClassification,
                                GenericForTokenClassification)
from ...modeling_rotary import RotaryEmbedding
from .configuration_llama import LlamaConfig


class LlamaRMSNorm(RMSNorm):
    pass


class LlamaRotaryEmbedding(RotaryEmbedding):
    pass


class LlamaMLP(GatedMLP):
    pass


class LlamaAttention(DecoderAttention):
    pass


class LlamaDecoderLayer(DecoderLayer):
    attention_class = LlamaAttention
    mlp_class = LlamaMLP
    norm_class = LlamaRMSNorm


class LlamaPreTrainedModel(DecoderPreTrainedModel):
    config_class = LlamaConfig
    _no_split_modules = ["LlamaDecoderLayer"]


class LlamaModel(DecoderModel, LlamaPreTrainedModel):
    layer_class = LlamaDecoderLayer
    rotary_class = LlamaRotaryEmbedding


class LlamaForCausalLM(GenericForCausalLM, LlamaPreTrainedModel, GenerationMixin):
    base_model_class = LlamaModel


class LlamaForSequenceClassification(GenericForSequenceClassification, LlamaPreTrainedModel):
    base_model_class = LlamaModel


class LlamaForTokenClassification(GenericForTokenClassification, LlamaPreTrainedModel):
    base_model_class = LlamaModel


class LlamaForQuestionAnswering(GenericForQuestionAnswering, LlamaPreTrainedModel):
    """The base model is named `transformer` here, as in HF's checkpoints."""

    base_model_class = LlamaModel
    base_model_prefix = "transformer"


__all__ = [
    "LlamaForCausalLM", "LlamaForQuestionAnswering", "LlamaForSequenceClassification", "LlamaForTokenClassification",
    "LlamaModel", "LlamaPreTrainedModel",
]
