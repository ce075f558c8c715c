# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""SigLIP's vision tower (Zhai et al., 2023), with Hugging Face's parameter names.

A ViT without a class token: non-overlapping patches embedded by a convolution whose stride is
its kernel, plus learned position embeddings, then pre-norm encoder layers (BART's q/k/v/out
attention, an fc1 → gelu → fc2 MLP) and a final LayerNorm. The pooled output comes from
attention pooling: one learned probe query attends over the patches (`head`), unless the
config sets `vision_use_head` False, as the vision-language checkpoints that read every patch do.
"""
import math

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...modeling_layers import GradientCheckpointingLayer, output_flags
from ...modeling_outputs import BaseModelOutputWithPooling
from ...modeling_utils import PreTrainedModel
from ..bart.modeling_bart import BartAttention
from .configuration_siglip import SiglipVisionConfig


class SiglipVisionEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.patch_size = config.patch_size
        self.patch_embedding = nn.Conv2d(config.num_channels, config.hidden_size, kernel_size=config.patch_size,
                                         stride=config.patch_size, padding="valid")
        self.num_patches = (config.image_size // config.patch_size) ** 2
        self.position_embedding = nn.Embedding(self.num_patches, config.hidden_size)
        self.register_buffer("position_ids", core.arange(self.num_patches).expand((1, -1)), persistent=False)

    def forward(self, pixel_values, interpolate_pos_encoding=False):
        if interpolate_pos_encoding:
            raise NotImplementedError("SigLIP in mindnlp embeds images of the configured image_size only; "
                                      "interpolate_pos_encoding=True is not supported")
        height, width = pixel_values.shape[-2:]
        if height // self.patch_size * (width // self.patch_size) != self.num_patches:
            raise ValueError(f"pixel_values of {height}x{width} do not give the {self.num_patches} patches of "
                             f"image_size {self.config.image_size}")
        patches = self.patch_embedding(pixel_values.to(self.patch_embedding.weight.dtype))
        return patches.flatten(2).transpose(1, 2) + self.position_embedding(self.position_ids)


class SiglipAttention(BartAttention):
    """BART's self-attention without a cache or mask: every patch attends to every patch."""

    def __init__(self, config):
        super().__init__(config.hidden_size, config.num_attention_heads, dropout=config.attention_dropout,
                         config=config)


class SiglipMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.activation_fn = ACT2FN[config.hidden_act]
        self.fc1 = nn.Linear(config.hidden_size, config.intermediate_size)
        self.fc2 = nn.Linear(config.intermediate_size, config.hidden_size)

    def forward(self, hidden_states):
        return self.fc2(self.activation_fn(self.fc1(hidden_states)))


class SiglipEncoderLayer(GradientCheckpointingLayer):
    """Pre-norm residual attention then MLP (no residual dropout)."""

    def __init__(self, config):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.self_attn = SiglipAttention(config)
        self.layer_norm2 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.mlp = SiglipMLP(config)

    def forward(self, hidden_states, output_attentions=False):
        attention_output, weights = self.self_attn(self.layer_norm1(hidden_states),
                                                   output_attentions=output_attentions)
        hidden_states = hidden_states + attention_output
        return hidden_states + self.mlp(self.layer_norm2(hidden_states)), weights


class SiglipEncoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList([SiglipEncoderLayer(config) for _ in range(config.num_hidden_layers)])

    def forward(self, hidden_states, output_attentions=False, output_hidden_states=False):
        """(last hidden states, the input and every layer's output or None, attentions or None)."""
        all_hidden = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states, weights = layer(hidden_states, output_attentions=output_attentions)
            if output_hidden_states:
                all_hidden += (hidden_states,)
            if output_attentions:
                all_attentions += (weights,)
        return hidden_states, all_hidden, all_attentions


class SiglipMultiheadAttentionPoolingHead(nn.Module):
    """A learned probe attends over the patches (torch's MultiheadAttention), then a residual MLP."""

    def __init__(self, config):
        super().__init__()
        self.probe = nn.Parameter(core.randn(1, 1, config.hidden_size))
        self.attention = nn.MultiheadAttention(config.hidden_size, config.num_attention_heads, batch_first=True)
        self.layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.mlp = SiglipMLP(config)

    def forward(self, hidden_states):
        probe = self.probe.repeat(hidden_states.shape[0], 1, 1)
        pooled = self.attention(probe, hidden_states, hidden_states)[0]
        pooled = pooled + self.mlp(self.layernorm(pooled))
        return pooled[:, 0]


class SiglipPreTrainedModel(PreTrainedModel):
    config_class = SiglipVisionConfig
    base_model_prefix = "siglip"
    main_input_name = "pixel_values"
    input_modalities = ("image",)
    supports_gradient_checkpointing = True
    _no_split_modules = ["SiglipVisionEmbeddings", "SiglipEncoderLayer", "SiglipMultiheadAttentionPoolingHead"]

    def _init_weights(self, module):
        """JAX's initialisers, as the original checkpoints were trained with: LeCun-normal
        projections (Xavier-uniform in attention and MLP), position embeddings of std 1/sqrt(width).
        Parents run after their children, so these override the generic Linear/Embedding rules."""
        if isinstance(module, SiglipVisionEmbeddings):
            width = module.position_embedding.embedding_dim
            nn.init.normal_(module.position_embedding.weight, std=1 / math.sqrt(width))
            with core.no_grad():
                module.position_ids.copy_(core.arange(module.num_patches).expand((1, -1)))
        elif isinstance(module, (SiglipAttention, SiglipMLP)):
            for linear in module.children():
                if isinstance(linear, nn.Linear):
                    nn.init.xavier_uniform_(linear.weight)
                    if isinstance(module, SiglipMLP):
                        nn.init.normal_(linear.bias, std=1e-6)
                    else:
                        nn.init.zeros_(linear.bias)
        elif isinstance(module, SiglipMultiheadAttentionPoolingHead):
            nn.init.xavier_uniform_(module.probe)
            nn.init.xavier_uniform_(module.attention.in_proj_weight)
            nn.init.zeros_(module.attention.in_proj_bias)
        elif isinstance(module, (nn.Linear, nn.Conv2d)):
            # LeCun normal: variance 1/fan_in after truncation to two standard deviations, which
            # shrinks a normal's std by 0.8796...
            fan_in = module.weight[0].numel()
            nn.init.trunc_normal_(module.weight, std=math.sqrt(1 / fan_in) / 0.87962566103423978)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        else:
            super()._init_weights(module)


class SiglipVisionModel(SiglipPreTrainedModel):
    """The vision tower. Its modules sit at the top level (transformers 5's layout); checkpoints
    written before nest them under `vision_model.`, the prefix loading strips."""

    base_model_prefix = "vision_model"

    def __init__(self, config):
        super().__init__(config)
        self.embeddings = SiglipVisionEmbeddings(config)
        self.encoder = SiglipEncoder(config)
        self.post_layernorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.use_head = config.vision_use_head
        if self.use_head:
            self.head = SiglipMultiheadAttentionPoolingHead(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.embeddings.patch_embedding

    def forward(self, pixel_values, interpolate_pos_encoding=False, output_attentions=None,
                output_hidden_states=None, return_dict=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        hidden_states = self.embeddings(pixel_values, interpolate_pos_encoding=interpolate_pos_encoding)
        hidden_states, all_hidden, all_attentions = self.encoder(hidden_states, output_attentions,
                                                                 output_hidden_states)
        last_hidden_state = self.post_layernorm(hidden_states)
        output = BaseModelOutputWithPooling(
            last_hidden_state=last_hidden_state,
            pooler_output=self.head(last_hidden_state) if self.use_head else None,
            hidden_states=all_hidden, attentions=all_attentions)
        return output if return_dict else output.to_tuple()


__all__ = ["SiglipPreTrainedModel", "SiglipVisionModel"]
