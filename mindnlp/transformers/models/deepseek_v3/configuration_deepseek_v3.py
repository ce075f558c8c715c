# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeepSeek-V3 configuration (defaults: deepseek-ai/DeepSeek-V3).

Multi-head latent attention: queries through a rank-`q_lora_rank` bottleneck (None: one
projection), keys and values from a shared rank-`kv_lora_rank` latent, each head's query/key
split into `qk_nope_head_dim` features without position and `qk_rope_head_dim` with it
(`rope_interleave`: the rotated pairs are adjacent). Routing: `n_routed_experts` experts in
`n_group` groups, of which a token considers the best `topk_group` and uses
`num_experts_per_tok`; `n_shared_experts` always run; the first `first_k_dense_replace`
layers have a dense MLP. `num_experts` and `num_local_experts` both read `n_routed_experts`.
"""
from ...configuration_utils import PretrainedConfig, attention_heads
from ..llama.configuration_llama import LlamaConfig
from ..mixtral.configuration_mixtral import MixtralConfig


class DeepseekV3Config(PretrainedConfig):
    model_type = "deepseek_v3"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {"num_local_experts": "n_routed_experts", "num_experts": "n_routed_experts"}
    base_model_tp_plan = {
        "layers.*.mlp.experts.gate_up_proj": "packed_colwise",
        "layers.*.mlp.experts.down_proj": "rowwise",
        "layers.*.mlp.experts": "moe_tp_experts",
        "layers.*.mlp.shared_experts.gate_proj": "colwise",
        "layers.*.mlp.shared_experts.up_proj": "colwise",
        "layers.*.mlp.shared_experts.down_proj": "rowwise",
        "layers.*.mlp.gate_proj": "colwise",
        "layers.*.mlp.up_proj": "colwise",
        "layers.*.mlp.down_proj": "rowwise",
    }
    base_model_pp_plan = LlamaConfig.base_model_pp_plan
    base_model_ep_plan = MixtralConfig.base_model_ep_plan

    vocab_size: int = 129280
    hidden_size: int = 7168
    intermediate_size: int = 18432
    moe_intermediate_size: int = 2048
    num_hidden_layers: int = 61
    num_attention_heads: int = 128
    num_key_value_heads: int | None = 128
    n_shared_experts: int = 1
    n_routed_experts: int = 256
    output_router_logits: bool = False
    routed_scaling_factor: float = 2.5
    kv_lora_rank: int = 512
    q_lora_rank: int | None = 1536
    qk_rope_head_dim: int = 64
    v_head_dim: int | None = 128
    qk_nope_head_dim: int = 128
    n_group: int | None = 8
    topk_group: int | None = 4
    num_experts_per_tok: int | None = 8
    first_k_dense_replace: int | None = 3
    norm_topk_prob: bool | None = True
    hidden_act: str = "silu"
    max_position_embeddings: int = 4096
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = None
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 1
    pretraining_tp: int | None = 1
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    rope_interleave: bool | None = True
    attention_bias: bool = False
    attention_dropout: float | int | None = 0.0

    derived_defaults = {"num_key_value_heads": attention_heads}

    def __post_init__(self, **kwargs):
        # The rotary embedding turns over the rope part of each head only.
        self.qk_head_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
        self.head_dim = self.qk_rope_head_dim
        super().__post_init__(**kwargs)
