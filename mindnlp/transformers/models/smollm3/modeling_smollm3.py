# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SmolLM3 (Hugging Face, 2025): Llama with NoPE layers, with Hugging Face's parameter names.

What differs from Llama: the layers marked 0 in `config.no_rope_layers` (every fourth by
default) apply no rotary embedding to their queries and keys; with `use_sliding_window`
those layers attend over a window (`layer_types`, which the shared blocks read).
"""
from ...generation import GenerationMixin
from ..llama.modeling_llama import (LlamaAttention, LlamaDecoderLayer, LlamaForCausalLM, LlamaForQuestionAnswering,
                                    LlamaForSequenceClassification, LlamaForTokenClassification, LlamaModel,
                                    LlamaPreTrainedModel)
from .configuration_smollm3 import SmolLM3Config


class SmolLM3Attention(LlamaAttention):
    def __init__(self, config, layer_idx):
        super().__init__(config, layer_idx)
        self.use_rope = bool(config.no_rope_layers[layer_idx])


class SmolLM3DecoderLayer(LlamaDecoderLayer):
    attention_class = SmolLM3Attention


class SmolLM3PreTrainedModel(LlamaPreTrainedModel):
    config_class = SmolLM3Config
    _no_split_modules = ["SmolLM3DecoderLayer"]


class SmolLM3Model(LlamaModel, SmolLM3PreTrainedModel):
    layer_class = SmolLM3DecoderLayer


class SmolLM3ForCausalLM(LlamaForCausalLM, SmolLM3PreTrainedModel, GenerationMixin):
    base_model_class = SmolLM3Model


class SmolLM3ForSequenceClassification(LlamaForSequenceClassification, SmolLM3PreTrainedModel):
    base_model_class = SmolLM3Model


class SmolLM3ForTokenClassification(LlamaForTokenClassification, SmolLM3PreTrainedModel):
    base_model_class = SmolLM3Model


class SmolLM3ForQuestionAnswering(LlamaForQuestionAnswering, SmolLM3PreTrainedModel):
    base_model_class = SmolLM3Model


__all__ = [
    "SmolLM3ForCausalLM", "SmolLM3ForQuestionAnswering", "SmolLM3ForSequenceClassification",
    "SmolLM3ForTokenClassification", "SmolLM3Model", "SmolLM3PreTrainedModel",
]
