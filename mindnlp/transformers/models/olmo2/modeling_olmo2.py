# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""OLMo 2 (OLMo team, 2024): a Llama-like decoder with post-norm blocks and q/k norm, with Hugging
Face's parameter names.

What differs from Llama: each block normalises its output rather than its input,
x + norm(attn(x)) then x + norm(mlp(x)) (`post_attention_layernorm`,
`post_feedforward_layernorm`; there is no `input_layernorm`); queries and keys pass through
an RMSNorm over all heads (`q_norm`, `k_norm`) before being split into heads; and RMSNorm
multiplies by its weight in float32 before casting back. OLMo 2 ships only the causal-LM head.
"""
from ....core import nn
from ...generation import GenerationMixin
from ..llama.modeling_llama import (LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaModel,
                                    LlamaPreTrainedModel, LlamaRMSNorm)
from .configuration_olmo2 import Olmo2Config


class Olmo2RMSNorm(LlamaRMSNorm):
    def forward(self, hidden_states):
        normed = nn.functional.rms_norm(hidden_states.float(), (hidden_states.shape[-1],), eps=self.variance_epsilon)
        return (self.weight * normed).to(hidden_states.dtype)


class Olmo2Attention(LlamaAttention):
    qk_norm = "projection"
    norm_class = Olmo2RMSNorm


class Olmo2DecoderLayer(LlamaDecoderLayer):
    attention_class = Olmo2Attention
    norm_class = Olmo2RMSNorm

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.post_feedforward_layernorm = self.build_norm(config)
        del self.input_layernorm

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        attention_output, weights = self.self_attn(hidden_states, position_embeddings, attention_mask=attention_mask,
                                                   past_key_values=past_key_values,
                                                   output_attentions=output_attentions)
        hidden_states = hidden_states + self.post_attention_layernorm(attention_output)
        hidden_states = hidden_states + self.post_feedforward_layernorm(self.mlp(hidden_states))
        return hidden_states, weights


class Olmo2PreTrainedModel(LlamaPreTrainedModel):
    config_class = Olmo2Config
    _no_split_modules = ["Olmo2DecoderLayer"]


class Olmo2Model(LlamaModel, Olmo2PreTrainedModel):
    layer_class = Olmo2DecoderLayer


class Olmo2ForCausalLM(LlamaForCausalLM, Olmo2PreTrainedModel, GenerationMixin):
    base_model_class = Olmo2Model


__all__ = ["Olmo2ForCausalLM", "Olmo2Model", "Olmo2PreTrainedModel"]
