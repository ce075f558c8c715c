# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Marian configuration (defaults: Helsinki-NLP/opus-mt-en-de): BART's fields with Marian's
special ids (pad 58100 also starts the decoder, EOS is 0, no BOS).

`share_encoder_decoder_embeddings` False gives the decoder a vocabulary of its own
(`decoder_vocab_size`, default: `vocab_size`), as multilingual-target checkpoints have.
"""
from ..bart.configuration_bart import BartConfig


class MarianConfig(BartConfig):
    model_type = "marian"
    default_num_labels = 2

    vocab_size: int = 58101
    decoder_vocab_size: int | None = None
    decoder_start_token_id: int | None = 58100
    pad_token_id: int | None = 58100
    eos_token_id: int | list[int] | None = 0
    bos_token_id: int | None = None
    forced_eos_token_id: int | list[int] | None = 0
    share_encoder_decoder_embeddings: bool = True

    def __post_init__(self, **kwargs):
        self.decoder_vocab_size = self.decoder_vocab_size or self.vocab_size
        super().__post_init__(**kwargs)


__all__ = ["MarianConfig"]
