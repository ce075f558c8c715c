# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""StarCoder2 configuration (defaults: bigcode/starcoder2-7b).

Mistral's layout with LayerNorm (`norm_epsilon`) instead of RMSNorm, a plain two-layer MLP,
one `use_bias` for every projection, and dropout on the embeddings and on each residual
branch (`embedding_dropout`, `residual_dropout`).
"""
from ...configuration_utils import PretrainedConfig
from ..llama.configuration_llama import LlamaConfig


class Starcoder2Config(PretrainedConfig):
    model_type = "starcoder2"
    keys_to_ignore_at_inference = ["past_key_values"]
    # Llama's split, but for the two-layer MLP (metadata HF's tooling reads).
    base_model_tp_plan = {
        **{k: v for k, v in LlamaConfig.base_model_tp_plan.items() if ".mlp." not in k},
        "layers.*.mlp.c_fc": "colwise",
        "layers.*.mlp.c_proj": "rowwise",
    }
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 49152
    hidden_size: int = 3072
    intermediate_size: int = 12288
    num_hidden_layers: int = 30
    num_attention_heads: int = 24
    num_key_value_heads: int = 2
    hidden_act: str = "gelu_pytorch_tanh"
    max_position_embeddings: int = 4096
    initializer_range: float = 0.018042
    norm_epsilon: float = 1e-5
    use_cache: bool = True
    bos_token_id: int | None = 50256
    eos_token_id: int | list[int] | None = 50256
    pad_token_id: int | None = None
    rope_parameters: dict | None = None
    sliding_window: int | None = None
    attention_dropout: float | int = 0.0
    residual_dropout: float | int = 0.0
    embedding_dropout: float | int = 0.0
    use_bias: bool = True
    tie_word_embeddings: bool = True
