# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PrefixTuningConfig`: HF peft's fields and defaults for prefix tuning."""
from dataclasses import dataclass, field
from typing import Optional

from ...config import PromptLearningConfig
from ...utils.peft_types import PeftType


@dataclass
class PrefixTuningConfig(PromptLearningConfig):
    """Prefix tuning (Li & Liang, 2021): trained keys and values for `num_virtual_tokens` positions in
    every attention layer, given to the model as its `past_key_values`.

    With `prefix_projection` the prefix is a small embedding put through a two-layer tanh MLP
    (hidden size `encoder_hidden_size`) while training; `init_weights="zero"` starts it at zero.
    """

    init_weights: Optional[str] = field(default=None, metadata={"help": 'None (random) or "zero"'})
    encoder_hidden_size: int = field(default=None, metadata={"help": "The hidden size of the encoder"})
    prefix_projection: bool = field(default=False, metadata={"help": "Whether to project the prefix tokens"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.PREFIX_TUNING
        if self.init_weights not in (None, "zero"):
            raise ValueError(f'init_weights must be None or "zero", got {self.init_weights!r}')
