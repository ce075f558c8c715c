# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Phi-3 configuration (defaults: microsoft/Phi-3-mini-4k-instruct).

Mistral's fields plus residual and embedding dropouts (`resid_pdrop`, `embd_pdrop`) and the
pretraining length `original_max_position_embeddings` that LongRoPE scales from. Released
files name LongRoPE "su" (or "yarn", which Phi-3 also means as LongRoPE); both are read as
"longrope", as HF does. `partial_rotary_factor` (Phi-4-mini: 0.75) defaults to 1.
"""
from ...configuration_utils import PretrainedConfig, attention_heads


class Phi3Config(PretrainedConfig):
    model_type = "phi3"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = {
        "layers.*.self_attn.qkv_proj": "colwise_gather_output",
        "layers.*.self_attn.o_proj": "rowwise_split_input",
        "layers.*.mlp.gate_up_proj": "colwise_gather_output",
        "layers.*.mlp.down_proj": "rowwise_split_input",
    }
    base_model_pp_plan = {
        "embed_tokens": (["input_ids"], ["inputs_embeds"]),
        "layers": (["hidden_states", "attention_mask"], ["hidden_states"]),
        "norm": (["hidden_states"], ["hidden_states"]),
    }

    vocab_size: int = 32064
    hidden_size: int = 3072
    intermediate_size: int = 8192
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: int | None = None
    resid_pdrop: float = 0.0
    embd_pdrop: float = 0.0
    attention_dropout: float = 0.0
    hidden_act: str = "silu"
    max_position_embeddings: int = 4096
    original_max_position_embeddings: int = 4096
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-5
    use_cache: bool = True
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    bos_token_id: int | None = 1
    eos_token_id: int | list[int] | None = 32000
    pad_token_id: int | None = 32000
    sliding_window: int | None = None

    derived_defaults = {"num_key_value_heads": attention_heads}

    def __post_init__(self, **kwargs):
        kwargs.setdefault("partial_rotary_factor", 1.0)
        rope = kwargs.get("rope_scaling") or self.rope_parameters
        if rope and rope.get("rope_type", rope.get("type")) in ("su", "yarn"):
            kwargs["rope_scaling"] = {**{k: v for k, v in rope.items() if k != "type"}, "rope_type": "longrope"}
        super().__post_init__(**kwargs)
