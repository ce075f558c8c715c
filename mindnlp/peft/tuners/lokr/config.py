# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoKrConfig`: HF peft's fields and defaults for LoKr (Low-Rank Kronecker product)."""
from dataclasses import dataclass, field
from typing import Optional, Union

from ...utils.peft_types import PeftType
from ..lycoris_utils import LycorisConfig


@dataclass
class LoKrConfig(LycorisConfig):
    """LoKr: delta W = kron(W1, W2) * alpha / r, the factor shapes chosen by factorising in and out dims.

    W2 (the larger factor) is stored low-rank (w2_a @ w2_b) when r is below half its size; W1 too
    with `decompose_both`. `decompose_factor` caps the size of the first factor (-1: balanced).
    `init_weights`: True (W1 zero), "lycoris" (W2 zero, as the LyCORIS library), False (random).
    """

    r: int = field(default=8, metadata={"help": "LoKr rank"})
    alpha: int = field(default=8, metadata={"help": "LoKr alpha"})
    rank_dropout: float = field(default=0.0, metadata={"help": "Dropout probability of the rank dimension"})
    module_dropout: float = field(default=0.0, metadata={"help": "Probability of skipping the adapter in a step"})
    use_effective_conv2d: bool = field(default=False, metadata={"help": "CP decomposition of conv kernels"})
    decompose_both: bool = field(default=False, metadata={"help": "Low-rank decomposition of the left factor too"})
    decompose_factor: int = field(default=-1, metadata={"help": "Kronecker product decomposition factor"})
    rank_dropout_scale: bool = field(default=False, metadata={"help": "Rescale kept rows under rank dropout"})
    target_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules to adapt"})
    exclude_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules not to adapt"})
    init_weights: Union[bool, str] = field(default=True, metadata={"help": "True, False or 'lycoris'"})
    layers_to_transform: Optional[Union[list, int]] = field(default=None, metadata={"help": "Layer indices"})
    layers_pattern: Optional[Union[list, str]] = field(default=None, metadata={"help": "Name of the layer list"})
    modules_to_save: Optional[list] = field(default=None, metadata={"help": "Modules trained in full and saved"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.LOKR
        self._normalise_module_selection()
        if not (isinstance(self.init_weights, bool) or self.init_weights == "lycoris"):
            raise ValueError(f"init_weights must be True, False or 'lycoris', got {self.init_weights!r}")
