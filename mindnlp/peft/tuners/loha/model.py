# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoHaModel`: the tuner that puts LoHa layers into a model."""
from ....core import nn
from ..lycoris_utils import LycorisTuner
from ..lora.model import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
from .layer import Conv1d, Conv2d, Linear, LoHaLayer


class LoHaModel(LycorisTuner):
    prefix = "hada_"
    tuner_layer_cls = LoHaLayer
    target_module_mapping = TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING  # HF peft uses LoRA's defaults
    layers_mapping = {nn.Conv2d: Conv2d, nn.Conv1d: Conv1d, nn.Linear: Linear}
