# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen2-MoE configuration (defaults: Qwen/Qwen1.5-MoE-A2.7B).

Qwen2's attention fields (`qkv_bias` for the q/k/v projections; sliding windows only with
`use_sliding_window`, then on every other layer below `max_window_layers`, recorded in
`layer_types`) and the experts: `num_experts` of width `moe_intermediate_size`, a shared
expert of width `shared_expert_intermediate_size`, an MoE block on every
`decoder_sparse_step`-th layer except those in `mlp_only_layers` (which keep a dense MLP of
`intermediate_size`).
"""
from ..mixtral.configuration_mixtral import MixtralConfig
from ..qwen2.configuration_qwen2 import Qwen2Config


class Qwen2MoeConfig(Qwen2Config):
    model_type = "qwen2_moe"
    base_model_tp_plan = {
        **MixtralConfig.base_model_tp_plan,
        "layers.*.mlp.gate_proj": "colwise",
        "layers.*.mlp.up_proj": "colwise",
        "layers.*.mlp.down_proj": "rowwise",
    }
    base_model_ep_plan = MixtralConfig.base_model_ep_plan

    hidden_size: int = 2048
    intermediate_size: int = 5632
    num_hidden_layers: int = 24
    num_attention_heads: int = 16
    num_key_value_heads: int | None = 16
    decoder_sparse_step: int = 1
    moe_intermediate_size: int = 1408
    shared_expert_intermediate_size: int = 5632
    num_experts_per_tok: int = 4
    num_experts: int = 60
    norm_topk_prob: bool = False
    output_router_logits: bool = False
    router_aux_loss_coef: float = 0.001
    mlp_only_layers: list[int] | None = None
    qkv_bias: bool = True

    derived_defaults = {}  # HF's Qwen2-MoE keeps a None num_key_value_heads
    sliding_window_when_off = 0  # as HF's Qwen2-MoE, 0 rather than None

    def __post_init__(self, **kwargs):
        self.mlp_only_layers = [] if self.mlp_only_layers is None else self.mlp_only_layers
        if self.layer_types is None:
            self.layer_types = [
                "sliding_attention" if (i + 1) % 2 and i < self.max_window_layers and self.use_sliding_window
                else "full_attention"
                for i in range(self.num_hidden_layers)
            ]
        super().__post_init__(**kwargs)
