# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Phi (phi-1, phi-1.5, phi-2; Microsoft, 2023): a parallel-block decoder with partial rotary,
with Hugging Face's parameter names.

What differs from Llama: attention and MLP read the same LayerNorm of the block's input and
their outputs join the residual together, x + attn(ln(x)) + mlp(ln(x)) (one `input_layernorm`,
biased `nn.LayerNorm`s throughout); RoPE rotates `partial_rotary_factor` of each head's
features; q/k/v and the output projection (`dense`) have biases, with an optional LayerNorm of
each head's queries and keys (`q_layernorm`, `k_layernorm`); the MLP is fc2(gelu(fc1(x)));
dropout on the embeddings (`embd_pdrop`) and on both branches (`resid_pdrop`); the final norm
is `final_layernorm` and the LM head has a bias.
"""
from ....core import nn
from ...activations import ACT2FN
from ...generation import GenerationMixin
from ..llama.modeling_llama import (LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM,
                                    LlamaForSequenceClassification, LlamaForTokenClassification, LlamaModel,
                                    LlamaPreTrainedModel)
from .configuration_phi import PhiConfig


class PhiMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.activation_fn = ACT2FN[config.hidden_act]
        self.fc1 = nn.Linear(config.hidden_size, config.intermediate_size)
        self.fc2 = nn.Linear(config.intermediate_size, config.hidden_size)

    def forward(self, hidden_states):
        return self.fc2(self.activation_fn(self.fc1(hidden_states)))


class PhiAttention(LlamaAttention):
    qkv_bias = o_bias = True

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.dense = self._modules.pop("o_proj")
        if config.qk_layernorm:
            self.q_layernorm = nn.LayerNorm(self.head_dim, eps=config.layer_norm_eps)
            self.k_layernorm = nn.LayerNorm(self.head_dim, eps=config.layer_norm_eps)

    def project(self, hidden_states):
        query, key, value = super().project(hidden_states)
        if self.config.qk_layernorm:
            query, key = self.q_layernorm(query), self.k_layernorm(key)
        return query, key, value

    def project_output(self, attention_output):
        return self.dense(attention_output)


class PhiDecoderLayer(LlamaDecoderLayer):
    attention_class = PhiAttention
    mlp_class = PhiMLP
    parallel_residual = True
    residual_dropout_key = "resid_pdrop"

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        del self.post_attention_layernorm

    @classmethod
    def build_norm(cls, config):
        return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def parallel_mlp_input(self, hidden_states, normed):
        return normed


class PhiPreTrainedModel(LlamaPreTrainedModel):
    config_class = PhiConfig
    _no_split_modules = ["PhiDecoderLayer"]


class PhiModel(LlamaModel, PhiPreTrainedModel):
    layer_class = PhiDecoderLayer
    final_norm_name = "final_layernorm"

    def __init__(self, config):
        super().__init__(config)
        self.embed_dropout = nn.Dropout(config.embd_pdrop)

    def input_hidden_states(self, inputs_embeds, position_ids):
        return self.embed_dropout(inputs_embeds)


class PhiForCausalLM(LlamaForCausalLM, PhiPreTrainedModel, GenerationMixin):
    base_model_class = PhiModel
    lm_head_bias = True


class PhiForSequenceClassification(LlamaForSequenceClassification, PhiPreTrainedModel):
    base_model_class = PhiModel


class PhiForTokenClassification(LlamaForTokenClassification, PhiPreTrainedModel):
    base_model_class = PhiModel


__all__ = [
    "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification", "PhiModel", "PhiPreTrainedModel",
]
