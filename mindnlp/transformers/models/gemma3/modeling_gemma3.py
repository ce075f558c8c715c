# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Gemma 3 (Gemma team, Google DeepMind, 2025): Gemma 2's decoder with q/k norm and two RoPE
bases, and the image-text model around it, with Hugging Face's parameter names.

What differs from Gemma 2: queries and keys pass through a per-head (1 + weight) RMSNorm
(`q_norm`, `k_norm`); sliding layers rotate with a local base and full layers with a global
one (`rope_parameters` per layer type, which the shared rotary embedding computes once each);
five sliding layers alternate with one full layer; no soft-capping by default.

The image-text model (`Gemma3ForConditionalGeneration`) encodes each image with a SigLIP
vision tower, average-pools its patch grid down to `mm_tokens_per_image` embeddings, normalises
them (`mm_soft_emb_norm`) and projects them to the text width; they replace the image
placeholder tokens of the prompt. The tokens of one image attend to each other in both
directions (`token_type_ids` 1 marks them), everything else stays causal.
"""
import math
from dataclasses import dataclass
from typing import Optional

from .... import core
from ....core import nn
from ...generation import GenerationMixin
from ...loss_utils import causal_lm_loss, sequence_classification_loss
from ...cache_utils import DynamicCache, attention_layer_types
from ...modeling_layers import keep_last_positions, last_non_pad_logits
from ...modeling_outputs import (BaseModelOutputWithPast, CausalLMOutputWithPast,
                                 SequenceClassifierOutputWithPast)
from ..auto import AutoModel
from ..gemma.modeling_gemma import GemmaRMSNorm
from ..gemma2.modeling_gemma2 import (Gemma2DecoderLayer, Gemma2ForCausalLM, Gemma2ForSequenceClassification,
                                      Gemma2Model, Gemma2PreTrainedModel)
from ..llama.modeling_llama import LlamaAttention
from .configuration_gemma3 import Gemma3Config, Gemma3TextConfig


@dataclass
class Gemma3ModelOutputWithPast(BaseModelOutputWithPast):
    image_hidden_states: Optional[object] = None


@dataclass
class Gemma3CausalLMOutputWithPast(CausalLMOutputWithPast):
    image_hidden_states: Optional[object] = None


class Gemma3Attention(LlamaAttention):
    qk_norm = "head"
    norm_class = GemmaRMSNorm


class Gemma3DecoderLayer(Gemma2DecoderLayer):
    attention_class = Gemma3Attention


class Gemma3MultiModalProjector(nn.Module):
    """Vision tower patches → text embeddings: the (image/patch)² grid average-pooled to
    (√mm_tokens_per_image)², RMS-normalised, then multiplied by `mm_input_projection_weight`."""

    def __init__(self, config):
        super().__init__()
        vision = config.vision_config
        self.mm_input_projection_weight = nn.Parameter(core.zeros(vision.hidden_size, config.text_config.hidden_size))
        self.mm_soft_emb_norm = GemmaRMSNorm(vision.hidden_size, eps=vision.layer_norm_eps)
        self.patches_per_image = vision.image_size // vision.patch_size
        self.tokens_per_side = math.isqrt(config.mm_tokens_per_image)
        self.kernel_size = self.patches_per_image // max(self.tokens_per_side, 1)
        if self.kernel_size == 0:
            raise ValueError(f"mm_tokens_per_image ({config.mm_tokens_per_image}) needs more than the "
                             f"{self.patches_per_image} patches per side the vision tower makes")
        self.avg_pool = nn.AvgPool2d(kernel_size=self.kernel_size, stride=self.kernel_size)

    def forward(self, vision_outputs):
        batch_size, _, hidden_size = vision_outputs.shape
        grid = vision_outputs.transpose(1, 2).reshape(batch_size, hidden_size, self.patches_per_image,
                                                      self.patches_per_image)
        pooled = self.avg_pool(grid).flatten(2).transpose(1, 2)
        return core.matmul(self.mm_soft_emb_norm(pooled), self.mm_input_projection_weight).type_as(vision_outputs)


class Gemma3PreTrainedModel(Gemma2PreTrainedModel):
    config_class = Gemma3TextConfig
    input_modalities = ("image", "text")
    _no_split_modules = ["Gemma3DecoderLayer", "SiglipVisionEmbeddings", "SiglipEncoderLayer",
                         "SiglipMultiheadAttentionPoolingHead"]

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, Gemma3MultiModalProjector):
            nn.init.zeros_(module.mm_input_projection_weight)


class Gemma3TextModel(Gemma2Model, Gemma3PreTrainedModel):
    layer_class = Gemma3DecoderLayer
    input_modalities = ("text",)

    def attention_masks(self, kinds, inputs_embeds, attention_mask, past_key_values, cache_position, position_ids):
        """Masks already made per layer kind (by the image-text model) are used as they are."""
        if isinstance(attention_mask, dict):
            return attention_mask
        return super().attention_masks(kinds, inputs_embeds, attention_mask, past_key_values, cache_position,
                                       position_ids)


class Gemma3ForCausalLM(Gemma2ForCausalLM, Gemma3PreTrainedModel, GenerationMixin):
    base_model_class = Gemma3TextModel
    input_modalities = ("text",)


class Gemma3TextForSequenceClassification(Gemma2ForSequenceClassification, Gemma3PreTrainedModel):
    base_model_class = Gemma3TextModel
    input_modalities = ("text",)


def image_block_ids(token_type_ids):
    """(batch, sequence): which image of its row each token belongs to (0, 1, ...: one per run of
    `token_type_ids` 1), -1 for text."""
    is_image = token_type_ids == 1
    starts = is_image & ~nn.functional.pad(is_image, (1, 0), value=False)[:, :-1]
    return core.where(is_image, core.cumsum(starts.to(core.int64), dim=1) - 1, -1)


def open_image_blocks(mask, block_ids, query_positions, attention_mask=None, sliding_window=None):
    """`mask` (additive, (batch, 1, q, k)) with the tokens of each image attending to each other in
    both directions, padding still masked and a sliding window still cutting off keys too far back.

    The queries are the inputs at `query_positions`; the keys are positions 0.. (or, when there
    are fewer keys than positions, the latest ones); keys cached before the inputs count as text.
    """
    kv_length = mask.shape[-1]
    end = int(query_positions[-1]) + 1
    start = max(end - kv_length, 0)
    key_positions = core.arange(start, start + kv_length, device=mask.device)
    before, after = int(query_positions[0]) - start, start + kv_length - end
    key_ids = block_ids[:, -before:] if before < 0 else nn.functional.pad(block_ids, (before, 0), value=-1)
    key_ids = nn.functional.pad(key_ids, (0, after), value=-1)
    opened = (block_ids[:, :, None] == key_ids[:, None, :]) & (block_ids >= 0)[:, :, None]
    if attention_mask is not None and attention_mask.ndim == 2:
        padding = attention_mask[:, start:start + kv_length].to(core.bool)
        opened = opened & nn.functional.pad(padding, (0, kv_length - padding.shape[-1]), value=False)[:, None, :]
    if sliding_window is not None:
        opened = opened & (key_positions[None, :] > query_positions[:, None] - sliding_window)[None]
    return mask.masked_fill(opened[:, None], 0.0)


class Gemma3Model(Gemma3PreTrainedModel):
    """SigLIP tower + projector + Gemma 3 text model; image features replace the image tokens'
    embeddings before the text model runs."""

    config_class = Gemma3Config
    base_model_prefix = "model"
    # the layout of hub checkpoints and of what HF saves: the text model one level deeper
    _checkpoint_conversion_mapping = {"language_model.model": "language_model"}
    accepts_loss_kwargs = False

    def __init__(self, config):
        super().__init__(config)
        self.vision_tower = AutoModel.from_config(config.vision_config)
        self.multi_modal_projector = Gemma3MultiModalProjector(config)
        self.vocab_size = config.text_config.vocab_size
        self.language_model = Gemma3TextModel(config.text_config)
        self.post_init()

    def get_input_embeddings(self):
        return self.language_model.get_input_embeddings()

    def set_input_embeddings(self, value):
        self.language_model.set_input_embeddings(value)

    def get_image_features(self, pixel_values, return_dict=None, **kwargs):
        """The vision tower's outputs, `pooler_output` replaced by the projected image embeddings
        (batch, tokens per image, text hidden size)."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        vision_outputs = self.vision_tower(pixel_values=pixel_values, return_dict=True, **kwargs)
        vision_outputs.pooler_output = self.multi_modal_projector(vision_outputs.last_hidden_state)
        return vision_outputs if return_dict else vision_outputs.to_tuple()

    def get_placeholder_mask(self, input_ids, inputs_embeds, image_features):
        """(batch, sequence, hidden) bool of the positions the image features fill: the image
        token's ids, or, from embeddings alone, the rows equal to its embedding."""
        if input_ids is None:
            image_embedding = self.get_input_embeddings()(
                core.tensor(self.config.image_token_id, dtype=core.long, device=inputs_embeds.device))
            is_image = (inputs_embeds == image_embedding).all(-1)
        else:
            is_image = input_ids == self.config.image_token_id
        n_tokens, n_features = int(is_image.sum()), image_features.shape[0] * image_features.shape[1]
        if n_tokens != n_features:
            raise ValueError(f"Image features and image tokens do not match, tokens: {n_tokens}, "
                             f"features: {n_features}")
        return is_image.unsqueeze(-1).expand_as(inputs_embeds)

    def causal_masks(self, inputs_embeds, attention_mask, past_key_values, cache_position, position_ids,
                     token_type_ids):
        """{layer kind: additive mask}: the text model's causal masks, opened among each image's
        tokens when `token_type_ids` mark them."""
        text_config = self.config.text_config
        masks = self.language_model.attention_masks(set(attention_layer_types(text_config)), inputs_embeds,
                                                    attention_mask, past_key_values, cache_position, position_ids)
        if token_type_ids is None:
            return masks
        block_ids = image_block_ids(token_type_ids)
        return {kind: open_image_blocks(mask, block_ids, cache_position, attention_mask,
                                        text_config.sliding_window if kind == "sliding_attention" else None)
                for kind, mask in masks.items()}

    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, position_ids=None,
                past_key_values=None, token_type_ids=None, cache_position=None, inputs_embeds=None, labels=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        use_cache = use_cache if use_cache is not None else self.config.text_config.use_cache
        if self.training and self.language_model.is_gradient_checkpointing:
            use_cache = False  # recomputing a layer in backward would write its keys to the cache twice
        if inputs_embeds is None:
            text_ids = input_ids
            if self.config.image_token_id >= self.vocab_size:
                # the image token may lie past the text vocabulary: its embedding is replaced anyway
                text_ids = input_ids.masked_fill(input_ids == self.config.image_token_id, 0)
            inputs_embeds = self.get_input_embeddings()(text_ids)
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config.text_config)
        past_seen = past_key_values.get_seq_length() if past_key_values is not None else 0
        if cache_position is None:
            cache_position = core.arange(past_seen, past_seen + inputs_embeds.shape[1], device=inputs_embeds.device)
        if position_ids is None:
            position_ids = cache_position.unsqueeze(0)
        image_features = None
        if pixel_values is not None:
            image_features = self.get_image_features(pixel_values, return_dict=True).pooler_output
            image_features = image_features.to(inputs_embeds.dtype)
            placeholders = self.get_placeholder_mask(input_ids, inputs_embeds, image_features)
            inputs_embeds = inputs_embeds.masked_scatter(placeholders, image_features)
        masks = attention_mask if isinstance(attention_mask, dict) else self.causal_masks(
            inputs_embeds, attention_mask, past_key_values, cache_position, position_ids, token_type_ids)
        outputs = self.language_model(attention_mask=masks, position_ids=position_ids,
                                      past_key_values=past_key_values, inputs_embeds=inputs_embeds,
                                      use_cache=use_cache, output_attentions=output_attentions,
                                      output_hidden_states=output_hidden_states, return_dict=True,
                                      cache_position=cache_position)
        output = Gemma3ModelOutputWithPast(last_hidden_state=outputs.last_hidden_state,
                                           past_key_values=outputs.past_key_values,
                                           hidden_states=outputs.hidden_states, attentions=outputs.attentions,
                                           image_hidden_states=image_features)
        return output if return_dict else output.to_tuple()


class Gemma3ForConditionalGeneration(Gemma3PreTrainedModel, GenerationMixin):
    """Next-token logits over the text vocabulary from Gemma3Model (no final soft-capping, as in HF)."""

    config_class = Gemma3Config
    base_model_prefix = "model"
    _checkpoint_conversion_mapping = {"^language_model.model": "model.language_model",
                                      "^vision_tower": "model.vision_tower",
                                      "^multi_modal_projector": "model.multi_modal_projector",
                                      "^language_model.lm_head": "lm_head"}
    _tied_weights_keys = {"lm_head.weight": "model.language_model.embed_tokens.weight"}
    accepts_loss_kwargs = False

    def __init__(self, config):
        super().__init__(config)
        self.model = Gemma3Model(config)
        self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.get_input_embeddings()

    def set_input_embeddings(self, value):
        self.model.set_input_embeddings(value)

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def get_image_features(self, pixel_values, **kwargs):
        return self.model.get_image_features(pixel_values, **kwargs)

    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, position_ids=None,
                past_key_values=None, token_type_ids=None, cache_position=None, inputs_embeds=None, labels=None,
                use_cache=None, logits_to_keep=0, output_attentions=None, output_hidden_states=None,
                return_dict=None, **kwargs):
        """With `labels`, the shifted cross-entropy (-100 ignored)."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model(input_ids=input_ids, pixel_values=pixel_values, token_type_ids=token_type_ids,
                             attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
                             cache_position=cache_position, output_attentions=output_attentions,
                             output_hidden_states=output_hidden_states, return_dict=True)
        logits = self.lm_head(keep_last_positions(outputs.last_hidden_state, logits_to_keep))
        loss = None
        if labels is not None:
            loss = causal_lm_loss(logits, labels, self.config.text_config.vocab_size)
        output = Gemma3CausalLMOutputWithPast(loss=loss, logits=logits, past_key_values=outputs.past_key_values,
                                              hidden_states=outputs.hidden_states, attentions=outputs.attentions,
                                              image_hidden_states=outputs.image_hidden_states)
        return output if return_dict else output.to_tuple()

    def prepare_inputs_for_generation(self, input_ids, next_sequence_length=None, past_key_values=None,
                                      attention_mask=None, inputs_embeds=None, is_first_iteration=False,
                                      pixel_values=None, use_cache=True, **kwargs):
        """The images and their token types are read on the first step only: the image tokens'
        keys and values are in the cache after it (without a cache every step runs the whole
        sequence, images included)."""
        model_inputs = super().prepare_inputs_for_generation(
            input_ids, next_sequence_length=next_sequence_length, past_key_values=past_key_values,
            attention_mask=attention_mask, inputs_embeds=inputs_embeds, is_first_iteration=is_first_iteration,
            use_cache=use_cache, **kwargs)
        if is_first_iteration or not use_cache:
            model_inputs["pixel_values"] = pixel_values
        else:
            model_inputs.pop("token_type_ids", None)
        return model_inputs


class Gemma3ForSequenceClassification(Gemma3PreTrainedModel):
    """A linear `score` read at each row's last non-padding token of Gemma3Model's output."""

    config_class = Gemma3Config
    base_model_prefix = "model"
    _checkpoint_conversion_mapping = {"^language_model.model": "model.language_model",
                                      "^vision_tower": "model.vision_tower",
                                      "^multi_modal_projector": "model.multi_modal_projector"}

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.model = Gemma3Model(config)
        self.score = nn.Linear(config.text_config.hidden_size, self.num_labels, bias=False)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.get_input_embeddings()

    def set_input_embeddings(self, value):
        self.model.set_input_embeddings(value)

    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, position_ids=None,
                past_key_values=None, inputs_embeds=None, token_type_ids=None, labels=None, use_cache=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model(input_ids, attention_mask=attention_mask, pixel_values=pixel_values,
                             position_ids=position_ids, past_key_values=past_key_values, inputs_embeds=inputs_embeds,
                             token_type_ids=token_type_ids, use_cache=use_cache, output_attentions=output_attentions,
                             output_hidden_states=output_hidden_states, return_dict=True)
        logits = last_non_pad_logits(self.config.text_config, self.score(outputs.last_hidden_state), input_ids)
        loss = sequence_classification_loss(self.config, self.num_labels, logits, labels) \
            if labels is not None else None
        output = SequenceClassifierOutputWithPast(loss=loss, logits=logits, past_key_values=outputs.past_key_values,
                                                  hidden_states=outputs.hidden_states, attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


__all__ = ["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma3ForSequenceClassification", "Gemma3Model",
           "Gemma3PreTrainedModel", "Gemma3TextForSequenceClassification", "Gemma3TextModel"]
