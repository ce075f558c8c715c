# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-NeoX (Black et al., 2022; also Pythia): a parallel-residual decoder with partial rotary,
with Hugging Face's parameter names.

What differs from Llama: queries, keys and values come from one biased projection
(`query_key_value`) laid out head by head, [q, k, v] × head_dim per head, and the output
projection is `dense`; RoPE rotates `partial_rotary_factor` (`rotary_pct`) of each head's
features; with `use_parallel_residual` each block is x + attn(ln1(x)) + mlp(ln2(x)), else
Llama's sequential order; biased LayerNorms, an MLP dense_4h_to_h(gelu(dense_h_to_4h(x))),
`hidden_dropout` on the embeddings and both branches. The names differ too: the base model is
`gpt_neox` (`embed_in`, `layers.N.attention`, `final_layer_norm`), the LM head `embed_out`, the
token classifier `classifier`.
"""
from ....core import nn
from ...activations import ACT2FN
from ...generation import GenerationMixin
from ...modeling_attention import split_heads
from ...modeling_layers import GenericForQuestionAnswering
from ..llama.modeling_llama import (LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM,
                                    LlamaForSequenceClassification, LlamaForTokenClassification, LlamaModel,
                                    LlamaPreTrainedModel)
from .configuration_gpt_neox import GPTNeoXConfig


class GPTNeoXMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(config.hidden_size, config.intermediate_size)
        self.dense_4h_to_h = nn.Linear(config.intermediate_size, config.hidden_size)
        self.act = ACT2FN[config.hidden_act]

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(hidden_states)))


class GPTNeoXAttention(LlamaAttention):
    def build_projections(self, config, q_size, kv_size):
        self.query_key_value = nn.Linear(config.hidden_size, 3 * q_size, bias=config.attention_bias)
        self.dense = nn.Linear(q_size, config.hidden_size, bias=config.attention_bias)

    def project(self, hidden_states):
        qkv = split_heads(self.query_key_value(hidden_states), 3 * self.head_dim)
        return tuple(t.contiguous() for t in qkv.chunk(3, dim=-1))

    def project_output(self, attention_output):
        return self.dense(attention_output)


class GPTNeoXLayer(LlamaDecoderLayer):
    attention_class = GPTNeoXAttention
    mlp_class = GPTNeoXMLP
    attention_name = "attention"
    residual_dropout_key = "hidden_dropout"

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.parallel_residual = config.use_parallel_residual

    @classmethod
    def build_norm(cls, config):
        return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)


class GPTNeoXPreTrainedModel(LlamaPreTrainedModel):
    config_class = GPTNeoXConfig
    base_model_prefix = "gpt_neox"
    _no_split_modules = ["GPTNeoXLayer"]


class GPTNeoXModel(LlamaModel, GPTNeoXPreTrainedModel):
    layer_class = GPTNeoXLayer
    embeddings_name = "embed_in"
    final_norm_name = "final_layer_norm"

    def __init__(self, config):
        super().__init__(config)
        self.emb_dropout = nn.Dropout(config.hidden_dropout)

    def build_embeddings(self, config):
        return nn.Embedding(config.vocab_size, config.hidden_size)

    def input_hidden_states(self, inputs_embeds, position_ids):
        return self.emb_dropout(inputs_embeds)


class GPTNeoXForCausalLM(LlamaForCausalLM, GPTNeoXPreTrainedModel, GenerationMixin):
    base_model_class = GPTNeoXModel
    lm_head_name = "embed_out"
    _tied_weights_keys = {"embed_out.weight": "gpt_neox.embed_in.weight"}
    _tp_plan = {"embed_out": "colwise_gather_output"}
    _pp_plan = {"embed_out": (["hidden_states"], ["logits"])}


class GPTNeoXForSequenceClassification(LlamaForSequenceClassification, GPTNeoXPreTrainedModel):
    base_model_class = GPTNeoXModel


class GPTNeoXForTokenClassification(LlamaForTokenClassification, GPTNeoXPreTrainedModel):
    base_model_class = GPTNeoXModel
    classifier_name = "classifier"


class GPTNeoXForQuestionAnswering(GenericForQuestionAnswering, GPTNeoXPreTrainedModel):
    base_model_class = GPTNeoXModel


__all__ = [
    "GPTNeoXForCausalLM", "GPTNeoXForQuestionAnswering", "GPTNeoXForSequenceClassification",
    "GPTNeoXForTokenClassification", "GPTNeoXLayer", "GPTNeoXModel", "GPTNeoXPreTrainedModel",
]
