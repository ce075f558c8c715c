# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""gpt-oss configuration (defaults: openai/gpt-oss-20b).

Mixtral's routing fields (`num_local_experts`, also readable as `num_experts`;
`num_experts_per_tok`; `router_aux_loss_coef`) with the experts' clamped SwiGLU
(`swiglu_alpha`, `swiglu_limit`); biased attention; `layer_types` alternating a
`sliding_window` layer and a full one (from the first layer); YaRN rope by default.
"""
from ...configuration_utils import PretrainedConfig, attention_heads, hidden_size_per_head
from ..llama.configuration_llama import LlamaConfig


class GptOssConfig(PretrainedConfig):
    model_type = "gpt_oss"
    base_model_tp_plan = {"embed_tokens": "embedding_rowwise"}
    attribute_map = {"num_experts": "num_local_experts"}
    default_theta = 150000.0
    base_model_pp_plan = LlamaConfig.base_model_pp_plan
    base_model_ep_plan = {
        "layers.*.mlp.experts.gate_up_proj": "grouped_gemm",
        "layers.*.mlp.experts.gate_up_proj_bias": "grouped_gemm",
        "layers.*.mlp.experts.down_proj": "grouped_gemm",
        "layers.*.mlp.experts.down_proj_bias": "grouped_gemm",
        "layers.*.mlp.experts": "ep_dispatch_experts",
    }

    num_hidden_layers: int = 36
    num_local_experts: int = 128
    vocab_size: int = 201088
    hidden_size: int = 2880
    intermediate_size: int = 2880
    head_dim: int = 64
    num_attention_heads: int = 64
    num_key_value_heads: int = 8
    sliding_window: int | None = 128
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"
    initializer_range: float = 0.02
    max_position_embeddings: int = 131072
    rms_norm_eps: float = 1e-5
    rope_parameters: dict | None = None
    attention_dropout: float | int = 0.0
    num_experts_per_tok: int = 4
    swiglu_alpha: float = 1.702
    swiglu_limit: float = 7.0
    router_aux_loss_coef: float = 0.001
    output_router_logits: bool = False
    use_cache: bool = True
    layer_types: list[str] | None = None
    pad_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    attention_bias: bool = True

    derived_defaults = {"num_key_value_heads": attention_heads, "head_dim": hidden_size_per_head}

    def __post_init__(self, **kwargs):
        if self.layer_types is None:
            self.layer_types = ["sliding_attention" if i % 2 == 0 else "full_attention"
                                for i in range(self.num_hidden_layers)]
        if self.rope_parameters is None:
            self.rope_parameters = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                                    "truncate": False, "original_max_position_embeddings": 4096}
        super().__post_init__(**kwargs)
