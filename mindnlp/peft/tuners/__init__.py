# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .adalora import AdaLoraConfig, AdaLoraModel
from .ia3 import IA3Config, IA3Model
from .loha import LoHaConfig, LoHaModel
from .lokr import LoKrConfig, LoKrModel
from .lora import LoraConfig, LoraModel
from .p_tuning import PromptEncoder, PromptEncoderConfig, PromptEncoderReparameterizationType
from .prefix_tuning import PrefixEncoder, PrefixTuningConfig
from .prompt_tuning import PromptEmbedding, PromptTuningConfig, PromptTuningInit
from .tuners_utils import BaseTuner, BaseTunerLayer, check_target_module_exists

__all__ = ["BaseTuner", "BaseTunerLayer", "check_target_module_exists", "LoraConfig", "LoraModel",
           "AdaLoraConfig", "AdaLoraModel", "IA3Config", "IA3Model", "LoHaConfig", "LoHaModel", "LoKrConfig",
           "LoKrModel", "PromptEncoder", "PromptEncoderConfig", "PromptEncoderReparameterizationType",
           "PrefixEncoder", "PrefixTuningConfig", "PromptEmbedding", "PromptTuningConfig", "PromptTuningInit"]
