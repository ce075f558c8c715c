# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoHaConfig`: HF peft's fields and defaults for LoHa (Low-Rank Hadamard Product)."""
from dataclasses import dataclass, field
from typing import Optional, Union

from ...utils.peft_types import PeftType
from ..lycoris_utils import LycorisConfig


@dataclass
class LoHaConfig(LycorisConfig):
    """LoHa (Hyeon-Woo et al., FedPara): delta W = (W1a W1b) * (W2a W2b) * alpha / r, "*" elementwise.

    The Hadamard product of two rank-r factors reaches rank r^2 with the parameters of rank 2r.
    `use_effective_conv2d` factorises conv kernels with a small core tensor per factor
    ("Proposition 3" of FedPara) instead of flattening them.
    """

    r: int = field(default=8, metadata={"help": "LoHa rank"})
    alpha: int = field(default=8, metadata={"help": "LoHa alpha"})
    rank_dropout: float = field(default=0.0, metadata={"help": "Dropout probability of the rank dimension"})
    module_dropout: float = field(default=0.0, metadata={"help": "Probability of skipping the adapter in a step"})
    use_effective_conv2d: bool = field(default=False, metadata={"help": "CP decomposition of conv kernels"})
    target_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules to adapt"})
    exclude_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules not to adapt"})
    init_weights: bool = field(default=True, metadata={"help": "Start as a no-op (one factor zero)"})
    layers_to_transform: Optional[Union[list, int]] = field(default=None, metadata={"help": "Layer indices"})
    layers_pattern: Optional[Union[list, str]] = field(default=None, metadata={"help": "Name of the layer list"})
    modules_to_save: Optional[list] = field(default=None, metadata={"help": "Modules trained in full and saved"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.LOHA
        self._normalise_module_selection()
