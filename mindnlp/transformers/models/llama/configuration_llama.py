# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Llama configuration (defaults: meta-llama/Llama-2-7b-hf).

RoPE lives in `rope_parameters` (see modeling_rope_utils); v4 files with `rope_theta` and
`rope_scaling` are folded into it on load, e.g. Llama 3.1's
`{"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
"original_max_position_embeddings": 8192, "rope_theta": 500000.0}`.
"""
from ...configuration_utils import PretrainedConfig, attention_heads, hidden_size_per_head


class LlamaConfig(PretrainedConfig):
    """`num_key_value_heads` below `num_attention_heads` gives grouped-query attention (None:
    as many as attention heads); `head_dim` defaults to hidden_size // num_attention_heads;
    `attention_bias`/`mlp_bias` add biases to the projections; `pretraining_tp` is kept for
    checkpoints that record it."""

    model_type = "llama"
    keys_to_ignore_at_inference = ["past_key_values"]
    # How HF's tensor and pipeline parallelism split this decoder (metadata HF's tooling reads;
    # mindnlp runs unsharded). Families built on Llama's layout share them.
    base_model_tp_plan = {
        "layers.*.self_attn.q_proj": "colwise",
        "layers.*.self_attn.k_proj": "colwise",
        "layers.*.self_attn.v_proj": "colwise",
        "layers.*.self_attn.o_proj": "rowwise",
        "layers.*.mlp.gate_proj": "colwise",
        "layers.*.mlp.up_proj": "colwise",
        "layers.*.mlp.down_proj": "rowwise",
    }
    base_model_pp_plan = {
        "embed_tokens": (["input_ids"], ["inputs_embeds"]),
        "layers": (["hidden_states", "attention_mask"], ["hidden_states"]),
        "norm": (["hidden_states"], ["hidden_states"]),
    }
    derived_defaults = {"head_dim": hidden_size_per_head, "num_key_value_heads": attention_heads}

    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: int | None = None
    hidden_act: str = "silu"
    max_position_embeddings: int = 2048
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = None
    bos_token_id: int | None = 1
    eos_token_id: int | list[int] | None = 2
    pretraining_tp: int | None = 1
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    attention_bias: bool = False
    attention_dropout: int | float | None = 0.0
    mlp_bias: bool = False
    head_dim: int | None = None

    def validate_architecture(self):
        super().validate_architecture()
        if not 0.0 <= self.initializer_range <= 1.0:
            raise ValueError(f"initializer_range must be in [0, 1], got {self.initializer_range}")
        if self.hidden_size % self.num_attention_heads != 0:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) must be a multiple of num_attention_heads "
                f"({self.num_attention_heads})"
            )
