# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoraConfig`: HF peft's LoRA fields, defaults and checks."""
import re
import warnings
from dataclasses import dataclass, field
from typing import Optional, Union

from ...config import PeftConfig
from ...utils.peft_types import PeftType

# Fields HF peft writes into every LoRA adapter_config.json for features this implementation
# does not have (quantisation, distributed training, other initialisations, LoRA variants).
# At their default value they mean "feature off" and are dropped when loading; any other
# value is refused, since the adapter would not behave as it did in HF peft.
_UNSUPPORTED_FIELD_DEFAULTS = {
    "megatron_config": None, "megatron_core": "megatron.core", "trainable_token_indices": None,
    "loftq_config": {}, "eva_config": None, "corda_config": None, "lora_ga_config": None,
    "velora_config": None, "alora_invocation_tokens": None, "use_qalora": False, "qalora_group_size": 16,
    "monteclora_config": None, "layer_replication": None, "lora_bias": False, "target_parameters": None,
    "use_bdlora": None, "arrow_config": None, "kasa_config": None, "ensure_weight_tying": False,
}
_INIT_CHOICES = "True, False, 'gaussian', 'pissa', 'pissa_niter_<n>' or 'olora'"


@dataclass
class LoraConfig(PeftConfig):
    """Configuration of a LoRA adapter (Hu et al., 2021): W x + (alpha / r) B A x on targeted layers.

    Fields and defaults are HF peft's. `target_modules` names layers by the end of their dotted
    path, or is one regex matched against the whole path, or "all-linear". `rank_pattern` and
    `alpha_pattern` override r and lora_alpha for layers whose path ends with (or matches) a key.
    `use_rslora` scales by alpha / sqrt(r). `use_dora` adds DoRA's magnitude vector.
    """

    r: int = field(default=8, metadata={"help": "Lora attention dimension"})
    target_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules to adapt"})
    exclude_modules: Optional[Union[list, str]] = field(default=None, metadata={"help": "Modules not to adapt"})
    lora_alpha: int = field(default=8, metadata={"help": "Lora alpha"})
    lora_dropout: float = field(default=0.0, metadata={"help": "Lora dropout"})
    fan_in_fan_out: bool = field(default=False, metadata={"help": "Weights stored (in, out), as GPT-2's Conv1D"})
    bias: str = field(default="none", metadata={"help": "Bias type for Lora: 'none', 'all' or 'lora_only'"})
    use_rslora: bool = field(default=False, metadata={"help": "Rank-stabilised scaling alpha / sqrt(r)"})
    modules_to_save: Optional[list] = field(default=None, metadata={"help": "Modules trained in full and saved"})
    init_lora_weights: Union[bool, str] = field(default=True, metadata={"help": f"One of {_INIT_CHOICES}"})
    layers_to_transform: Optional[Union[list, int]] = field(default=None, metadata={"help": "Layer indices"})
    layers_pattern: Optional[Union[list, str]] = field(default=None, metadata={"help": "Name of the layer list"})
    rank_pattern: Optional[dict] = field(default_factory=dict, metadata={"help": "Per-layer ranks"})
    alpha_pattern: Optional[dict] = field(default_factory=dict, metadata={"help": "Per-layer alphas"})
    use_dora: bool = field(default=False, metadata={"help": "Weight-Decomposed Low-Rank Adaptation"})

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = PeftType.LORA
        if isinstance(self.target_modules, str) and self.layers_to_transform is not None:
            raise ValueError("`layers_to_transform` cannot be used when `target_modules` is a str.")
        if isinstance(self.target_modules, str) and self.layers_pattern is not None:
            raise ValueError("`layers_pattern` cannot be used when `target_modules` is a str.")
        self._normalise_module_selection()
        if self.bias not in ("none", "all", "lora_only"):
            raise NotImplementedError(f"Requested bias: {self.bias}, is not implemented.")
        init = self.init_lora_weights
        if not (isinstance(init, bool) or init in ("gaussian", "olora", "pissa")
                or (isinstance(init, str) and re.fullmatch(r"pissa_niter_\d+", init))):
            raise ValueError(f"init_lora_weights={init!r} is not supported; use one of {_INIT_CHOICES}.")
        if self.use_rslora and (self.rank_pattern or self.alpha_pattern) and isinstance(init, str):
            warnings.warn("Using Rank-Stabilized LoRA with rank_pattern/alpha_pattern and post-training conversion of "
                          "modified base weights PiSSA/OLoRA means that you won't be able to restore the initial "
                          "values of the base weights.")

    @classmethod
    def _drop_unsupported_defaults(cls, kwargs):
        kwargs = dict(kwargs)
        for name, default in _UNSUPPORTED_FIELD_DEFAULTS.items():
            if name not in kwargs:
                continue
            value = kwargs.pop(name)
            if value != default and not (default == {} and value is None):
                raise NotImplementedError(f"This adapter sets {name}={value!r}, a LoRA feature mindnlp.peft does not "
                                          "implement; it cannot be loaded faithfully.")
        return kwargs
