# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Mixtral (Jiang et al., 2024): Mistral's decoder with a sparse mixture of experts in place of
the MLP, with Hugging Face's parameter names.

What differs from Mistral: each layer's MLP is `num_local_experts` SwiGLU experts and a
router (`mlp.gate`) that sends every token to its `num_experts_per_tok` best experts, their
outputs weighted by the renormalised top-k softmax probabilities (the shared MoE blocks of
`modeling_moe`). The outputs add the router logits and the load-balancing loss.

Published checkpoints name the block `block_sparse_moe` and hold one w1/w2/w3 Linear per
expert; they load into the fused `mlp.experts.gate_up_proj` / `down_proj` (see
`conversion_mapping`), and saving writes that layout back.
"""
from ...generation import GenerationMixin
from ...modeling_layers import (GenericForQuestionAnswering, GenericForSequenceClassification,
                                GenericForTokenClassification)
from ...modeling_moe import MoeExperts, MoeForCausalLM, MoeModel, MoePreTrainedModel, SparseMoeBlock, TopKRouter
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from .configuration_mixtral import MixtralConfig


class MixtralExperts(MoeExperts):
    pass


class MixtralTopKRouter(TopKRouter):
    pass


class MixtralSparseMoeBlock(SparseMoeBlock):
    router_class = MixtralTopKRouter
    experts_class = MixtralExperts


class MixtralAttention(LlamaAttention):
    pass


class MixtralDecoderLayer(LlamaDecoderLayer):
    attention_class = MixtralAttention
    mlp_class = MixtralSparseMoeBlock


class MixtralPreTrainedModel(MoePreTrainedModel):
    config_class = MixtralConfig
    _no_split_modules = ["MixtralDecoderLayer"]


class MixtralModel(MoeModel, MixtralPreTrainedModel):
    layer_class = MixtralDecoderLayer


class MixtralForCausalLM(MoeForCausalLM, MixtralPreTrainedModel, GenerationMixin):
    base_model_class = MixtralModel


class MixtralForSequenceClassification(GenericForSequenceClassification, MixtralPreTrainedModel):
    base_model_class = MixtralModel


class MixtralForTokenClassification(GenericForTokenClassification, MixtralPreTrainedModel):
    base_model_class = MixtralModel


class MixtralForQuestionAnswering(GenericForQuestionAnswering, MixtralPreTrainedModel):
    base_model_class = MixtralModel


__all__ = [
    "MixtralForCausalLM", "MixtralForQuestionAnswering", "MixtralForSequenceClassification",
    "MixtralForTokenClassification", "MixtralModel", "MixtralPreTrainedModel",
]
