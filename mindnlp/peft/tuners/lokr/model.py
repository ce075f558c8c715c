# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`LoKrModel`: the tuner that puts LoKr layers into a model."""
from ....core import nn
from ..lora.model import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING
from ..lycoris_utils import LycorisTuner
from .layer import Conv1d, Conv2d, Linear, LoKrLayer


class LoKrModel(LycorisTuner):
    prefix = "lokr_"
    tuner_layer_cls = LoKrLayer
    target_module_mapping = TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING  # HF peft uses LoRA's defaults
    layers_mapping = {nn.Conv2d: Conv2d, nn.Conv1d: Conv1d, nn.Linear: Linear}
