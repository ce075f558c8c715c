# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Qwen2 configuration (defaults: Qwen/Qwen2-7B).

Llama's layout with biases on the q/k/v projections. Sliding-window attention applies only
when `use_sliding_window` is set (otherwise `sliding_window` is cleared to None), and then only
to layers from `max_window_layers` on; `layer_types` records the result per layer.
"""
from ...configuration_utils import NotAField, PretrainedConfig
from ..llama.configuration_llama import LlamaConfig


class Qwen2Config(LlamaConfig):
    model_type = "qwen2"

    vocab_size: int = 151936
    intermediate_size: int = 22016
    num_key_value_heads: int | None = 32
    max_position_embeddings: int = 32768
    use_sliding_window: bool = False
    sliding_window: int | None = 4096
    max_window_layers: int = 28
    layer_types: list[str] | None = None
    attention_dropout: float | int = 0.0
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None
    head_dim = NotAField()
    attention_bias = NotAField()
    mlp_bias = NotAField()
    pretraining_tp = NotAField()

    validate_architecture = PretrainedConfig.validate_architecture  # HF checks nothing of Llama's
    sliding_window_when_off = None  # what `sliding_window` becomes without `use_sliding_window`

    def __post_init__(self, **kwargs):
        if not self.use_sliding_window:
            self.sliding_window = self.sliding_window_when_off
        if self.layer_types is None:
            self.layer_types = [
                "sliding_attention"
                if self.sliding_window is not None and i >= self.max_window_layers
                else "full_attention"
                for i in range(self.num_hidden_layers)
            ]
        super().__post_init__(**kwargs)
