# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""OPT (Zhang et al., 2022: Open Pre-trained Transformers) with Hugging Face's parameter names
(`model.decoder.layers.N.self_attn.q_proj`, `model.decoder.layers.N.fc1`, ...).

OPT's layer is BART's decoder layer without cross-attention: attention with biased q/k/v/out
projections and no rotary embedding, then fc2(relu(fc1(x))), each a residual branch with
`dropout`; pre-norm (`do_layer_norm_before`), or BART's post-norm in opt-350m. The stack is the
shared decoder stack under the name `decoder` inside `OPTModel`, with three differences:
positions are a learned table (row p + 2 for position p, as in BART) read at the position of
each token among the unpadded ones (the cumulative sum of the attention mask), added to the
token embeddings; those embeddings may be narrower than the layers (`word_embed_proj_dim`,
opt-350m), projected in before the first layer (`project_in`) and out after the last
(`project_out`), so that the heads read the narrow width; the final norm exists only in
pre-norm models. LayerDrop (`layerdrop`) is not applied.
"""
from ....core import nn
from ...generation import GenerationMixin
from ...modeling_decoder import DecoderModel, DecoderPreTrainedModel, GenericForCausalLM
from ...modeling_layers import GenericForQuestionAnswering, GenericForSequenceClassification
from ..bart.modeling_bart import BartAttention, BartLayer, BartLearnedPositionalEmbedding
from .configuration_opt import OPTConfig


class OPTLearnedPositionalEmbedding(BartLearnedPositionalEmbedding):
    pass


class OPTAttention(BartAttention):
    def __init__(self, config, layer_idx=None):
        super().__init__(config.hidden_size, config.num_attention_heads, dropout=config.attention_dropout,
                         is_decoder=True, bias=config.enable_bias, is_causal=True, config=config, layer_idx=layer_idx)


class OPTDecoderLayer(BartLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        self.normalize_before = config.do_layer_norm_before
        self.self_attn = OPTAttention(config, layer_idx)
        self.self_attn_layer_norm = self.build_norm(config)
        self._build_feed_forward(config, config.ffn_dim, bias=config.enable_bias,
                                 elementwise_affine=config.layer_norm_elementwise_affine)

    @classmethod
    def build_norm(cls, config):
        return nn.LayerNorm(config.hidden_size, elementwise_affine=config.layer_norm_elementwise_affine)

    def forward(self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        hidden_states, weights = self.residual(self.self_attn_layer_norm, hidden_states, lambda x: self.self_attn(
            x, past_key_values=past_key_values, attention_mask=attention_mask, output_attentions=output_attentions))
        hidden_states, _ = self.residual(self.final_layer_norm, hidden_states, self.feed_forward)
        return hidden_states, weights


class OPTPreTrainedModel(DecoderPreTrainedModel):
    config_class = OPTConfig
    _no_split_modules = ["OPTDecoderLayer"]


class OPTDecoder(DecoderModel, OPTPreTrainedModel):
    layer_class = OPTDecoderLayer
    rotary_class = None
    final_norm_name = "final_layer_norm"

    def __init__(self, config):
        super().__init__(config)
        self.embed_positions = OPTLearnedPositionalEmbedding(config.max_position_embeddings, config.hidden_size)
        projected = config.word_embed_proj_dim != config.hidden_size
        self.project_out = nn.Linear(config.hidden_size, config.word_embed_proj_dim, bias=False) if projected else None
        self.project_in = nn.Linear(config.word_embed_proj_dim, config.hidden_size, bias=False) if projected else None
        if not config.do_layer_norm_before or config._remove_final_layer_norm:
            self.final_layer_norm = None

    def build_embeddings(self, config):
        return nn.Embedding(config.vocab_size, config.word_embed_proj_dim, self.padding_idx)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None, **kwargs):
        if position_ids is None and attention_mask is not None and attention_mask.ndim == 2:
            past_seen = past_key_values.get_seq_length() if past_key_values is not None else 0
            position_ids = (attention_mask.long().cumsum(1) * attention_mask - 1)[:, past_seen:]
        return super().forward(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                               past_key_values=past_key_values, **kwargs)

    def input_hidden_states(self, inputs_embeds, position_ids):
        if self.project_in is not None:
            inputs_embeds = self.project_in(inputs_embeds)
        return inputs_embeds + self.embed_positions(position_ids).to(inputs_embeds.dtype)

    def final_hidden_states(self, hidden_states):
        if self.final_layer_norm is not None:
            hidden_states = self.final_layer_norm(hidden_states)
        return hidden_states if self.project_out is None else self.project_out(hidden_states)


class OPTModel(OPTPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.decoder = OPTDecoder(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.decoder.embed_tokens

    def set_input_embeddings(self, value):
        self.decoder.embed_tokens = value

    def forward(self, input_ids=None, attention_mask=None, past_key_values=None, inputs_embeds=None, use_cache=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, position_ids=None,
                cache_position=None, **kwargs):
        """The decoder's forward, with HF's argument order."""
        return self.decoder(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                            past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
                            output_attentions=output_attentions, output_hidden_states=output_hidden_states,
                            return_dict=return_dict, cache_position=cache_position, **kwargs)


class OPTForCausalLM(GenericForCausalLM, OPTPreTrainedModel, GenerationMixin):
    base_model_class = OPTModel
    hidden_size_key = "word_embed_proj_dim"
    _tied_weights_keys = {"lm_head.weight": "model.decoder.embed_tokens.weight"}


class OPTForSequenceClassification(GenericForSequenceClassification, OPTPreTrainedModel):
    base_model_class = OPTModel
    hidden_size_key = "word_embed_proj_dim"


class OPTForQuestionAnswering(GenericForQuestionAnswering, OPTPreTrainedModel):
    base_model_class = OPTModel
    hidden_size_key = "word_embed_proj_dim"


__all__ = ["OPTForCausalLM", "OPTForQuestionAnswering", "OPTForSequenceClassification", "OPTModel",
           "OPTPreTrainedModel"]
