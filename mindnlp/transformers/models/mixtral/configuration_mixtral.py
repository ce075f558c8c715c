# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Mixtral configuration (defaults: mistralai/Mixtral-8x7B-v0.1).

Mistral's fields (full attention unless `sliding_window` is set) and the routing:
`num_local_experts` experts per layer (also readable as `num_experts`), of which each token
uses `num_experts_per_tok`; `output_router_logits` and `router_aux_loss_coef` for the
load-balancing loss, `router_jitter_noise` for training.
"""
from ...configuration_utils import NotAField, PretrainedConfig, attention_heads
from ..llama.configuration_llama import LlamaConfig


class MixtralConfig(LlamaConfig):
    model_type = "mixtral"
    default_theta = 1000000.0
    attribute_map = {"num_experts": "num_local_experts"}
    base_model_tp_plan = {
        "layers.*.self_attn.q_proj": "colwise",
        "layers.*.self_attn.k_proj": "colwise",
        "layers.*.self_attn.v_proj": "colwise",
        "layers.*.self_attn.o_proj": "rowwise",
        "layers.*.mlp.experts.gate_up_proj": "packed_colwise",
        "layers.*.mlp.experts.down_proj": "rowwise",
        "layers.*.mlp.experts": "moe_tp_experts",
    }
    base_model_ep_plan = {
        "layers.*.mlp.experts.gate_up_proj": "grouped_gemm",
        "layers.*.mlp.experts.down_proj": "grouped_gemm",
        "layers.*.mlp.experts": "ep_dispatch_experts",
    }

    intermediate_size: int = 14336
    num_key_value_heads: int | None = 8
    max_position_embeddings: int = 4096 * 32
    rms_norm_eps: float = 1e-5
    sliding_window: int | None = None
    attention_dropout: float | int = 0.0
    num_experts_per_tok: int = 2
    num_local_experts: int = 8
    output_router_logits: bool = False
    router_aux_loss_coef: float = 0.001
    router_jitter_noise: float = 0.0
    attention_bias = NotAField()
    mlp_bias = NotAField()
    pretraining_tp = NotAField()

    derived_defaults = {"num_key_value_heads": attention_heads}  # head_dim stays None, as in HF's config
    validate_architecture = PretrainedConfig.validate_architecture  # HF checks nothing of Llama's
