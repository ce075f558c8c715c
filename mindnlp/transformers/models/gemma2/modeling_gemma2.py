# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma 2 (Gemma team, Google DeepMind, 2024): Gemma with sandwich norms, soft-capping and
alternating local/global attention, with Hugging Face's parameter names.

What differs from Gemma: each block normalises both the input and the output of its attention
and of its MLP (`input_layernorm` / `post_attention_layernorm`, `pre_feedforward_layernorm` /
`post_feedforward_layernorm`); attention scores are soft-capped, c·tanh(s/c), with
c = `attn_logit_softcapping`, and so are the final logits (`final_logit_softcapping`); scores
are scaled by `query_pre_attn_scalar`^-1/2 rather than head_dim^-1/2; layers alternate between
a sliding window and full attention (`layer_types`); the activation is `hidden_activation`.
The shared blocks read the soft-capping, the scale and the layer types from the config.
"""
from ...generation import GenerationMixin
from ..gemma.modeling_gemma import (GemmaDecoderLayer, GemmaForCausalLM, GemmaForSequenceClassification,
                                    GemmaForTokenClassification, GemmaModel, GemmaPreTrainedModel)
from ..llama.modeling_llama import LlamaMLP
from .configuration_gemma2 import Gemma2Config


class Gemma2MLP(LlamaMLP):
    activation_key = "hidden_activation"


class Gemma2DecoderLayer(GemmaDecoderLayer):
    mlp_class = Gemma2MLP

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.pre_feedforward_layernorm = self.build_norm(config)
        self.post_feedforward_layernorm = self.build_norm(config)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        attention_output, weights = self.self_attn(self.input_layernorm(hidden_states), position_embeddings,
                                                   attention_mask=attention_mask, past_key_values=past_key_values,
                                                   output_attentions=output_attentions)
        hidden_states = hidden_states + self.post_attention_layernorm(attention_output)
        mlp_output = self.mlp(self.pre_feedforward_layernorm(hidden_states))
        return hidden_states + self.post_feedforward_layernorm(mlp_output), weights


class Gemma2PreTrainedModel(GemmaPreTrainedModel):
    config_class = Gemma2Config
    _no_split_modules = ["Gemma2DecoderLayer"]


class Gemma2Model(GemmaModel, Gemma2PreTrainedModel):
    layer_class = Gemma2DecoderLayer


class Gemma2ForCausalLM(GemmaForCausalLM, Gemma2PreTrainedModel, GenerationMixin):
    base_model_class = Gemma2Model


class Gemma2ForSequenceClassification(GemmaForSequenceClassification, Gemma2PreTrainedModel):
    base_model_class = Gemma2Model


class Gemma2ForTokenClassification(GemmaForTokenClassification, Gemma2PreTrainedModel):
    base_model_class = Gemma2Model


__all__ = [
    "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2ForTokenClassification", "Gemma2Model",
    "Gemma2PreTrainedModel",
]
