# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeepSeek-V3 (DeepSeek-AI, 2024): Llama's decoder with multi-head latent attention and
group-limited routed experts beside shared ones, with Hugging Face's parameter names.

What differs from Llama:
- attention (MLA): queries go through a low-rank bottleneck (`q_a_proj` → RMSNorm → `q_b_proj`,
  or one `q_proj` when `q_lora_rank` is None); keys and values come from one latent
  (`kv_a_proj_with_mqa` → RMSNorm → `kv_b_proj`). Each head's query and key are
  `qk_nope_head_dim` features without position plus `qk_rope_head_dim` rotated ones, the
  key's rotated part shared by every head; values are `v_head_dim` wide. With
  `rope_interleave` the rotated features come in adjacent pairs. With YaRN and
  `mscale_all_dim`, the softmax scale grows by mscale².
- experts (`mlp`, from layer `first_k_dense_replace` on): sigmoid scores; a token picks its
  `topk_group` best of `n_group` groups (a group's score: the sum of its two best experts'
  scores plus `e_score_correction_bias`), then its `num_experts_per_tok` best experts in them;
  the weights are their plain sigmoid scores, renormalised (`norm_topk_prob`) and scaled by
  `routed_scaling_factor`. `shared_experts` (one MLP of `n_shared_experts` experts' width)
  run on every token. No load-balancing loss: the outputs carry the router logits only.
"""
from .... import core
from ....core import nn
from ...generation import GenerationMixin
from ...modeling_attention import split_heads
from ...modeling_decoder import GatedMLP, RMSNorm
from ...modeling_layers import GenericForSequenceClassification, GenericForTokenClassification
from ...modeling_moe import MoeExperts, MoeForCausalLM, MoeModel, MoePreTrainedModel, SparseMoeBlock, TopKRouter
from ...modeling_rope_utils import yarn_softmax_scale
from ..llama.modeling_llama import LlamaAttention, LlamaDecoderLayer
from .configuration_deepseek_v3 import DeepseekV3Config


class DeepseekV3RMSNorm(RMSNorm):
    pass


class DeepseekV3MLP(GatedMLP):
    pass


class DeepseekV3TopkRouter(TopKRouter):
    """Group-limited top-k over sigmoid scores; the logits it returns are the raw float32 ones."""

    def __init__(self, config):
        super().__init__(config)
        self.routed_scaling_factor = config.routed_scaling_factor
        self.n_group = config.n_group
        self.topk_group = config.topk_group
        self.register_buffer("e_score_correction_bias", core.zeros(self.num_experts))

    def forward(self, hidden_states):
        hidden_states = hidden_states.reshape(-1, self.hidden_dim)
        router_logits = nn.functional.linear(hidden_states.float(), self.weight.float())
        scores = router_logits.sigmoid()
        for_choice = scores + self.e_score_correction_bias
        grouped = for_choice.reshape(-1, self.n_group, self.num_experts // self.n_group)
        group_scores = grouped.topk(2, dim=-1)[0].sum(dim=-1)
        best_groups = core.topk(group_scores, self.topk_group, dim=-1, sorted=False)[1]
        group_mask = core.zeros_like(group_scores).scatter(1, best_groups, 1.0)
        in_best_groups = group_mask.unsqueeze(-1).expand(grouped.shape).reshape(-1, self.num_experts)
        for_choice = for_choice.masked_fill(in_best_groups == 0, float("-inf"))
        top_index = core.topk(for_choice, self.top_k, dim=-1, sorted=False)[1]
        top_weights = scores.gather(1, top_index)
        if self.norm_topk_prob:
            top_weights = top_weights / (top_weights.sum(dim=-1, keepdim=True) + 1e-20)
        return router_logits, top_weights * self.routed_scaling_factor, top_index


class DeepseekV3Experts(MoeExperts):
    pass


class DeepseekV3MoE(SparseMoeBlock):
    """The routed experts plus the shared ones, which every token goes through."""

    router_class = DeepseekV3TopkRouter
    experts_class = DeepseekV3Experts

    def __init__(self, config):
        super().__init__(config)
        self.shared_experts = DeepseekV3MLP(
            config, intermediate_size=config.moe_intermediate_size * config.n_shared_experts)

    def forward(self, hidden_states):
        return super().forward(hidden_states) + self.shared_experts(hidden_states)


class DeepseekV3Attention(LlamaAttention):
    """Multi-head latent attention.

    `project` puts each head's rotated features first, where the shared partial rotation
    turns them (the first `qk_rope_head_dim` features, `config.head_dim`): a query-key dot
    product does not depend on the order of the features, so attention equals HF's
    [no-position, rotated] layout. The cache holds the per-head keys and values.
    """

    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.q_lora_rank = config.q_lora_rank
        self.kv_lora_rank = config.kv_lora_rank
        self.qk_nope_head_dim = config.qk_nope_head_dim
        self.qk_rope_head_dim = config.qk_rope_head_dim
        self.qk_head_dim = config.qk_nope_head_dim + config.qk_rope_head_dim
        self.v_head_dim = config.v_head_dim
        self.scaling = self.qk_head_dim ** -0.5 * yarn_softmax_scale(config.rope_parameters) ** 2

    def build_projections(self, config, q_size, kv_size):
        heads, bias = config.num_attention_heads, config.attention_bias
        qk_head_dim = config.qk_nope_head_dim + config.qk_rope_head_dim
        if config.q_lora_rank is None:
            self.q_proj = nn.Linear(config.hidden_size, heads * qk_head_dim, bias=False)
        else:
            self.q_a_proj = nn.Linear(config.hidden_size, config.q_lora_rank, bias=bias)
            self.q_a_layernorm = DeepseekV3RMSNorm(config.q_lora_rank)
            self.q_b_proj = nn.Linear(config.q_lora_rank, heads * qk_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(config.hidden_size, config.kv_lora_rank + config.qk_rope_head_dim,
                                            bias=bias)
        self.kv_a_layernorm = DeepseekV3RMSNorm(config.kv_lora_rank)
        self.kv_b_proj = nn.Linear(config.kv_lora_rank, heads * (config.qk_nope_head_dim + config.v_head_dim),
                                   bias=False)
        self.o_proj = nn.Linear(heads * config.v_head_dim, config.hidden_size, bias=bias)

    def rope_layout(self, x):
        """HF's interleaved rotary pairs (x0, x1), (x2, x3), ... as the halves (x0, x2, ...),
        (x1, x3, ...) that the rotation pairs up."""
        if not self.config.rope_interleave:
            return x
        return core.cat((x[..., 0::2], x[..., 1::2]), dim=-1)

    def project(self, hidden_states):
        if self.q_lora_rank is None:
            query = self.q_proj(hidden_states)
        else:
            query = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
        q_pass, q_rot = split_heads(query, self.qk_head_dim).split([self.qk_nope_head_dim, self.qk_rope_head_dim],
                                                                    dim=-1)
        latent, k_rot = self.kv_a_proj_with_mqa(hidden_states).split([self.kv_lora_rank, self.qk_rope_head_dim],
                                                                     dim=-1)
        key_value = split_heads(self.kv_b_proj(self.kv_a_layernorm(latent)), self.qk_nope_head_dim + self.v_head_dim)
        k_pass, value = key_value.split([self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        k_rot = self.rope_layout(split_heads(k_rot, self.qk_rope_head_dim)).expand(-1, k_pass.shape[1], -1, -1)
        query = core.cat((self.rope_layout(q_rot), q_pass), dim=-1)
        return query, core.cat((k_rot, k_pass), dim=-1), value


class DeepseekV3DecoderLayer(LlamaDecoderLayer):
    attention_class = DeepseekV3Attention
    mlp_class = DeepseekV3MoE

    def build_mlp(self, config, layer_idx):
        """A dense MLP on the first `first_k_dense_replace` layers, experts after them."""
        return self.mlp_class(config) if layer_idx >= config.first_k_dense_replace else DeepseekV3MLP(config)


class DeepseekV3PreTrainedModel(MoePreTrainedModel):
    config_class = DeepseekV3Config
    _no_split_modules = ["DeepseekV3DecoderLayer"]
    _keep_in_fp32_modules_strict = ["e_score_correction_bias", "gate.weight"]
    # The multi-token-prediction layer of the published checkpoint, which generation does not use.
    _keys_to_ignore_on_load_unexpected = [r"model\.layers\.61.*"]

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, DeepseekV3TopkRouter):
            nn.init.zeros_(module.e_score_correction_bias)


class DeepseekV3Model(MoeModel, DeepseekV3PreTrainedModel):
    layer_class = DeepseekV3DecoderLayer


class DeepseekV3ForCausalLM(MoeForCausalLM, DeepseekV3PreTrainedModel, GenerationMixin):
    base_model_class = DeepseekV3Model

    def auxiliary_loss(self, router_logits, attention_mask):
        return None


class DeepseekV3ForSequenceClassification(GenericForSequenceClassification, DeepseekV3PreTrainedModel):
    base_model_class = DeepseekV3Model


class DeepseekV3ForTokenClassification(GenericForTokenClassification, DeepseekV3PreTrainedModel):
    base_model_class = DeepseekV3Model


__all__ = [
    "DeepseekV3ForCausalLM", "DeepseekV3ForSequenceClassification", "DeepseekV3ForTokenClassification",
    "DeepseekV3Model", "DeepseekV3PreTrainedModel",
]
