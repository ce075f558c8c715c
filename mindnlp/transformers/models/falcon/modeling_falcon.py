# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Falcon (TII, 2023) with Hugging Face's parameter names (`transformer.h.N.self_attention`, ...).

What differs from Llama: queries, keys and values come from one projection
(`query_key_value`) laid out by key/value head, the queries of its group then its key then
its value; its key/value heads are `num_kv_heads` in the new decoder architecture, one with
`multi_query`, else one per query head (the layout is then [q, k, v] per head). The output
projection is `dense`, the MLP dense_4h_to_h(gelu(dense_h_to_4h(x))), every linear layer
biased with `bias`, the norms LayerNorms. The block is parallel, x + attn(norm(x)) +
mlp(norm'(x)), with separate norms (`ln_attn`, `ln_mlp`) in the new architecture and one
`input_layernorm` shared by both branches in the old; the old one may instead be sequential
(`parallel_attn` False). With `alibi` there is no rotary embedding: each head adds
slope × key position (among the unpadded tokens) to its scaled scores, as part of the mask.
The names differ too: the base model is `transformer` (`word_embeddings`, `h`, `ln_f`).

HF computes the ALiBi bias through bfloat16, which rounds positions above 256; so does this.
HF's eager path adds the bias twice (once by itself, once in the mask); its sdpa path, the one
it runs by default, once, as the paper and this file do.
"""
import math

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...generation import GenerationMixin
from ...modeling_decoder import DecoderAttention, DecoderLayer, DecoderModel, DecoderPreTrainedModel, \
    GenericForCausalLM
from ...modeling_layers import (GenericForQuestionAnswering, GenericForSequenceClassification,
                                GenericForTokenClassification)
from .configuration_falcon import FalconConfig


def alibi_slopes(num_heads):
    """ALiBi's slopes (Press et al., 2021): 2^(-8k/n) for k = 1..n, n the largest power of two
    up to num_heads, then 2^(-4k/n) for odd k for the heads beyond n."""
    closest = 2 ** math.floor(math.log2(num_heads))
    return ([2.0 ** (-8.0 * k / closest) for k in range(1, closest + 1)]
            + [2.0 ** (-4.0 * k / closest) for k in range(1, 2 * (num_heads - closest), 2)])


def alibi_bias(attention_mask, num_heads, dtype):
    """(batch, heads, 1, keys): each head's slope times each key's position among the row's
    unpadded tokens (0 at padding)."""
    positions = (attention_mask.long().cumsum(-1) - 1) * attention_mask.long()
    slopes = core.tensor(alibi_slopes(num_heads), device=attention_mask.device).to(core.bfloat16)
    return (slopes[None, :, None] * positions[:, None, :].to(core.bfloat16)).to(dtype)[:, :, None, :]


def _over_keys(bias, keys):
    """The ALiBi bias over a mask's `keys` key slots, zero past its own."""
    extra = keys - bias.shape[-1]
    return bias if extra <= 0 else nn.functional.pad(bias, (0, extra))


class FalconAttention(DecoderAttention):
    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.use_rope = not config.alibi
        # HF drops attention probabilities out only on the ALiBi path.
        self.attention_dropout = config.attention_dropout if config.alibi else 0.0

    def build_projections(self, config, q_size, kv_size):
        self.query_key_value = nn.Linear(config.hidden_size, q_size + 2 * kv_size, bias=config.bias)
        self.dense = nn.Linear(q_size, config.hidden_size, bias=config.bias)

    def project(self, hidden_states):
        batch, length = hidden_states.shape[:2]
        fused = self.query_key_value(hidden_states).view(batch, length, -1, self.num_key_value_groups + 2,
                                                          self.head_dim)
        query = fused[:, :, :, :-2].reshape(batch, length, -1, self.head_dim)
        return tuple(t.transpose(1, 2).contiguous() for t in (query, fused[:, :, :, -2], fused[:, :, :, -1]))

    def project_output(self, attention_output):
        return self.dense(attention_output)


class FalconMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(config.hidden_size, config.ffn_hidden_size, bias=config.bias)
        self.act = ACT2FN[config.activation]
        self.dense_4h_to_h = nn.Linear(config.ffn_hidden_size, config.hidden_size, bias=config.bias)

    def forward(self, x):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(x)))


class FalconDecoderLayer(DecoderLayer):
    """HF's dropouts: in the sequential block `attention_dropout` on the attention's output, and
    `hidden_dropout` on the MLP's output, or on the sum of both branches in the parallel block."""

    attention_class = FalconAttention
    mlp_class = FalconMLP
    attention_name = "self_attention"

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.parallel_residual = config.new_decoder_architecture or config.parallel_attn
        self.separate_norms = config.new_decoder_architecture and config.num_ln_in_parallel_attn != 1
        self.attention_dropout, self.hidden_dropout = config.attention_dropout, config.hidden_dropout
        if self.separate_norms:
            self.ln_attn = self._modules.pop("input_layernorm")
            self.ln_mlp = self._modules.pop("post_attention_layernorm")
        elif self.parallel_residual:
            del self.post_attention_layernorm

    @classmethod
    def build_norm(cls, config):
        return nn.LayerNorm(config.hidden_size, eps=config.layer_norm_epsilon)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        normed = (self.ln_attn if self.separate_norms else self.input_layernorm)(hidden_states)
        attention_output, weights = self.self_attention(normed, position_embeddings, attention_mask=attention_mask,
                                                        past_key_values=past_key_values,
                                                        output_attentions=output_attentions)
        if self.parallel_residual:
            output = self.mlp(self.ln_mlp(hidden_states) if self.separate_norms else normed) + attention_output
        else:
            hidden_states = hidden_states + nn.functional.dropout(attention_output, p=self.attention_dropout,
                                                                  training=self.training)
            output = self.mlp(self.post_attention_layernorm(hidden_states))
        return hidden_states + nn.functional.dropout(output, p=self.hidden_dropout, training=self.training), weights


class FalconPreTrainedModel(DecoderPreTrainedModel):
    config_class = FalconConfig
    base_model_prefix = "transformer"
    _no_split_modules = ["FalconDecoderLayer"]


class FalconModel(DecoderModel, FalconPreTrainedModel):
    layer_class = FalconDecoderLayer
    embeddings_name = "word_embeddings"
    layers_name = "h"
    final_norm_name = "ln_f"

    def build_embeddings(self, config):
        return nn.Embedding(config.vocab_size, config.hidden_size)

    def attention_masks(self, kinds, inputs_embeds, attention_mask, past_key_values, cache_position, position_ids):
        masks = super().attention_masks(kinds, inputs_embeds, attention_mask, past_key_values, cache_position,
                                        position_ids)
        if not self.config.alibi:
            return masks
        if attention_mask is None:
            past_seen = past_key_values.get_seq_length() if past_key_values is not None else 0
            attention_mask = core.ones((inputs_embeds.shape[0], past_seen + inputs_embeds.shape[1]), dtype=core.long,
                                       device=inputs_embeds.device)
        bias = alibi_bias(attention_mask, self.config.num_attention_heads, inputs_embeds.dtype)
        bias = bias / math.sqrt(self.config.head_dim)
        # a mask of None (every key visible) leaves the bias alone; a static cache's mask spans
        # all its slots, those past the attention mask's length masked, so the bias is 0 there
        return {kind: bias if mask is None else core.where(mask < -1, mask, _over_keys(bias, mask.shape[-1]))
                for kind, mask in masks.items()}


class FalconForCausalLM(GenericForCausalLM, FalconPreTrainedModel, GenerationMixin):
    base_model_class = FalconModel
    _tied_weights_keys = {"lm_head.weight": "transformer.word_embeddings.weight"}


class FalconForSequenceClassification(GenericForSequenceClassification, FalconPreTrainedModel):
    base_model_class = FalconModel


class FalconForTokenClassification(GenericForTokenClassification, FalconPreTrainedModel):
    base_model_class = FalconModel
    classifier_name = "classifier"


class FalconForQuestionAnswering(GenericForQuestionAnswering, FalconPreTrainedModel):
    base_model_class = FalconModel


__all__ = [
    "FalconForCausalLM", "FalconForQuestionAnswering", "FalconForSequenceClassification",
    "FalconForTokenClassification", "FalconModel", "FalconPreTrainedModel",
]
