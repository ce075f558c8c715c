# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma 3 text configuration (defaults: google/gemma-3-4b's language model).

Gemma 2's fields with q/k norm implied, no soft-capping by default, and two RoPE bases: the
sliding (local) layers rotate with `rope_local_base_freq` (10k) and the full (global) layers
with `rope_theta` (1M), so `rope_parameters` holds one dict per layer type. v4 files with
`rope_scaling` scale the global layers only, as in HF. `layer_types` defaults to five sliding
layers for each full one (`sliding_window_pattern`, 6, in older files).

`Gemma3Config` nests it with a SigLIP vision config for the image-text model.
"""
import typing

from ...configuration_utils import PretrainedConfig, build_sub_config
from ..gemma2.configuration_gemma2 import Gemma2Config
from ..siglip.configuration_siglip import SiglipVisionConfig


class Gemma3TextConfig(Gemma2Config):
    model_type = "gemma3_text"
    default_theta = {"global": 1_000_000.0, "local": 10_000.0}

    vocab_size: int = 262_208
    max_position_embeddings: int = 131_072
    final_logit_softcapping: float | None = None
    attn_logit_softcapping: float | None = None
    use_bidirectional_attention: bool | None = False

    def __post_init__(self, **kwargs):
        if self.layer_types is None:
            pattern = kwargs.get("sliding_window_pattern", 6)
            self.layer_types = ["sliding_attention" if (i + 1) % pattern else "full_attention"
                                for i in range(self.num_hidden_layers)]
        rope = self.rope_parameters or {}
        rope = {kind: dict(rope.get(kind) or {"rope_type": "default"})
                for kind in ("full_attention", "sliding_attention")}
        rope["full_attention"].update(kwargs.pop("rope_scaling", None) or {})
        rope["full_attention"].setdefault("rope_theta", kwargs.pop("rope_theta", self.default_theta["global"]))
        rope["sliding_attention"].setdefault("rope_theta",
                                             kwargs.pop("rope_local_base_freq", self.default_theta["local"]))
        self.rope_parameters = rope
        super().__post_init__(**kwargs)


class Gemma3Config(PretrainedConfig):
    """The multimodal Gemma 3 (defaults: google/gemma-3-4b): a Gemma 3 text config, a SigLIP
    vision config, and how images enter the text: each image becomes `mm_tokens_per_image`
    embeddings that replace as many `image_token_index` tokens, between `boi_token_index` and
    `eoi_token_index`."""

    model_type = "gemma3"
    attribute_map = {"image_token_id": "image_token_index", "boi_token_id": "boi_token_index",
                     "eoi_token_id": "eoi_token_index"}
    sub_configs = {"text_config": Gemma3TextConfig, "vision_config": SiglipVisionConfig}

    text_config: typing.Any = None
    vision_config: typing.Any = None
    mm_tokens_per_image: int = 256
    boi_token_index: int = 255_999
    eoi_token_index: int = 256_000
    image_token_index: int = 262_144
    initializer_range: float = 0.02
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        self.text_config = build_sub_config(self.text_config, Gemma3TextConfig)
        self.vision_config = build_sub_config(self.vision_config, SiglipVisionConfig)
        super().__post_init__(**kwargs)

