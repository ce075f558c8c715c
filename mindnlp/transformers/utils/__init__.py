# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Utilities shared across mindnlp.transformers: hub file resolution, ModelOutput, logging, file names."""
from . import logging
from .generic import ModelOutput
from .import_utils import (
    direct_transformers_import, is_flash_attn_2_available, is_mlx_available, is_sklearn_available, is_torch_available,
    is_torch_bf16_available_on_device, is_torch_fp16_available_on_device, is_torch_xpu_available, is_torchaudio_available,
    is_sentencepiece_available, is_torchdynamo_compiling, is_torchdynamo_exporting,
)

# The file names of a saved model folder, as Hugging Face transformers writes them.
CONFIG_NAME = "config.json"
GENERATION_CONFIG_NAME = "generation_config.json"
SAFE_WEIGHTS_NAME = "model.safetensors"
SAFE_WEIGHTS_INDEX_NAME = "model.safetensors.index.json"
WEIGHTS_NAME = "pytorch_model.bin"
WEIGHTS_INDEX_NAME = "pytorch_model.bin.index.json"
ADAPTER_SAFE_WEIGHTS_NAME = "adapter_model.safetensors"
ADAPTER_WEIGHTS_NAME = "adapter_model.bin"
