# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""File names and module-name conventions shared with HF peft's on-disk format."""

CONFIG_NAME = "adapter_config.json"
SAFETENSORS_WEIGHTS_NAME = "adapter_model.safetensors"
WEIGHTS_NAME = "adapter_model.bin"

# Names of embedding layers whose full weights peft saves next to the adapter when they are targeted.
EMBEDDING_LAYER_NAMES = ["embed_tokens", "lm_head"]
# Classification heads a sequence-classification PeftModel trains in full (added to modules_to_save).
SEQ_CLS_HEAD_NAMES = ["score", "classifier"]
INCLUDE_LINEAR_LAYERS_SHORTHAND = "all-linear"
