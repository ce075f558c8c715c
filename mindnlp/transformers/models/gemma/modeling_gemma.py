# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma (Gemma team, Google DeepMind, 2024): a Llama-like decoder with Hugging Face's parameter names.

What differs from Llama: token embeddings are multiplied by sqrt(hidden_size) (rounded to the
weights' dtype, as HF does); RMSNorm scales by (1 + weight), computed in float32 before the
cast back, and its weight starts at zero; the MLP is GeGLU, down(gelu_tanh(gate(x)) · up(x))
(the config's `hidden_act`); `head_dim` is set on its own (256 in the released models) rather
than derived; the output head is tied to the embeddings by default; and there is no
question-answering head.
"""
from .... import core
from ....core import nn
from ...generation import GenerationMixin
from ...modeling_decoder import UnitOffsetRMSNorm
from ..llama.modeling_llama import (LlamaDecoderLayer, LlamaForCausalLM, LlamaForSequenceClassification,
                                    LlamaForTokenClassification, LlamaModel, LlamaPreTrainedModel)
from .configuration_gemma import GemmaConfig


class GemmaRMSNorm(UnitOffsetRMSNorm):
    pass


class GemmaTextScaledWordEmbedding(nn.Embedding):
    """An embedding whose output is multiplied by `embed_scale` (sqrt(hidden_size)), rounded to the
    weight's dtype first; the scale is a non-persistent buffer."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx, embed_scale=1.0):
        super().__init__(num_embeddings, embedding_dim, padding_idx)
        self.scalar_embed_scale = embed_scale
        self.register_buffer("embed_scale", core.tensor(embed_scale), persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(self.weight.dtype)


class GemmaDecoderLayer(LlamaDecoderLayer):
    norm_class = GemmaRMSNorm


class GemmaPreTrainedModel(LlamaPreTrainedModel):
    config_class = GemmaConfig
    _no_split_modules = ["GemmaDecoderLayer"]

    def _init_weights(self, module):
        """The shared defaults (norms start at zero), and the embedding's scale buffer restored."""
        super()._init_weights(module)
        if isinstance(module, GemmaTextScaledWordEmbedding):
            nn.init.constant_(module.embed_scale, module.scalar_embed_scale)


class GemmaModel(LlamaModel, GemmaPreTrainedModel):
    layer_class = GemmaDecoderLayer

    def build_embeddings(self, config):
        return GemmaTextScaledWordEmbedding(config.vocab_size, config.hidden_size, self.padding_idx,
                                            embed_scale=config.hidden_size ** 0.5)


class GemmaForCausalLM(LlamaForCausalLM, GemmaPreTrainedModel, GenerationMixin):
    base_model_class = GemmaModel


class GemmaForSequenceClassification(LlamaForSequenceClassification, GemmaPreTrainedModel):
    base_model_class = GemmaModel


class GemmaForTokenClassification(LlamaForTokenClassification, GemmaPreTrainedModel):
    base_model_class = GemmaModel


__all__ = [
    "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification", "GemmaModel",
    "GemmaPreTrainedModel",
]
