# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen3-MoE configuration (defaults: Qwen/Qwen3-30B-A3B's shape at 24 layers).

Qwen2-MoE's expert fields without the shared expert; the attention is Qwen3's (one
`attention_bias` for every projection) with a sliding window on every layer when
`use_sliding_window`. `num_experts` is stored as `num_local_experts`, as HF does.
"""
from ...configuration_utils import PretrainedConfig
from ..qwen2_moe.configuration_qwen2_moe import Qwen2MoeConfig


class Qwen3MoeConfig(PretrainedConfig):
    model_type = "qwen3_moe"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {"num_experts": "num_local_experts"}
    base_model_tp_plan = {
        **Qwen2MoeConfig.base_model_tp_plan,
        "layers.*.self_attn.q_norm": "replicated_with_grad_allreduce",
        "layers.*.self_attn.k_norm": "replicated_with_grad_allreduce",
    }
    base_model_pp_plan = Qwen2MoeConfig.base_model_pp_plan
    base_model_ep_plan = Qwen2MoeConfig.base_model_ep_plan

    vocab_size: int = 151936
    hidden_size: int = 2048
    intermediate_size: int = 6144
    num_hidden_layers: int = 24
    num_attention_heads: int = 32
    num_key_value_heads: int = 4
    hidden_act: str = "silu"
    max_position_embeddings: int = 32768
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    attention_bias: bool = False
    use_sliding_window: bool = False
    sliding_window: int | None = 4096
    attention_dropout: float | int = 0.0
    decoder_sparse_step: int = 1
    moe_intermediate_size: int = 768
    num_experts_per_tok: int = 8
    num_local_experts: int = 128  # HF's `num_experts` field, stored under its alias
    norm_topk_prob: bool = False
    output_router_logits: bool = False
    router_aux_loss_coef: float = 0.001
    mlp_only_layers: list[int] | None = None
    pad_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None

    def __post_init__(self, **kwargs):
        self.sliding_window = self.sliding_window if self.use_sliding_window else None
        self.mlp_only_layers = [] if self.mlp_only_layers is None else self.mlp_only_layers
        super().__post_init__(**kwargs)
