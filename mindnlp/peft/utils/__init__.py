# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .constants import CONFIG_NAME, SAFETENSORS_WEIGHTS_NAME, WEIGHTS_NAME
from .other import ModulesToSaveWrapper, prepare_model_for_kbit_training
from .peft_types import PeftType, TaskType
from .save_and_load import get_peft_model_state_dict, load_peft_weights, set_peft_model_state_dict
