# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ELECTRA (Clark et al., 2020): BERT's encoder trained as a replaced-token discriminator.

What differs from BERT:
- the embeddings are `embedding_size` wide and projected to `hidden_size` by
  `embeddings_project` when the two differ (the small generator shares the discriminator's
  embeddings); the model has no pooler;
- `ElectraForPreTraining` is the discriminator: one logit per token saying whether it was
  replaced, trained with binary cross-entropy over the attended tokens;
- the generator heads (`ElectraForMaskedLM`, `ElectraForCausalLM`) predict tokens through
  `generator_predictions` (dense to `embedding_size`, gelu, LayerNorm) and
  `generator_lm_head`, tied to the word embeddings;
- sequence classification reads the first token through RoBERTa's head with gelu instead of
  tanh, and multiple choice through the sequence summary its config describes.
The layers are BERT's, so the model can act as a decoder (`is_decoder`, `add_cross_attention`).
"""
from dataclasses import dataclass
from typing import Optional

from ....core import nn
from ...activations import get_activation
from ...generation import GenerationMixin
from ...modeling_layers import GenericHead, SequenceSummary, head_output
from ...utils.generic import ModelOutput
from ..bert.modeling_bert import (BertEmbeddings, BertForMaskedLM, BertForMultipleChoice, BertForQuestionAnswering,
                                  BertForSequenceClassification, BertForTokenClassification, BertLMHeadModel,
                                  BertModel, BertPreTrainedModel)
from ..roberta.modeling_roberta import RobertaClassificationHead
from .configuration_electra import ElectraConfig


class ElectraEmbeddings(BertEmbeddings):
    """BERT's embeddings, `embedding_size` wide."""

    def __init__(self, config):
        super().__init__(config, embedding_size=config.embedding_size)


class ElectraDiscriminatorPredictions(nn.Module):
    """dense → activation → one logit per token (replaced or original)."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = get_activation(config.hidden_act)
        self.dense_prediction = nn.Linear(config.hidden_size, 1)

    def forward(self, discriminator_hidden_states):
        return self.dense_prediction(self.activation(self.dense(discriminator_hidden_states))).squeeze(-1)


class ElectraGeneratorPredictions(nn.Module):
    """dense (hidden → embedding_size) → gelu → LayerNorm, ahead of the tied `generator_lm_head`."""

    def __init__(self, config):
        super().__init__()
        self.activation = get_activation("gelu")
        self.LayerNorm = nn.LayerNorm(config.embedding_size, eps=config.layer_norm_eps)
        self.dense = nn.Linear(config.hidden_size, config.embedding_size)

    def forward(self, generator_hidden_states):
        return self.LayerNorm(self.activation(self.dense(generator_hidden_states)))


class ElectraClassificationHead(RobertaClassificationHead):
    """RoBERTa's head on the first token with gelu in place of tanh, as ELECTRA was fine-tuned."""

    def forward(self, features, **kwargs):
        x = self.dropout(features[:, 0, :])
        x = self.dropout(nn.functional.gelu(self.dense(x)))
        return self.out_proj(x)


class ElectraPreTrainedModel(BertPreTrainedModel):
    config_class = ElectraConfig
    base_model_prefix = "electra"


@dataclass
class ElectraForPreTrainingOutput(ModelOutput):
    loss: Optional[object] = None
    logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


class ElectraModel(BertModel, ElectraPreTrainedModel):
    """BERT's model without a pooler (so `add_pooling_layer` changes nothing); the embeddings are
    projected to `hidden_size` when they are narrower."""

    _no_split_modules = ["ElectraEmbeddings", "BertLayer"]
    embeddings_class = ElectraEmbeddings
    pooler_class = None

    def __init__(self, config, add_pooling_layer=False):
        super().__init__(config, add_pooling_layer)
        if config.embedding_size != config.hidden_size:
            self.embeddings_project = nn.Linear(config.embedding_size, config.hidden_size)
            self._init_weights(self.embeddings_project)

    def embed(self, **inputs):
        hidden_states = self.embeddings(**inputs)
        if hasattr(self, "embeddings_project"):
            hidden_states = self.embeddings_project(hidden_states)
        return hidden_states


class ElectraGeneratorHeadMixin:
    """Token prediction through `generator_predictions` and the tied `generator_lm_head`."""

    _tied_weights_keys = {"generator_lm_head.weight": "electra.embeddings.word_embeddings.weight"}

    def build_prediction_head(self, config):
        self.generator_predictions = ElectraGeneratorPredictions(config)
        self.generator_lm_head = nn.Linear(config.embedding_size, config.vocab_size)

    def predict_tokens(self, sequence_output):
        return self.generator_lm_head(self.generator_predictions(sequence_output))

    def get_output_embeddings(self):
        return self.generator_lm_head

    def set_output_embeddings(self, new_embeddings):
        self.generator_lm_head = new_embeddings


class ElectraForPreTraining(GenericHead, ElectraPreTrainedModel):
    """The discriminator: a replaced-or-not logit per token."""

    base_model_class = ElectraModel

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.discriminator_predictions = ElectraDiscriminatorPredictions(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        """With labels (1: replaced), the binary cross-entropy over the tokens `attention_mask` keeps."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        logits = self.discriminator_predictions(outputs[0])
        loss = None
        if labels is not None:
            if attention_mask is not None:
                active = attention_mask.view(-1, logits.shape[1]) == 1
                logits_kept, labels_kept = logits.view(-1, logits.shape[1])[active], labels[active]
            else:
                logits_kept, labels_kept = logits.view(-1, logits.shape[1]), labels
            loss = nn.functional.binary_cross_entropy_with_logits(logits_kept, labels_kept.float())
        return head_output(ElectraForPreTrainingOutput, outputs, return_dict, loss=loss, logits=logits)


class ElectraForMaskedLM(ElectraGeneratorHeadMixin, BertForMaskedLM, ElectraPreTrainedModel):
    base_model_class = ElectraModel


class ElectraForCausalLM(ElectraGeneratorHeadMixin, BertLMHeadModel, ElectraPreTrainedModel, GenerationMixin):
    base_model_class = ElectraModel


class ElectraForSequenceClassification(BertForSequenceClassification, ElectraPreTrainedModel):
    base_model_class = ElectraModel

    def build_classifier(self, config):
        self._build_base_model(config)
        self.classifier = ElectraClassificationHead(config)

    def classify(self, outputs):
        return self.classifier(outputs.last_hidden_state)


class ElectraForTokenClassification(BertForTokenClassification, ElectraPreTrainedModel):
    base_model_class = ElectraModel


class ElectraForQuestionAnswering(BertForQuestionAnswering, ElectraPreTrainedModel):
    base_model_class = ElectraModel


class ElectraForMultipleChoice(BertForMultipleChoice, ElectraPreTrainedModel):
    """Each choice is summarised as the config's `summary_*` options say (ELECTRA's: the first
    token, projected, gelu), then scored."""

    base_model_class = ElectraModel

    def build_summary(self, config):
        self.sequence_summary = SequenceSummary(config)

    def summarize(self, outputs):
        return self.sequence_summary(outputs.last_hidden_state)


__all__ = [
    "ElectraForCausalLM", "ElectraForMaskedLM", "ElectraForMultipleChoice", "ElectraForPreTraining",
    "ElectraForQuestionAnswering", "ElectraForSequenceClassification", "ElectraForTokenClassification",
    "ElectraModel", "ElectraPreTrainedModel",
]
