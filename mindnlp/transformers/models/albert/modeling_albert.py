# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ALBERT (Lan et al., 2019): BERT with factorised embeddings and layers shared across depth.

What differs from BERT:
- the embeddings are `embedding_size` wide and the encoder maps them to `hidden_size`
  (`embedding_hidden_mapping_in`);
- the encoder holds `num_hidden_groups` groups of `inner_group_num` layers, and its
  `num_hidden_layers` steps run through the groups in order, so the parameters are shared;
- a layer keeps its attention projection and post-norm inside the attention module, and its
  feed-forward is `ffn` → activation → `ffn_output` → `full_layer_layer_norm`;
- the pooler is a bare `pooler` Linear with tanh, the masked-LM head is `predictions`
  (dense to `embedding_size`, LayerNorm, decoder tied to the word embeddings), and
  pre-training predicts sentence order (`sop_classifier`) rather than the next sentence.
The heads are BERT's otherwise, with `classifier_dropout_prob` as their dropout.
"""
from dataclasses import dataclass
from typing import Optional

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...modeling_layers import GradientCheckpointingLayer
from ...modeling_outputs import BaseModelOutputWithPastAndCrossAttentions
from ...pytorch_utils import apply_chunking_to_forward
from ...utils.generic import ModelOutput
from ..bert.modeling_bert import (BertEmbeddings, BertForMaskedLM, BertForMultipleChoice, BertForPreTraining,
                                  BertForQuestionAnswering, BertForSequenceClassification, BertForTokenClassification,
                                  BertModel, BertPreTrainedModel, BertSelfAttention)
from .configuration_albert import AlbertConfig


class AlbertEmbeddings(BertEmbeddings):
    """BERT's embeddings, `embedding_size` wide."""

    def __init__(self, config):
        super().__init__(config, embedding_size=config.embedding_size)


class AlbertAttention(BertSelfAttention):
    """BERT's self-attention followed by its output projection, dropout and post-norm, which BERT
    keeps in a separate module (`BertSelfOutput`)."""

    def __init__(self, config):
        super().__init__(config)
        self.output_dropout = nn.Dropout(config.hidden_dropout_prob)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        attention_output, weights = super().forward(hidden_states, attention_mask,
                                                    output_attentions=output_attentions)
        projected = self.output_dropout(self.dense(attention_output))
        return self.LayerNorm(hidden_states + projected), weights


class AlbertLayer(GradientCheckpointingLayer):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1
        self.full_layer_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.attention = AlbertAttention(config)
        self.ffn = nn.Linear(config.hidden_size, config.intermediate_size)
        self.ffn_output = nn.Linear(config.intermediate_size, config.hidden_size)
        self.activation = ACT2FN[config.hidden_act]

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        attention_output, weights = self.attention(hidden_states, attention_mask, output_attentions)
        ffn_output = apply_chunking_to_forward(self.ff_chunk, self.chunk_size_feed_forward, self.seq_len_dim,
                                               attention_output)
        return self.full_layer_layer_norm(ffn_output + attention_output), weights

    def ff_chunk(self, attention_output):
        return self.ffn_output(self.activation(self.ffn(attention_output)))


class AlbertLayerGroup(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(config) for _ in range(config.inner_group_num)])

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        """(output, every layer's output, every layer's attention weights)."""
        states, weights = (), ()
        for layer in self.albert_layers:
            hidden_states, layer_weights = layer(hidden_states, attention_mask, output_attentions)
            states += (hidden_states,)
            weights += (layer_weights,)
        return hidden_states, states, weights


class AlbertTransformer(nn.Module):
    """The embeddings mapped to `hidden_size`, then `num_hidden_layers` steps through the shared
    groups. The hidden states it reports are the mapped input and every layer's output, as HF
    records them."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embedding_hidden_mapping_in = nn.Linear(config.embedding_size, config.hidden_size)
        self.albert_layer_groups = nn.ModuleList([AlbertLayerGroup(config) for _ in range(config.num_hidden_groups)])

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, output_hidden_states=False,
                **decoder_inputs):
        """`decoder_inputs` are the cross-attention and cache inputs BertModel hands a decoder's
        encoder; ALBERT is never a decoder, so they are always empty."""
        hidden_states = self.embedding_hidden_mapping_in(hidden_states)
        all_hidden = (hidden_states,)
        all_attentions = ()
        layers_per_group = self.config.num_hidden_layers / self.config.num_hidden_groups
        for i in range(self.config.num_hidden_layers):
            group = self.albert_layer_groups[int(i / layers_per_group)]
            hidden_states, states, weights = group(hidden_states, attention_mask, output_attentions)
            all_hidden += states
            all_attentions += weights
        return BaseModelOutputWithPastAndCrossAttentions(
            last_hidden_state=hidden_states, hidden_states=all_hidden if output_hidden_states else None,
            attentions=all_attentions if output_attentions else None)


class AlbertPooler(nn.Linear):
    """tanh of a Linear on the first token, stored as the bare Linear `pooler` (BERT nests it as `pooler.dense`)."""

    def __init__(self, config):
        super().__init__(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        return core.tanh(super().forward(hidden_states[:, 0]))


class AlbertMLMHead(nn.Module):
    """dense (hidden → embedding_size) → activation → LayerNorm → decoder, whose bias is `bias`."""

    def __init__(self, config):
        super().__init__()
        self.LayerNorm = nn.LayerNorm(config.embedding_size, eps=config.layer_norm_eps)
        self.bias = nn.Parameter(core.zeros(config.vocab_size))
        self.dense = nn.Linear(config.hidden_size, config.embedding_size)
        self.decoder = nn.Linear(config.embedding_size, config.vocab_size)
        self.activation = ACT2FN[config.hidden_act]

    def forward(self, hidden_states):
        return self.decoder(self.LayerNorm(self.activation(self.dense(hidden_states))))


class AlbertSOPHead(nn.Module):
    """Sentence-order prediction on the pooled first token."""

    def __init__(self, config):
        super().__init__()
        self.dropout = nn.Dropout(config.classifier_dropout_prob)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, pooled_output):
        return self.classifier(self.dropout(pooled_output))


class AlbertPreTrainedModel(BertPreTrainedModel):
    config_class = AlbertConfig
    base_model_prefix = "albert"

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, AlbertMLMHead):
            nn.init.zeros_(module.bias)


@dataclass
class AlbertForPreTrainingOutput(ModelOutput):
    loss: Optional[object] = None
    prediction_logits: Optional[object] = None
    sop_logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


class AlbertModel(BertModel, AlbertPreTrainedModel):
    _no_split_modules = ["AlbertEmbeddings", "AlbertLayer"]
    embeddings_class = AlbertEmbeddings
    encoder_class = AlbertTransformer
    pooler_class = AlbertPooler


class AlbertPredictionHeadMixin:
    """Token prediction through `predictions` rather than BERT's `cls.predictions`."""

    _tied_weights_keys = {
        "predictions.decoder.weight": "albert.embeddings.word_embeddings.weight",
        "predictions.decoder.bias": "predictions.bias",
    }

    def build_prediction_head(self, config):
        self.predictions = AlbertMLMHead(config)

    def prediction_head(self):
        return self.predictions

    def predict_tokens(self, sequence_output):
        return self.predictions(sequence_output)


class AlbertForPreTraining(AlbertPredictionHeadMixin, BertForPreTraining, AlbertPreTrainedModel):
    """Masked-LM and sentence-order heads; the loss is the sum of both when both labels are given."""

    base_model_class = AlbertModel
    output_class = AlbertForPreTrainingOutput
    sentence_logits_name = "sop_logits"

    def build_prediction_head(self, config):
        super().build_prediction_head(config)
        self.sop_classifier = AlbertSOPHead(config)

    def pretraining_scores(self, outputs):
        return self.predictions(outputs[0]), self.sop_classifier(outputs[1])

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, sentence_order_label=None, return_dict=None, **kwargs):
        return self.pretraining_output(labels, sentence_order_label, return_dict, kwargs, input_ids=input_ids,
                                       attention_mask=attention_mask, token_type_ids=token_type_ids,
                                       position_ids=position_ids, inputs_embeds=inputs_embeds)


class AlbertForMaskedLM(AlbertPredictionHeadMixin, BertForMaskedLM, AlbertPreTrainedModel):
    base_model_class = AlbertModel


class AlbertForSequenceClassification(BertForSequenceClassification, AlbertPreTrainedModel):
    base_model_class = AlbertModel


class AlbertForTokenClassification(BertForTokenClassification, AlbertPreTrainedModel):
    base_model_class = AlbertModel


class AlbertForQuestionAnswering(BertForQuestionAnswering, AlbertPreTrainedModel):
    base_model_class = AlbertModel


class AlbertForMultipleChoice(BertForMultipleChoice, AlbertPreTrainedModel):
    base_model_class = AlbertModel


__all__ = [
    "AlbertForMaskedLM", "AlbertForMultipleChoice", "AlbertForPreTraining", "AlbertForQuestionAnswering",
    "AlbertForSequenceClassification", "AlbertForTokenClassification", "AlbertModel", "AlbertPreTrainedModel",
]
