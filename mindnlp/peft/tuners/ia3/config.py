# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`IA3Config`: HF peft's fields and defaults for (IA)^3."""
from dataclasses import dataclass, field
from typing import Optional, Union

from ...config import PeftConfig
from ...utils.peft_types import PeftType


@dataclass
class IA3Config(PeftConfig):
    """(IA)^3 (Liu et al., 2022): learned vectors that rescale activations.

    On a targeted layer the output is scaled by a vector l (one value per output feature); on a
    layer also listed in `feedforward_modules` the input is scaled instead (per input feature).
    `feedforward_modules` must be a subset of `target_modules` when both are lists.
    """

    target_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules to adapt"})
    exclude_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules not to adapt"})
    feedforward_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules whose input "
                                                                                             "is scaled"})
    fan_in_fan_out: bool = field(default=False, metadata={"help": "Weights stored (in, out), as GPT-2's Conv1D"})
    modules_to_save: Optional[list] = field(default=None, metadata={"help": "Modules trained in full and saved"})
    init_ia3_weights: bool = field(default=True, metadata={"help": "Start the vectors at 1 (a no-op)"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.IA3
        for name in ("target_modules", "exclude_modules", "feedforward_modules"):
            if isinstance(getattr(self, name), list):
                setattr(self, name, set(getattr(self, name)))
        if isinstance(self.feedforward_modules, set) and isinstance(self.target_modules, set):
            if not self.feedforward_modules.issubset(self.target_modules):
                raise ValueError("`feedforward_modules` should be a subset of `target_modules`")
