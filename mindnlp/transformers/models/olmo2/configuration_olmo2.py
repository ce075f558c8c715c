# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""OLMo 2 configuration (defaults: allenai/OLMo-2-1124-7B).

Llama's fields with OLMo's vocabulary and special tokens, without `head_dim`, `mlp_bias` and
`pretraining_tp`; `num_key_value_heads` defaults to `num_attention_heads`.
"""
from ...configuration_utils import NotAField, PretrainedConfig
from ..llama.configuration_llama import LlamaConfig


class Olmo2Config(LlamaConfig):
    model_type = "olmo2"
    # The q/k norms act over all heads at once, so the q/k/v outputs are gathered and o_proj
    # reads a replicated input (metadata HF's tooling reads).
    base_model_tp_plan = {
        **LlamaConfig.base_model_tp_plan,
        **{f"layers.*.self_attn.{name}_proj": "colwise_gather_output" for name in "qkv"},
        "layers.*.self_attn.o_proj": "rowwise_split_input",
    }

    vocab_size: int = 50304
    pad_token_id: int | None = 1
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = 50279
    attention_dropout: float | int = 0.0
    rms_norm_eps: float = 1e-5
    head_dim = NotAField()
    mlp_bias = NotAField()
    pretraining_tp = NotAField()

    validate_architecture = PretrainedConfig.validate_architecture  # HF checks nothing of Llama's
