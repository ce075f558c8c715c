"""Gemma 3 text (Gemma team, Google DeepMind, 2025): Gemma 2's decoder with q/k norm and two RoPE
bases, with Hugging Face's parameter names.

What differs from Gemma 2: queries and keys pass through a per-head (1 + weight) RMSNorm
(`q_norm`, `k_norm`); sliding layers rotate with a local base and full layers with a global
one (`rope_parameters` per layer type, which the shared rotary embedding computes once each);
five sliding layers alternate with one full layer; no soft-capping by default. The
multimodal Gemma 3 (`Gemma3ForConditionalGeneration`) is not here.
"""
from ...generation import GenerationMixin
from ..gemma.modeling_gemma import GemmaRMSNorm
from ..gemma2.modeling_gemma2 import (Gemma2DecoderLayer, Gemma2ForCausalLM, Gemma2ForSequenceClassification,
                                      Gemma2Model, Gemma2PreTrainedModel)
from ..llama.modeling_llama import LlamaAttention
from .configuration_gemma3 import Gemma3TextConfig


class Gemma3Attention(LlamaAttention):
    qk_norm = "head"
    norm_class = GemmaRMSNorm


class Gemma3DecoderLayer(Gemma2DecoderLayer):
    attention_class = Gemma3Attention


class Gemma3PreTrainedModel(Gemma2PreTrainedModel):
    config_class = Gemma3TextConfig
    _no_split_modules = ["Gemma3DecoderLayer"]


class Gemma3TextModel(Gemma2Model, Gemma3PreTrainedModel):
    layer_class = Gemma3DecoderLayer


class Gemma3ForCausalLM(Gemma2ForCausalLM, Gemma3PreTrainedModel, GenerationMixin):
    base_model_class = Gemma3TextModel


class Gemma3TextForSequenceClassification(Gemma2ForSequenceClassification, Gemma3PreTrainedModel):
    base_model_class = Gemma3TextModel


__all__ = ["Gemma3ForCausalLM", "Gemma3PreTrainedModel", "Gemma3TextForSequenceClassification", "Gemma3TextModel"]
