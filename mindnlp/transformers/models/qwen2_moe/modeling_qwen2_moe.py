# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen2-MoE (Qwen team, 2024): Qwen2's decoder with routed experts beside a gated shared expert,
with Hugging Face's parameter names.

What differs from Qwen2: the MLP of every `decoder_sparse_step`-th layer (not listed in
`mlp_only_layers`) is an MoE block: `num_experts` routed experts of which each token uses
`num_experts_per_tok` (top-k weights renormalised only with `norm_topk_prob`), plus a
`shared_expert` MLP every token goes through, scaled by sigmoid(`shared_expert_gate`(x)).
The q/k/v biases follow `config.qkv_bias`. The outputs add the router logits and the
load-balancing loss (`modeling_moe`).
"""
from ....core import nn
from ...generation import GenerationMixin
from ...modeling_decoder import GatedMLP
from ...modeling_layers import (GenericForQuestionAnswering, GenericForSequenceClassification,
                                GenericForTokenClassification)
from ...modeling_moe import MoeExperts, MoeForCausalLM, MoeModel, MoePreTrainedModel, SparseMoeBlock, TopKRouter
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from .configuration_qwen2_moe import Qwen2MoeConfig


class Qwen2MoeMLP(GatedMLP):
    pass


class Qwen2MoeAttention(LlamaAttention):
    def projection_biases(self, config):
        return config.qkv_bias, False


class Qwen2MoeExperts(MoeExperts):
    pass


class Qwen2MoeTopKRouter(TopKRouter):
    pass


class Qwen2MoeSparseMoeBlock(SparseMoeBlock):
    """The routed experts plus sigmoid(shared_expert_gate(x)) · shared_expert(x)."""

    router_class = Qwen2MoeTopKRouter
    experts_class = Qwen2MoeExperts

    def __init__(self, config):
        super().__init__(config)
        self.shared_expert = Qwen2MoeMLP(config, intermediate_size=config.shared_expert_intermediate_size)
        self.shared_expert_gate = nn.Linear(config.hidden_size, 1, bias=False)

    def forward(self, hidden_states):
        shared = nn.functional.sigmoid(self.shared_expert_gate(hidden_states)) * self.shared_expert(hidden_states)
        return super().forward(hidden_states) + shared


class Qwen2MoeDecoderLayer(LlamaDecoderLayer):
    attention_class = Qwen2MoeAttention
    mlp_class = Qwen2MoeSparseMoeBlock

    def build_mlp(self, config, layer_idx):
        """Experts on every `decoder_sparse_step`-th layer outside `mlp_only_layers`, else a dense MLP."""
        if layer_idx not in config.mlp_only_layers and config.num_experts > 0 \
                and (layer_idx + 1) % config.decoder_sparse_step == 0:
            return self.mlp_class(config)
        return Qwen2MoeMLP(config)


class Qwen2MoePreTrainedModel(MoePreTrainedModel):
    config_class = Qwen2MoeConfig
    _no_split_modules = ["Qwen2MoeDecoderLayer"]


class Qwen2MoeModel(MoeModel, Qwen2MoePreTrainedModel):
    layer_class = Qwen2MoeDecoderLayer


class Qwen2MoeForCausalLM(MoeForCausalLM, Qwen2MoePreTrainedModel, GenerationMixin):
    base_model_class = Qwen2MoeModel


class Qwen2MoeForSequenceClassification(GenericForSequenceClassification, Qwen2MoePreTrainedModel):
    base_model_class = Qwen2MoeModel


class Qwen2MoeForTokenClassification(GenericForTokenClassification, Qwen2MoePreTrainedModel):
    base_model_class = Qwen2MoeModel


class Qwen2MoeForQuestionAnswering(GenericForQuestionAnswering, Qwen2MoePreTrainedModel):
    base_model_class = Qwen2MoeModel


__all__ = [
    "Qwen2MoeForCausalLM", "Qwen2MoeForQuestionAnswering", "Qwen2MoeForSequenceClassification",
    "Qwen2MoeForTokenClassification", "Qwen2MoeModel", "Qwen2MoePreTrainedModel",
]
