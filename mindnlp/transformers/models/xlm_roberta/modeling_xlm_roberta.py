# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""XLM-RoBERTa (Conneau et al., 2019): RoBERTa's architecture trained on 100 languages.

The network, its parameter names (under the same "roberta." prefix) and its heads are
RoBERTa's; only the vocabulary (a sentencepiece model) and the config's model_type
("xlm-roberta") differ. So each class here is the RoBERTa class under the XLM-RoBERTa name,
bound to `XLMRobertaConfig` through `XLMRobertaPreTrainedModel`.
"""
from ...generation import GenerationMixin
from ..roberta.modeling_roberta import (RobertaForCausalLM, RobertaForMaskedLM, RobertaForMultipleChoice,
                                        RobertaForQuestionAnswering, RobertaForSequenceClassification,
                                        RobertaForTokenClassification, RobertaModel, RobertaPreTrainedModel)
from .configuration_xlm_roberta import XLMRobertaConfig


class XLMRobertaPreTrainedModel(RobertaPreTrainedModel):
    config_class = XLMRobertaConfig
    base_model_prefix = "roberta"


class XLMRobertaModel(RobertaModel, XLMRobertaPreTrainedModel):
    pass


class XLMRobertaForCausalLM(RobertaForCausalLM, XLMRobertaPreTrainedModel, GenerationMixin):
    """GenerationMixin is listed here as well as through RobertaForCausalLM: HF v5 declares it
    on every class that generates, and its generation tests check that it is a direct base."""


class XLMRobertaForMaskedLM(RobertaForMaskedLM, XLMRobertaPreTrainedModel):
    pass


class XLMRobertaForSequenceClassification(RobertaForSequenceClassification, XLMRobertaPreTrainedModel):
    pass


class XLMRobertaForMultipleChoice(RobertaForMultipleChoice, XLMRobertaPreTrainedModel):
    pass


class XLMRobertaForTokenClassification(RobertaForTokenClassification, XLMRobertaPreTrainedModel):
    pass


class XLMRobertaForQuestionAnswering(RobertaForQuestionAnswering, XLMRobertaPreTrainedModel):
    pass


__all__ = [
    "XLMRobertaForCausalLM", "XLMRobertaForMaskedLM", "XLMRobertaForMultipleChoice", "XLMRobertaForQuestionAnswering",
    "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification", "XLMRobertaModel",
    "XLMRobertaPreTrainedModel",
]
