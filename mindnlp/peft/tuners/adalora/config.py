# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`AdaLoraConfig`: HF peft's fields and defaults for AdaLoRA."""
import warnings
from dataclasses import dataclass, field
from typing import Optional

from ...utils.peft_types import PeftType
from ..lora.config import LoraConfig


@dataclass
class AdaLoraConfig(LoraConfig):
    """AdaLoRA (Zhang et al., 2023): LoRA in SVD form P diag(E) Q whose rank budget is reallocated.

    Every layer starts with `init_r` singular triplets; after `tinit` warm-up steps the total
    budget shrinks cubically to `target_r` per layer until `total_step - tfinal`, every `deltaT`
    steps pruning the triplets with the smallest importance (sensitivity |w * grad| smoothed with
    `beta1`, times its uncertainty smoothed with `beta2`). `orth_reg_weight` weighs the
    ||P^T P - I|| + ||Q Q^T - I|| penalty added to the loss. The pruned ranks are recorded in
    `rank_pattern` (saved with the adapter, so the shrunk matrices can be loaded back).
    """

    target_r: int = field(default=8, metadata={"help": "Target Lora matrix dimension."})
    init_r: int = field(default=12, metadata={"help": "Initial Lora matrix dimension."})
    tinit: int = field(default=0, metadata={"help": "The steps of initial warmup."})
    tfinal: int = field(default=0, metadata={"help": "The steps of final warmup."})
    deltaT: int = field(default=1, metadata={"help": "Step interval of rank allocation."})
    beta1: float = field(default=0.85, metadata={"help": "Hyperparameter of EMA."})
    beta2: float = field(default=0.85, metadata={"help": "Hyperparameter of EMA."})
    orth_reg_weight: float = field(default=0.5, metadata={"help": "The orthogonal regularization coefficient."})
    total_step: Optional[int] = field(default=None, metadata={"help": "The total training steps."})
    rank_pattern: Optional[dict] = field(default=None, metadata={"help": "The saved rank pattern."})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.ADALORA
        if self.use_dora:
            raise ValueError(f"{self.peft_type} does not support DoRA.")
        if self.r != 8:
            warnings.warn("Note that `r` is not used in AdaLora and will be ignored.If you intended to set the initial "
                          "rank, use `init_r` instead.")
        if self.total_step is None or self.total_step <= 0:
            raise ValueError("AdaLoRA does not work when `total_step` is None, supply a value > 0.")
        if self.orth_reg_weight < 0:
            raise ValueError(f"`orth_reg_weight` should be greater than or equal to 0, but the value passed is "
                             f"{self.orth_reg_weight}")
        if self.tinit >= self.total_step - self.tfinal:
            raise ValueError("The supplied schedule values don't allow for a budgeting phase. Decrease "
                             "`tfinal`/`tinit` or increase `total_step`.")
