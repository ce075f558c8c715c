# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`PromptEncoderConfig`: HF peft's fields and defaults for P-tuning."""
import enum
from dataclasses import dataclass, field
from typing import Union

from ...config import PromptLearningConfig
from ...utils.peft_types import PeftType


class PromptEncoderReparameterizationType(str, enum.Enum):
    MLP = "MLP"
    LSTM = "LSTM"


@dataclass
class PromptEncoderConfig(PromptLearningConfig):
    """P-tuning (Liu et al., 2021): virtual-token embeddings reparameterised by an MLP (or a
    bidirectional LSTM + MLP) while training; `encoder_num_layers` and `encoder_dropout` apply to the LSTM."""

    encoder_reparameterization_type: Union[str, PromptEncoderReparameterizationType] = field(
        default=PromptEncoderReparameterizationType.MLP, metadata={"help": "How to reparameterize the prompt encoder"})
    encoder_hidden_size: int = field(default=None, metadata={"help": "The hidden size of the prompt encoder"})
    encoder_num_layers: int = field(default=2, metadata={"help": "The number of layers of the prompt encoder"})
    encoder_dropout: float = field(default=0.0, metadata={"help": "The dropout of the prompt encoder"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.P_TUNING
