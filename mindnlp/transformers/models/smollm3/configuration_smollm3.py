# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SmolLM3 configuration (defaults: HuggingFaceTB/SmolLM3-3B).

Llama's fields plus NoPE layers: `no_rope_layers` holds 1 for a layer that uses RoPE and 0 for
one that does not, by default every `no_rope_layer_interval`-th layer (4) without. With
`use_sliding_window` and a `sliding_window`, the NoPE layers attend over the window.
"""
from ...configuration_utils import PretrainedConfig, attention_heads
from ..llama.configuration_llama import LlamaConfig


class SmolLM3Config(PretrainedConfig):
    model_type = "smollm3"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = LlamaConfig.base_model_tp_plan
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 128256
    hidden_size: int = 2048
    intermediate_size: int = 11008
    num_hidden_layers: int = 36
    num_attention_heads: int = 16
    num_key_value_heads: int | None = 4
    hidden_act: str = "silu"
    max_position_embeddings: int = 32768
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = 128004
    bos_token_id: int | None = 128000
    eos_token_id: int | list[int] | None = 128001
    rope_parameters: dict | None = None
    use_sliding_window: bool = False
    sliding_window: int | None = None
    no_rope_layers: list[int] | None = None
    no_rope_layer_interval: int = 4
    layer_types: list[str] | None = None
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    mlp_bias: bool = False
    tie_word_embeddings: bool = True

    derived_defaults = {"num_key_value_heads": attention_heads}

    def __post_init__(self, **kwargs):
        if self.no_rope_layers is None:
            self.no_rope_layers = [int((i + 1) % self.no_rope_layer_interval != 0)
                                   for i in range(self.num_hidden_layers)]
        if self.layer_types is None:
            windowed = self.use_sliding_window and self.sliding_window is not None
            self.layer_types = ["sliding_attention" if windowed and not uses_rope else "full_attention"
                                for uses_rope in self.no_rope_layers]
        super().__post_init__(**kwargs)
