# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma configuration (defaults: google/gemma-7b).

Gemma's `head_dim` (256) is set on its own rather than derived from hidden_size. Its released
configs say `hidden_act="gelu"` but mean the tanh approximation, so that value is rewritten to
"gelu_pytorch_tanh". `use_bidirectional_attention` drops the causal mask (embedding variants).
"""
import logging

from ...configuration_utils import PretrainedConfig
from ..llama.configuration_llama import LlamaConfig

logger = logging.getLogger(__name__)


class GemmaConfig(PretrainedConfig):
    model_type = "gemma"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = LlamaConfig.base_model_tp_plan
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 256000
    hidden_size: int = 3072
    intermediate_size: int = 24576
    num_hidden_layers: int = 28
    num_attention_heads: int = 16
    num_key_value_heads: int = 16
    head_dim: int = 256
    hidden_act: str = "gelu_pytorch_tanh"
    max_position_embeddings: int = 8192
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 1
    bos_token_id: int | None = 2
    tie_word_embeddings: bool = True
    rope_parameters: dict | None = None
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    use_bidirectional_attention: bool | None = None

    def __post_init__(self, **kwargs):
        if getattr(self, "hidden_act", None) == "gelu":  # Gemma 2 names it hidden_activation
            logger.warning('hidden_act="gelu" in a Gemma config means the tanh approximation; using "gelu_pytorch_tanh"')
            self.hidden_act = "gelu_pytorch_tanh"
        super().__post_init__(**kwargs)
