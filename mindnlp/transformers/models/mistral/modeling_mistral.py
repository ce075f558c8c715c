# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Mistral (Jiang et al., 2023): Llama's decoder with sliding-window attention, with Hugging Face's
parameter names.

With `config.sliding_window` = w, query i attends only to keys i - w + 1 .. i, and the KV cache
keeps only the last w - 1 positions of each layer. The shared decoder reads the window from
the config (for the masks and the cache alike) and Mistral's config has neither
`attention_bias` nor `mlp_bias`, so no projection has a bias: what is left to declare here
is the config class and the names.
"""
from ...generation import GenerationMixin
from ...modeling_layers import GenericForQuestionAnswering
from ..llama.modeling_llama import (LlamaForCausalLM, LlamaForSequenceClassification, LlamaForTokenClassification,
                                    LlamaModel, LlamaPreTrainedModel)
from .configuration_mistral import MistralConfig


class MistralPreTrainedModel(LlamaPreTrainedModel):
    config_class = MistralConfig


class MistralModel(LlamaModel, MistralPreTrainedModel):
    pass


class MistralForCausalLM(LlamaForCausalLM, MistralPreTrainedModel, GenerationMixin):
    base_model_class = MistralModel


class MistralForSequenceClassification(LlamaForSequenceClassification, MistralPreTrainedModel):
    base_model_class = MistralModel


class MistralForTokenClassification(LlamaForTokenClassification, MistralPreTrainedModel):
    base_model_class = MistralModel


class MistralForQuestionAnswering(GenericForQuestionAnswering, MistralPreTrainedModel):
    """Unlike Llama's, the base model keeps the name `model`."""

    base_model_class = MistralModel


__all__ = [
    "MistralForCausalLM", "MistralForQuestionAnswering", "MistralForSequenceClassification",
    "MistralForTokenClassification", "MistralModel", "MistralPreTrainedModel",
]
