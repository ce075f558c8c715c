# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""StarCoder2 (Lozhkov et al., 2024): Mistral's decoder with GPT-style blocks, with Hugging Face's
parameter names.

What differs from Mistral: LayerNorm (with bias, `norm_epsilon`) instead of RMSNorm; the MLP
is c_proj(act(c_fc(x))) rather than gated; every projection has a bias when
`config.use_bias`; dropout is applied to the embeddings (`embedding_dropout`) and to the
output of each attention and MLP block (`residual_dropout`).
"""
from ....core import nn
from ...activations import ACT2FN
from ...generation import GenerationMixin
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from ..mistral.modeling_mistral import (MistralForCausalLM, MistralForSequenceClassification,
                                        MistralForTokenClassification, MistralModel, MistralPreTrainedModel)
from .configuration_starcoder2 import Starcoder2Config


class Starcoder2MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.hidden_size, config.intermediate_size, bias=config.use_bias)
        self.c_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=config.use_bias)
        self.act = ACT2FN[config.hidden_act]
        self.residual_dropout = config.residual_dropout

    def forward(self, hidden_states):
        hidden_states = self.c_proj(self.act(self.c_fc(hidden_states)))
        return nn.functional.dropout(hidden_states, p=self.residual_dropout, training=self.training)


class Starcoder2Attention(LlamaAttention):
    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.residual_dropout = config.residual_dropout

    def projection_biases(self, config):
        return config.use_bias, config.use_bias

    def forward(self, hidden_states, position_embeddings, **kwargs):
        output, weights = super().forward(hidden_states, position_embeddings, **kwargs)
        return nn.functional.dropout(output, p=self.residual_dropout, training=self.training), weights


class Starcoder2DecoderLayer(LlamaDecoderLayer):
    attention_class = Starcoder2Attention
    mlp_class = Starcoder2MLP

    @classmethod
    def build_norm(cls, config):
        return nn.LayerNorm(config.hidden_size, eps=config.norm_epsilon)


class Starcoder2PreTrainedModel(MistralPreTrainedModel):
    config_class = Starcoder2Config
    _no_split_modules = ["Starcoder2DecoderLayer"]


class Starcoder2Model(MistralModel, Starcoder2PreTrainedModel):
    layer_class = Starcoder2DecoderLayer

    def input_hidden_states(self, inputs_embeds, position_ids):
        return nn.functional.dropout(inputs_embeds, p=self.config.embedding_dropout, training=self.training)


class Starcoder2ForCausalLM(MistralForCausalLM, Starcoder2PreTrainedModel, GenerationMixin):
    base_model_class = Starcoder2Model


class Starcoder2ForSequenceClassification(MistralForSequenceClassification, Starcoder2PreTrainedModel):
    base_model_class = Starcoder2Model


class Starcoder2ForTokenClassification(MistralForTokenClassification, Starcoder2PreTrainedModel):
    base_model_class = Starcoder2Model


__all__ = [
    "Starcoder2ForCausalLM", "Starcoder2ForSequenceClassification", "Starcoder2ForTokenClassification",
    "Starcoder2Model", "Starcoder2PreTrainedModel",
]
