# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""gpt-oss (OpenAI, 2025): Mixtral's sparse decoder with attention sinks, alternating sliding
and full attention and a clamped SwiGLU in its experts, with Hugging Face's parameter names.

What differs from Mixtral:
- attention: biased projections and a learned sink logit per head that joins each row's
  softmax (`sinks`), so a query may attend to nothing; the layers alternate a
  `sliding_window` and full attention (`layer_types`); YaRN rope.
- router (`mlp.router`): biased; the weights are the softmax of the top-k logits alone.
- experts: biased, stored as (in, out), gate and up interleaved along `gate_up_proj`'s
  columns; the activation is (clamp(up, ±limit) + 1) · g · sigmoid(alpha · g) with
  g = min(gate, limit).
- RMSNorm applies its weight in float32 before casting back, and stays in float32.
"""
from ....core import nn
from ...generation import GenerationMixin
from ...modeling_decoder import RMSNorm
from ...modeling_layers import GenericForSequenceClassification, GenericForTokenClassification
from ...modeling_moe import MoeExperts, MoeForCausalLM, MoeModel, MoePreTrainedModel, SparseMoeBlock, TopKRouter
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from .configuration_gpt_oss import GptOssConfig


class GptOssRMSNorm(RMSNorm):
    def forward(self, hidden_states):
        return nn.functional.rms_norm(hidden_states.float(), (hidden_states.shape[-1],), self.weight.float(),
                                      eps=self.variance_epsilon).to(hidden_states.dtype)


class GptOssTopKRouter(TopKRouter):
    def __init__(self, config):
        super().__init__(config)
        self.bias = nn.Parameter(self.weight.new_zeros(self.num_experts))

    def forward(self, hidden_states):
        router_logits = nn.functional.linear(hidden_states, self.weight, self.bias)
        top_logits, top_index = router_logits.topk(self.top_k, dim=-1)
        return router_logits, nn.functional.softmax(top_logits, dim=-1), top_index


class GptOssExperts(MoeExperts):
    is_transposed = True
    has_bias = True

    def __init__(self, config):
        super().__init__(config)
        self.alpha = config.swiglu_alpha
        self.limit = config.swiglu_limit

    def activate(self, gate_up):
        gate = gate_up[..., 0::2].clamp(max=self.limit)
        up = gate_up[..., 1::2].clamp(min=-self.limit, max=self.limit)
        return (up + 1) * (gate * nn.functional.sigmoid(gate * self.alpha))


class GptOssMLP(SparseMoeBlock):
    router_class = GptOssTopKRouter
    experts_class = GptOssExperts
    router_name = "router"


class GptOssAttention(LlamaAttention):
    has_sinks = True


class GptOssDecoderLayer(LlamaDecoderLayer):
    attention_class = GptOssAttention
    mlp_class = GptOssMLP
    norm_class = GptOssRMSNorm


class GptOssPreTrainedModel(MoePreTrainedModel):
    config_class = GptOssConfig
    _no_split_modules = ["GptOssDecoderLayer"]
    # The fused attention kernel has no sinks.
    _supports_sdpa = False
    _keep_in_fp32_modules = ["post_attention_layernorm", "input_layernorm", "norm"]

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, GptOssTopKRouter):
            nn.init.normal_(module.bias, mean=0.0, std=self.config.initializer_range)


class GptOssModel(MoeModel, GptOssPreTrainedModel):
    layer_class = GptOssDecoderLayer


class GptOssForCausalLM(MoeForCausalLM, GptOssPreTrainedModel, GenerationMixin):
    base_model_class = GptOssModel


class GptOssForSequenceClassification(GenericForSequenceClassification, GptOssPreTrainedModel):
    base_model_class = GptOssModel


class GptOssForTokenClassification(GenericForTokenClassification, GptOssPreTrainedModel):
    base_model_class = GptOssModel


__all__ = [
    "GptOssForCausalLM", "GptOssForSequenceClassification", "GptOssForTokenClassification", "GptOssModel",
    "GptOssPreTrainedModel",
]
