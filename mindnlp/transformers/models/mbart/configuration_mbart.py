# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mBART configuration (defaults: facebook/mbart-large-cc25): BART's fields, with no single
decoder start token (the decoder starts from the target language code, see
modeling_mbart) and the usual two labels."""
from ..bart.configuration_bart import BartConfig


class MBartConfig(BartConfig):
    model_type = "mbart"
    default_num_labels = 2

    decoder_start_token_id: int | None = None


__all__ = ["MBartConfig"]
