# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SigLIP vision configuration (defaults: google/siglip-base-patch16-224's image tower).

Only the vision tower is here: it is what the vision-language models built on SigLIP (Gemma 3,
PaliGemma) embed images with. `base_config_key` names where it sits in such a model's config.
`vision_use_head` False drops the attention-pooling head, as those models' checkpoints do.
"""
from ...configuration_utils import PretrainedConfig


class SiglipVisionConfig(PretrainedConfig):
    model_type = "siglip_vision_model"
    base_config_key = "vision_config"

    hidden_size: int = 768
    intermediate_size: int = 3072
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    num_channels: int = 3
    image_size: int = 224
    patch_size: int = 16
    hidden_act: str = "gelu_pytorch_tanh"
    layer_norm_eps: float = 1e-6
    attention_dropout: float | int = 0.0
    vision_use_head: bool = True

    def validate_architecture(self):
        super().validate_architecture()
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be divisible by num_attention_heads "
                             f"({self.num_attention_heads})")
