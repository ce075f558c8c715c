# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mT5 configuration (defaults: google/mt5-small): T5 v1.1's architecture over a 250k
multilingual vocabulary, always with the gated-GELU block's defaults and an LM head that is
never rescaled."""
from ..t5.configuration_t5 import T5Config


class MT5Config(T5Config):
    model_type = "mt5"

    vocab_size: int = 250112
    d_ff: int = 1024
    num_layers: int = 8
    num_heads: int = 6
    feed_forward_proj: str = "gated-gelu"
    bos_token_id: int | None = None
    decoder_start_token_id: int | None = 0

    def __post_init__(self, **kwargs):
        super().__post_init__(**kwargs)
        # mT5's head input is never rescaled, whatever its checkpoint says about tying.
        self.scale_decoder_outputs = False


__all__ = ["MT5Config"]
