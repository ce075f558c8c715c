# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Whisper configuration (defaults: openai/whisper-tiny).

An encoder-decoder like BART's with audio on the encoder side: `num_mel_bins` log-mel
channels go in, `max_source_positions` (1500) frames come out of the two convolutions (30 s of
audio at 100 frames per second, halved by the stride-2 convolution). The decoder reads at most
`max_target_positions` tokens. `suppress_tokens` and `begin_suppress_tokens` are the ids
generation never emits, and never emits first. The `mask_*` fields drive SpecAugment during
training when `apply_spec_augment` is set; `use_weighted_layer_sum` and
`classifier_proj_size` are WhisperForAudioClassification's.
"""
from ...configuration_utils import PretrainedConfig


class WhisperConfig(PretrainedConfig):
    model_type = "whisper"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {
        "num_key_value_heads": "encoder_attention_heads",
        "num_attention_heads": "encoder_attention_heads",
        "hidden_size": "d_model",
        "num_hidden_layers": "encoder_layers",
    }

    vocab_size: int = 51865
    num_mel_bins: int = 80
    encoder_layers: int = 4
    encoder_attention_heads: int = 6
    decoder_layers: int = 4
    decoder_attention_heads: int = 6
    decoder_ffn_dim: int = 1536
    encoder_ffn_dim: int = 1536
    encoder_layerdrop: float | int = 0.0
    decoder_layerdrop: float | int = 0.0
    decoder_start_token_id: int = 50257
    use_cache: bool = True
    is_encoder_decoder: bool = True
    activation_function: str = "gelu"
    d_model: int = 384
    dropout: float | int = 0.0
    attention_dropout: float | int = 0.0
    activation_dropout: float | int = 0.0
    init_std: float = 0.02
    scale_embedding: bool = False
    max_source_positions: int = 1500
    max_target_positions: int = 448
    pad_token_id: int | None = 50256
    bos_token_id: int | None = 50256
    eos_token_id: int | list[int] | None = 50256
    suppress_tokens: list | None = None
    begin_suppress_tokens: list[int] | tuple[int, ...] | None = (220, 50256)
    use_weighted_layer_sum: bool = False
    classifier_proj_size: int = 256
    apply_spec_augment: bool = False
    mask_time_prob: float | int = 0.05
    mask_time_length: int = 10
    mask_time_min_masks: int = 2
    mask_feature_prob: float | int = 0.0
    mask_feature_length: int = 10
    mask_feature_min_masks: int = 0
    median_filter_width: int = 7
    tie_word_embeddings: bool = True


__all__ = ["WhisperConfig"]
