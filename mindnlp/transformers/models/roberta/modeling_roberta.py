# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""RoBERTa (Liu et al., 2019): BERT's encoder retrained, with Hugging Face's parameter names.

Two things differ from BERT. Position ids count from `pad_token_id + 1` and padding tokens
keep position `pad_token_id` (fairseq's convention, which the checkpoints were trained
with), so padded rows embed exactly like unpadded ones. The heads differ too: the
masked-LM head is `lm_head` (dense, gelu, layer_norm, decoder) and sequence classification
reads the first token through its own dense + tanh head instead of the pooler. The encoder
layers are BERT's; the model can act as a decoder (`config.is_decoder`,
`add_cross_attention`), as in HF.
"""
from .... import core
from ....core import nn
from ...generation import GenerationMixin
from ..bert.modeling_bert import (BertEmbeddings, BertForMaskedLM, BertForMultipleChoice, BertForQuestionAnswering,
                                  BertForSequenceClassification, BertForTokenClassification, BertLMHeadModel,
                                  BertModel, BertPreTrainedModel, classifier_dropout)
from .configuration_roberta import RobertaConfig


def create_position_ids_from_input_ids(input_ids, padding_idx, past_key_values_length=0):
    """Positions padding_idx + 1, padding_idx + 2, ... for real tokens; padding_idx for padding.

    Counting only non-padding tokens makes a left-padded row get the same positions as the
    unpadded sequence.
    """
    mask = input_ids.ne(padding_idx).int()
    incremental_indices = (core.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
    return incremental_indices.long() + padding_idx


def create_position_ids_from_inputs_embeds(inputs_embeds, padding_idx):
    """Embeddings do not say which positions are padding: number all of them from padding_idx + 1."""
    input_shape = tuple(inputs_embeds.shape[:-1])
    sequence_length = input_shape[1]
    position_ids = core.arange(padding_idx + 1, sequence_length + padding_idx + 1, dtype=core.long,
                               device=inputs_embeds.device)
    return position_ids.unsqueeze(0).expand(input_shape)


class RobertaEmbeddings(BertEmbeddings):
    """BERT's embeddings with positions counted from the padding index (and its row kept at zero)."""

    def __init__(self, config):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size,
                                                padding_idx=self.padding_idx)

    create_position_ids_from_input_ids = staticmethod(create_position_ids_from_input_ids)
    create_position_ids_from_inputs_embeds = staticmethod(create_position_ids_from_inputs_embeds)

    def default_position_ids(self, input_ids, inputs_embeds, past_key_values_length):
        if input_ids is not None:
            return create_position_ids_from_input_ids(input_ids, self.padding_idx, past_key_values_length)
        return create_position_ids_from_inputs_embeds(inputs_embeds, self.padding_idx)


class RobertaLMHead(nn.Module):
    """dense → gelu → layer_norm → decoder (tied to the word embeddings, with `bias` as its bias)."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)
        self.bias = nn.Parameter(core.zeros(config.vocab_size))

    def forward(self, features, **kwargs):
        hidden = nn.functional.gelu(self.dense(features))
        return self.decoder(self.layer_norm(hidden))


class RobertaClassificationHead(nn.Module):
    """Sentence-level head on the first token (<s>): dropout, dense, tanh, dropout, out_proj."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(classifier_dropout(config))
        self.out_proj = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, features, **kwargs):
        x = self.dropout(features[:, 0, :])
        x = self.dropout(core.tanh(self.dense(x)))
        return self.out_proj(x)


class RobertaPreTrainedModel(BertPreTrainedModel):
    config_class = RobertaConfig
    base_model_prefix = "roberta"

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, RobertaLMHead):
            nn.init.zeros_(module.bias)


class RobertaModel(BertModel, RobertaPreTrainedModel):
    _no_split_modules = ["RobertaEmbeddings", "BertLayer"]
    embeddings_class = RobertaEmbeddings


class RobertaPredictionHeadMixin:
    """Token prediction through `lm_head` rather than BERT's `cls.predictions`."""

    _tied_weights_keys = {
        "lm_head.decoder.weight": "roberta.embeddings.word_embeddings.weight",
        "lm_head.decoder.bias": "lm_head.bias",
    }

    def build_prediction_head(self, config):
        self.lm_head = RobertaLMHead(config)

    def prediction_head(self):
        return self.lm_head

    def predict_tokens(self, sequence_output):
        return self.lm_head(sequence_output)


class RobertaForCausalLM(RobertaPredictionHeadMixin, BertLMHeadModel, RobertaPreTrainedModel, GenerationMixin):
    base_model_class = RobertaModel


class RobertaForMaskedLM(RobertaPredictionHeadMixin, BertForMaskedLM, RobertaPreTrainedModel):
    base_model_class = RobertaModel


class RobertaForSequenceClassification(BertForSequenceClassification, RobertaPreTrainedModel):
    """Reads the first token through `RobertaClassificationHead`; the base model has no pooler."""

    base_model_class = RobertaModel

    def build_classifier(self, config):
        self._build_base_model(config, add_pooling_layer=False)
        self.classifier = RobertaClassificationHead(config)

    def classify(self, outputs):
        return self.classifier(outputs.last_hidden_state)


class RobertaForMultipleChoice(BertForMultipleChoice, RobertaPreTrainedModel):
    """BERT's head, but its dropout is always `hidden_dropout_prob`."""

    base_model_class = RobertaModel

    def build_summary(self, config):
        self.dropout = nn.Dropout(config.hidden_dropout_prob)


class RobertaForTokenClassification(BertForTokenClassification, RobertaPreTrainedModel):
    base_model_class = RobertaModel


class RobertaForQuestionAnswering(BertForQuestionAnswering, RobertaPreTrainedModel):
    base_model_class = RobertaModel


__all__ = [
    "RobertaForCausalLM", "RobertaForMaskedLM", "RobertaForMultipleChoice", "RobertaForQuestionAnswering",
    "RobertaForSequenceClassification", "RobertaForTokenClassification", "RobertaModel", "RobertaPreTrainedModel",
]
