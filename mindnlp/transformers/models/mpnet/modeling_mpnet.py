# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""MPNet (Song et al., 2020): RoBERTa's encoder with a learned relative-position attention bias.

What differs from RoBERTa:
- every layer adds one bias per head and (query, key) distance to its attention scores; the
  distances are bucketed as T5 buckets them and the table (`relative_attention_bias`, held
  by the encoder) is shared by all layers;
- there are no token types, and the padding index of the positions is always 1;
- the attention module holds `attn` (`q`, `k`, `v`, `o`) and one post-norm; BERT splits the
  output projection into a separate module;
- the heads are RoBERTa's (`lm_head`, the dense + tanh sequence classifier), with
  `hidden_dropout_prob` as their dropout.
"""
import math

from .... import core
from ....core import nn
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward
from ...modeling_layers import GradientCheckpointingLayer
from ...modeling_outputs import BaseModelOutputWithPastAndCrossAttentions
from ...modeling_position_buckets import bucket_bias
from ..bert.modeling_bert import BertIntermediate, BertModel, BertOutput
from ..roberta.modeling_roberta import (RobertaForMaskedLM, RobertaForMultipleChoice, RobertaForQuestionAnswering,
                                        RobertaForSequenceClassification, RobertaForTokenClassification, RobertaLMHead,
                                        RobertaPreTrainedModel, create_position_ids_from_input_ids,
                                        create_position_ids_from_inputs_embeds)
from .configuration_mpnet import MPNetConfig


class MPNetEmbeddings(nn.Module):
    """Word and position embeddings (positions counted from the padding index 1, as RoBERTa's), LayerNorm, dropout."""

    def __init__(self, config):
        super().__init__()
        self.padding_idx = 1
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=self.padding_idx)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size,
                                                padding_idx=self.padding_idx)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.register_buffer("position_ids", core.arange(config.max_position_embeddings).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids=None, position_ids=None, inputs_embeds=None):
        if position_ids is None:
            position_ids = (create_position_ids_from_input_ids(input_ids, self.padding_idx) if input_ids is not None
                            else create_position_ids_from_inputs_embeds(inputs_embeds, self.padding_idx))
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        return self.dropout(self.LayerNorm(inputs_embeds + self.position_embeddings(position_ids)))


class MPNetSelfAttention(nn.Module):
    """Multi-head attention whose additive mask carries the relative-position bias."""

    def __init__(self, config):
        super().__init__()
        if config.hidden_size % config.num_attention_heads != 0:
            raise ValueError(f"The hidden size ({config.hidden_size}) is not a multiple of the number of attention "
                             f"heads ({config.num_attention_heads})")
        self.config = config
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.is_causal = False
        self.q = nn.Linear(config.hidden_size, self.all_head_size)
        self.k = nn.Linear(config.hidden_size, self.all_head_size)
        self.v = nn.Linear(config.hidden_size, self.all_head_size)
        self.o = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def forward(self, hidden_states, biased_mask, output_attentions=False):
        input_shape = tuple(hidden_states.shape[:-1])
        head_shape = input_shape + (-1, self.attention_head_size)
        query, key, value = (proj(hidden_states).view(head_shape).transpose(1, 2) for proj in (self.q, self.k, self.v))
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, biased_mask,
                                    dropout=self.dropout.p if self.training else 0.0,
                                    scaling=1 / math.sqrt(self.attention_head_size))
        return self.o(output.reshape(input_shape + (-1,))), weights


class MPNetAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.attn = MPNetSelfAttention(config)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, biased_mask, output_attentions=False):
        output, weights = self.attn(hidden_states, biased_mask, output_attentions)
        return self.LayerNorm(self.dropout(output) + hidden_states), weights


class MPNetLayer(GradientCheckpointingLayer):
    """MPNet's attention, then BERT's feed-forward (`intermediate`, `output`)."""

    def __init__(self, config):
        super().__init__()
        self.attention = MPNetAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, biased_mask, output_attentions=False):
        attention_output, weights = self.attention(hidden_states, biased_mask, output_attentions)
        return self.output(self.intermediate(attention_output), attention_output), weights


class MPNetEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.n_heads = config.num_attention_heads
        self.layer = nn.ModuleList([MPNetLayer(config) for _ in range(config.num_hidden_layers)])
        self.relative_attention_bias = nn.Embedding(config.relative_attention_num_buckets, self.n_heads)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, output_hidden_states=False,
                **decoder_inputs):
        """`decoder_inputs` are the cross-attention and cache inputs BertModel hands a decoder's
        encoder; MPNet is never a decoder, so they are always empty."""
        biased_mask = self.compute_position_bias(hidden_states).to(hidden_states.dtype)
        if attention_mask is not None:
            biased_mask = biased_mask + attention_mask
        all_hidden = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layer:
            hidden_states, weights = layer(hidden_states, biased_mask, output_attentions)
            if output_hidden_states:
                all_hidden += (hidden_states,)
            if output_attentions:
                all_attentions += (weights,)
        return BaseModelOutputWithPastAndCrossAttentions(last_hidden_state=hidden_states, hidden_states=all_hidden,
                                                         attentions=all_attentions)

    def compute_position_bias(self, x, num_buckets=32):
        """(1, heads, q, k) bias of each distance's bucket. The buckets are 32 whatever the
        table's size, as in the original code (and HF's)."""
        length = x.shape[1]
        return bucket_bias(self.relative_attention_bias, length, length, device=x.device, num_buckets=num_buckets)


class MPNetPreTrainedModel(RobertaPreTrainedModel):
    config_class = MPNetConfig
    base_model_prefix = "mpnet"

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, MPNetEmbeddings):
            with core.no_grad():
                module.position_ids.copy_(core.arange(module.position_ids.shape[-1]).expand((1, -1)))


class MPNetModel(BertModel, MPNetPreTrainedModel):
    _no_split_modules = ["MPNetEmbeddings", "MPNetLayer"]
    embeddings_class = MPNetEmbeddings
    encoder_class = MPNetEncoder

    def embed(self, token_type_ids=None, past_key_values_length=0, **inputs):
        """MPNet has no token types and is never a decoder, so those two inputs are dropped."""
        return self.embeddings(**inputs)


class MPNetLMHead(RobertaLMHead):
    pass


class MPNetPredictionHeadMixin:
    _tied_weights_keys = {
        "lm_head.decoder.weight": "mpnet.embeddings.word_embeddings.weight",
        "lm_head.decoder.bias": "lm_head.bias",
    }

    def build_prediction_head(self, config):
        self.lm_head = MPNetLMHead(config)


class MPNetForMaskedLM(MPNetPredictionHeadMixin, RobertaForMaskedLM, MPNetPreTrainedModel):
    base_model_class = MPNetModel


class MPNetForSequenceClassification(RobertaForSequenceClassification, MPNetPreTrainedModel):
    base_model_class = MPNetModel


class MPNetForMultipleChoice(RobertaForMultipleChoice, MPNetPreTrainedModel):
    base_model_class = MPNetModel


class MPNetForTokenClassification(RobertaForTokenClassification, MPNetPreTrainedModel):
    base_model_class = MPNetModel


class MPNetForQuestionAnswering(RobertaForQuestionAnswering, MPNetPreTrainedModel):
    base_model_class = MPNetModel


__all__ = [
    "MPNetForMaskedLM", "MPNetForMultipleChoice", "MPNetForQuestionAnswering", "MPNetForSequenceClassification",
    "MPNetForTokenClassification", "MPNetLayer", "MPNetModel", "MPNetPreTrainedModel",
]
