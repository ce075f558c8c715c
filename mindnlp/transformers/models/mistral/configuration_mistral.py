# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Mistral configuration (defaults: mistralai/Mistral-7B-v0.1).

Llama's fields with grouped-query attention by default and a `sliding_window` (None: full
attention), without Llama's projection biases and `pretraining_tp`; RoPE parameters as in
LlamaConfig.
"""
import logging

from ...configuration_utils import NotAField, PretrainedConfig
from ..llama.configuration_llama import LlamaConfig

logger = logging.getLogger(__name__)


class MistralConfig(LlamaConfig):
    model_type = "mistral"

    intermediate_size: int = 14336
    num_key_value_heads: int = 8
    max_position_embeddings: int = 4096 * 32
    sliding_window: int | None = 4096
    attention_dropout: float | int = 0.0
    attention_bias = NotAField()
    mlp_bias = NotAField()
    pretraining_tp = NotAField()

    # HF checks nothing of Llama's (an explicit head_dim need not divide hidden_size)
    validate_architecture = PretrainedConfig.validate_architecture

    def __post_init__(self, **kwargs):
        if "layer_types" in kwargs:
            logger.warning(
                "this Mistral config has layer_types; alternating attention is a Ministral feature and is ignored here"
            )
        super().__post_init__(**kwargs)
