# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen3-MoE (Qwen team, 2025): Qwen2-MoE's layers with Qwen3's attention and no shared expert,
with Hugging Face's parameter names.

What differs from Qwen2-MoE: attention normalises each head's query and key (Qwen3's q/k
norm) and is biased only when `config.attention_bias`; the MoE block is the routed experts
alone. With `use_sliding_window`, every layer attends over the window.
"""
from ...generation import GenerationMixin
from ...modeling_layers import (GenericForQuestionAnswering, GenericForSequenceClassification,
                                GenericForTokenClassification)
from ...modeling_moe import MoeExperts, MoeForCausalLM, MoeModel, MoePreTrainedModel, SparseMoeBlock, TopKRouter
from ..qwen2_moe.modeling_qwen2_moe import Qwen2MoeDecoderLayer, Qwen2MoeMLP
from ..qwen3.modeling_qwen3 import Qwen3Attention
from .configuration_qwen3_moe import Qwen3MoeConfig


class Qwen3MoeAttention(Qwen3Attention):
    pass


class Qwen3MoeMLP(Qwen2MoeMLP):
    pass


class Qwen3MoeExperts(MoeExperts):
    pass


class Qwen3MoeTopKRouter(TopKRouter):
    pass


class Qwen3MoeSparseMoeBlock(SparseMoeBlock):
    router_class = Qwen3MoeTopKRouter
    experts_class = Qwen3MoeExperts


class Qwen3MoeDecoderLayer(Qwen2MoeDecoderLayer):
    attention_class = Qwen3MoeAttention
    mlp_class = Qwen3MoeSparseMoeBlock


class Qwen3MoePreTrainedModel(MoePreTrainedModel):
    config_class = Qwen3MoeConfig
    _no_split_modules = ["Qwen3MoeDecoderLayer"]


class Qwen3MoeModel(MoeModel, Qwen3MoePreTrainedModel):
    layer_class = Qwen3MoeDecoderLayer


class Qwen3MoeForCausalLM(MoeForCausalLM, Qwen3MoePreTrainedModel, GenerationMixin):
    base_model_class = Qwen3MoeModel


class Qwen3MoeForSequenceClassification(GenericForSequenceClassification, Qwen3MoePreTrainedModel):
    base_model_class = Qwen3MoeModel


class Qwen3MoeForTokenClassification(GenericForTokenClassification, Qwen3MoePreTrainedModel):
    base_model_class = Qwen3MoeModel


class Qwen3MoeForQuestionAnswering(GenericForQuestionAnswering, Qwen3MoePreTrainedModel):
    """The base model is named `transformer` here, as in Llama's and HF's."""

    base_model_class = Qwen3MoeModel
    base_model_prefix = "transformer"


__all__ = [
    "Qwen3MoeForCausalLM", "Qwen3MoeForQuestionAnswering", "Qwen3MoeForSequenceClassification",
    "Qwen3MoeForTokenClassification", "Qwen3MoeModel", "Qwen3MoePreTrainedModel",
]
