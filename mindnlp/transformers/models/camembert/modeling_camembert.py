# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""CamemBERT (Martin et al., 2020): RoBERTa trained on French.

The network, its parameter names (under the "roberta." prefix) and its heads are RoBERTa's;
the vocabulary (a sentencepiece model) and the config's model_type ("camembert") differ. So
each class is the RoBERTa class under the CamemBERT name, bound to `CamembertConfig`.
"""
from ...generation import GenerationMixin
from ..roberta.modeling_roberta import (RobertaForCausalLM, RobertaForMaskedLM, RobertaForMultipleChoice,
                                        RobertaForQuestionAnswering, RobertaForSequenceClassification,
                                        RobertaForTokenClassification, RobertaModel, RobertaPreTrainedModel)
from .configuration_camembert import CamembertConfig


class CamembertPreTrainedModel(RobertaPreTrainedModel):
    config_class = CamembertConfig
    base_model_prefix = "roberta"


class CamembertModel(RobertaModel, CamembertPreTrainedModel):
    pass


class CamembertForCausalLM(RobertaForCausalLM, CamembertPreTrainedModel, GenerationMixin):
    """GenerationMixin is a direct base, as HF v5 declares it on every class that generates."""


class CamembertForMaskedLM(RobertaForMaskedLM, CamembertPreTrainedModel):
    pass


class CamembertForSequenceClassification(RobertaForSequenceClassification, CamembertPreTrainedModel):
    pass


class CamembertForMultipleChoice(RobertaForMultipleChoice, CamembertPreTrainedModel):
    pass


class CamembertForTokenClassification(RobertaForTokenClassification, CamembertPreTrainedModel):
    pass


class CamembertForQuestionAnswering(RobertaForQuestionAnswering, CamembertPreTrainedModel):
    pass


__all__ = [
    "CamembertForCausalLM", "CamembertForMaskedLM", "CamembertForMultipleChoice", "CamembertForQuestionAnswering",
    "CamembertForSequenceClassification", "CamembertForTokenClassification", "CamembertModel",
    "CamembertPreTrainedModel",
]
