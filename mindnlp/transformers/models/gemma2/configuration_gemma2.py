# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma 2 configuration (defaults: google/gemma-2-2b).

Gemma's fields with the activation under HF's name `hidden_activation`, soft-capping of the
attention scores and of the final logits, `query_pre_attn_scalar` (the attention scale is its
inverse square root), and alternating attention: `layer_types` defaults to a sliding window
(`sliding_window`) on even layers and full attention on odd ones.
"""
from ...configuration_utils import NotAField
from ..gemma.configuration_gemma import GemmaConfig


class Gemma2Config(GemmaConfig):
    model_type = "gemma2"

    hidden_size: int = 2304
    intermediate_size: int = 9216
    num_hidden_layers: int = 26
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    hidden_activation: str = "gelu_pytorch_tanh"
    query_pre_attn_scalar: int | float = 256
    sliding_window: int | None = 4096
    layer_types: list[str] | None = None
    final_logit_softcapping: float | None = 30.0
    attn_logit_softcapping: float | None = 50.0
    hidden_act = NotAField()

    def __post_init__(self, **kwargs):
        if self.layer_types is None:
            self.layer_types = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                                for i in range(self.num_hidden_layers)]
        super().__post_init__(**kwargs)
