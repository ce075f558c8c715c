# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Phi-3 (Abdin et al., 2024): Mistral's decoder with fused projections, with Hugging Face's
parameter names.

What differs from Mistral: queries, keys and values come from one projection (`qkv_proj`,
split as [heads, kv heads, kv heads] × head_dim) and the MLP's gate and up projections from
another (`gate_up_proj`, gate first); each block applies `resid_pdrop` dropout to its
attention and MLP outputs; the long-context checkpoints use LongRoPE, which the shared rotary
embedding computes (short factors within `original_max_position_embeddings`, long beyond).
"""
from ....core import nn
from ...activations import ACT2FN, gated_activation
from ...generation import GenerationMixin
from ...modeling_attention import split_heads
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from ..mistral.modeling_mistral import (MistralForCausalLM, MistralForSequenceClassification,
                                        MistralForTokenClassification, MistralModel, MistralPreTrainedModel)
from .configuration_phi3 import Phi3Config


class Phi3MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.gate_up_proj = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.activation_fn = ACT2FN[config.hidden_act]

    def forward(self, hidden_states):
        gate, up = self.gate_up_proj(hidden_states).chunk(2, dim=-1)
        return self.down_proj(gated_activation(self.activation_fn, gate, up))


class Phi3Attention(LlamaAttention):
    def build_projections(self, config, q_size, kv_size):
        self.split_sizes = [q_size, kv_size, kv_size]
        self.qkv_proj = nn.Linear(config.hidden_size, q_size + 2 * kv_size, bias=False)
        self.o_proj = nn.Linear(q_size, config.hidden_size, bias=False)

    def project(self, hidden_states):
        return tuple(split_heads(t, self.head_dim) for t in self.qkv_proj(hidden_states).split(self.split_sizes, -1))


class Phi3DecoderLayer(LlamaDecoderLayer):
    attention_class = Phi3Attention
    mlp_class = Phi3MLP
    residual_dropout_key = "resid_pdrop"


class Phi3PreTrainedModel(MistralPreTrainedModel):
    config_class = Phi3Config
    _no_split_modules = ["Phi3DecoderLayer"]


class Phi3Model(MistralModel, Phi3PreTrainedModel):
    layer_class = Phi3DecoderLayer


class Phi3ForCausalLM(MistralForCausalLM, Phi3PreTrainedModel, GenerationMixin):
    base_model_class = Phi3Model

    def prepare_inputs_for_generation(self, input_ids, next_sequence_length=None, past_key_values=None,
                                      attention_mask=None, inputs_embeds=None, is_first_iteration=False, **kwargs):
        """Once the text outgrows `original_max_position_embeddings`, LongRoPE rotates with its
        long factors: the keys cached with the short ones are recomputed, once, by running the
        whole text again without the cache (HF's behaviour)."""
        original = getattr(self.config, "original_max_position_embeddings", None)
        if (past_key_values is not None and original is not None and input_ids.shape[1] >= original + 1
                and past_key_values.get_seq_length() <= original):
            past_key_values, next_sequence_length = None, None
        return super().prepare_inputs_for_generation(
            input_ids, next_sequence_length=next_sequence_length, past_key_values=past_key_values,
            attention_mask=attention_mask, inputs_embeds=inputs_embeds, is_first_iteration=is_first_iteration, **kwargs)


class Phi3ForSequenceClassification(MistralForSequenceClassification, Phi3PreTrainedModel):
    base_model_class = Phi3Model


class Phi3ForTokenClassification(MistralForTokenClassification, Phi3PreTrainedModel):
    base_model_class = Phi3Model


__all__ = [
    "Phi3ForCausalLM", "Phi3ForSequenceClassification", "Phi3ForTokenClassification", "Phi3Model",
    "Phi3PreTrainedModel",
]
