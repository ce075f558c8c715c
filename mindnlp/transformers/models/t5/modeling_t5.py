# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""T5 (Raffel et al., 2020): an encoder-decoder transformer with Hugging Face's parameter names.

Both stacks are pre-norm: each sub-layer (self-attention; in the decoder, cross-attention
over the encoder output; then the feed-forward block) normalises its input with an RMS
norm (no mean subtraction, no bias, computed in float32) and adds its output back.
Attention scores are q·k with no 1/sqrt(d) scaling; positions enter only as a learned bias
per head and relative-distance bucket, computed by the first layer of each stack and
reused by the others (`position_bias`, which also carries the padding or causal mask).

v1.0 checkpoints use a ReLU feed-forward block and a head tied to the embeddings whose
input is rescaled by d_model**-0.5; v1.1, Flan-T5 and mT5 use a gated GELU block and an
untied head without the rescale (see T5Config).
"""
import copy

from .... import core
from ....core import nn
from ...activations import ACT2FN, gated_activation
from ...cache_utils import DynamicCache, EncoderDecoderCache
from ...generation import GenerationMixin
from ...loss_utils import masked_lm_loss
from ...masking_utils import create_bidirectional_mask, create_causal_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward, split_heads
from ...modeling_layers import GradientCheckpointingLayer, LayerOutputs, output_flags, span_fields
from ...modeling_position_buckets import bucket_bias, bucket_bias_at, relative_position_bucket
from ...modeling_outputs import (
    BaseModelOutputWithPastAndCrossAttentions,
    Seq2SeqLMOutput,
    Seq2SeqModelOutput,
    Seq2SeqQuestionAnsweringModelOutput,
    TokenClassifierOutput,
)
from ...modeling_seq2seq import (Seq2SeqClassificationHead, encode_and_decode, eos_classification_output,
                                 require_decoder_inputs_source, seq2seq_fields, shift_tokens_right)
from ...modeling_utils import PreTrainedModel
from .configuration_t5 import T5Config


class T5LayerNorm(nn.Module):
    """weight · x / sqrt(mean(x²) + eps): RMS normalisation, accumulated in float32; the
    result is cast to the weight's dtype when that is half precision (as HF)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(core.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        shape = (hidden_states.shape[-1],)
        if hidden_states.dtype == core.float32 and self.weight.dtype == core.float32:
            return nn.functional.rms_norm(hidden_states, shape, self.weight, eps=self.variance_epsilon)
        normed = nn.functional.rms_norm(hidden_states.float(), shape, eps=self.variance_epsilon)
        if self.weight.dtype in (core.float16, core.bfloat16):
            normed = normed.to(self.weight.dtype)
        return self.weight * normed

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}"


def _to_weight_dtype(hidden_states, linear):
    """The input of `wo` in its weight's dtype: `wo` stays float32 in a half-precision model
    (`_keep_in_fp32_modules`), because Flan-T5's activations overflow float16 there."""
    if hidden_states.dtype != linear.weight.dtype:
        return hidden_states.to(linear.weight.dtype)
    return hidden_states


class T5DenseActDense(nn.Module):
    """wo(dropout(act(wi(x)))): the v1.0 feed-forward block."""

    def __init__(self, config):
        super().__init__()
        self.wi = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wo = nn.Linear(config.d_ff, config.d_model, bias=False)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.act = ACT2FN[config.dense_act_fn]

    def forward(self, hidden_states):
        hidden_states = self.dropout(self.act(self.wi(hidden_states)))
        return self.wo(_to_weight_dtype(hidden_states, self.wo))


class T5DenseGatedActDense(nn.Module):
    """wo(dropout(act(wi_0(x)) · wi_1(x))): the gated block of v1.1, Flan-T5 and mT5."""

    def __init__(self, config):
        super().__init__()
        self.wi_0 = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wi_1 = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wo = nn.Linear(config.d_ff, config.d_model, bias=False)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.act = ACT2FN[config.dense_act_fn]

    def forward(self, hidden_states):
        hidden_states = gated_activation(self.act, self.wi_0(hidden_states), self.wi_1(hidden_states))
        hidden_states = self.dropout(hidden_states)
        return self.wo(_to_weight_dtype(hidden_states, self.wo))


class T5LayerFF(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.DenseReluDense = T5DenseGatedActDense(config) if config.is_gated_act else T5DenseActDense(config)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states):
        return hidden_states + self.dropout(self.DenseReluDense(self.layer_norm(hidden_states)))


class T5Attention(nn.Module):
    """Multi-head attention without score scaling; self-attention, or cross-attention when
    `key_value_states` (the encoder output) are given.

    With an EncoderDecoderCache, self-attention keys grow in its self-attention part and
    the cross-attention keys are projected once, at the first step, and reused after.
    """

    def __init__(self, config, has_relative_attention_bias=False, layer_idx=None):
        super().__init__()
        self.config = config
        self.is_decoder = config.is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = config.relative_attention_num_buckets
        self.relative_attention_max_distance = config.relative_attention_max_distance
        self.d_model = config.d_model
        self.key_value_proj_dim = config.d_kv
        self.n_heads = config.num_heads
        self.dropout = config.dropout_rate
        self.inner_dim = self.n_heads * self.key_value_proj_dim
        self.layer_idx = layer_idx
        self.q = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.k = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.v = nn.Linear(self.d_model, self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, self.d_model, bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)
        self.gradient_checkpointing = False

    _relative_position_bucket = staticmethod(relative_position_bucket)

    def compute_bias(self, query_length, key_length, device=None, past_length=0, cache_position=None):
        """(1, heads, query_length, key_length) learned bias; query i sits at position past_length + i,
        or at cache_position[i] when that tensor is given (HF's argument)."""
        if device is None:
            device = self.relative_attention_bias.weight.device
        options = dict(bidirectional=not self.is_decoder, num_buckets=self.relative_attention_num_buckets,
                       max_distance=self.relative_attention_max_distance)
        if cache_position is not None:
            return bucket_bias_at(self.relative_attention_bias, cache_position.to(device), key_length, **options)
        return bucket_bias(self.relative_attention_bias, query_length, key_length, past_length, device, **options)

    def _key_value(self, states):
        return split_heads(self.k(states), self.key_value_proj_dim), split_heads(self.v(states),
                                                                                 self.key_value_proj_dim)

    def forward(self, hidden_states, mask=None, key_value_states=None, position_bias=None, past_key_values=None,
                output_attentions=False, cache_position=None, **kwargs):
        """Returns (output, position_bias with the mask added, attention probabilities or None).

        The queries sit after the cached keys; a static cache returns its whole buffer, so
        there their positions are `cache_position`'s."""
        batch_size, seq_length = hidden_states.shape[:2]
        is_cross_attention = key_value_states is not None
        query = split_heads(self.q(hidden_states), self.key_value_proj_dim)

        cache = past_key_values
        if isinstance(past_key_values, EncoderDecoderCache):
            cache = (past_key_values.cross_attention_cache if is_cross_attention
                     else past_key_values.self_attention_cache)
        if is_cross_attention and cache is not None and past_key_values.is_updated.get(self.layer_idx):
            key = cache.layers[self.layer_idx].keys
            value = cache.layers[self.layer_idx].values
        else:
            key, value = self._key_value(key_value_states if is_cross_attention else hidden_states)
            if cache is not None:
                key, value = cache.update(key, value, self.layer_idx)
                if is_cross_attention and isinstance(past_key_values, EncoderDecoderCache):
                    past_key_values.is_updated[self.layer_idx] = True

        if position_bias is None:
            key_length = key.shape[-2]
            if self.has_relative_attention_bias:
                past_length = key_length - seq_length if not is_cross_attention else 0
                static = cache_position is not None and cache is not None and cache.is_compileable
                position_bias = self.compute_bias(seq_length, key_length, device=query.device,
                                                  past_length=past_length,
                                                  cache_position=cache_position if static else None)
            else:
                position_bias = core.zeros((1, self.n_heads, seq_length, key_length), dtype=query.dtype,
                                           device=query.device)
                if self.gradient_checkpointing and self.training:
                    position_bias.requires_grad_(True)
            if mask is not None:
                position_bias = position_bias + mask[:, :, :, :key_length]

        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, position_bias.to(query.dtype), scaling=1.0,
                                    dropout=self.dropout if self.training else 0.0)
        output = self.o(output.reshape(batch_size, seq_length, self.inner_dim))
        return output, position_bias, weights


class T5LayerSelfAttention(nn.Module):
    def __init__(self, config, has_relative_attention_bias=False, layer_idx=None):
        super().__init__()
        self.SelfAttention = T5Attention(config, has_relative_attention_bias=has_relative_attention_bias,
                                         layer_idx=layer_idx)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states, attention_mask=None, position_bias=None, past_key_values=None,
                output_attentions=False, cache_position=None, **kwargs):
        output, position_bias, weights = self.SelfAttention(
            self.layer_norm(hidden_states), mask=attention_mask, position_bias=position_bias,
            past_key_values=past_key_values, output_attentions=output_attentions, cache_position=cache_position)
        return hidden_states + self.dropout(output), position_bias, weights


class T5LayerCrossAttention(nn.Module):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        self.EncDecAttention = T5Attention(config, has_relative_attention_bias=False, layer_idx=layer_idx)
        self.layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, hidden_states, key_value_states, attention_mask=None, position_bias=None,
                past_key_values=None, output_attentions=False, **kwargs):
        output, position_bias, weights = self.EncDecAttention(
            self.layer_norm(hidden_states), mask=attention_mask, key_value_states=key_value_states,
            position_bias=position_bias, past_key_values=past_key_values, output_attentions=output_attentions)
        return hidden_states + self.dropout(output), position_bias, weights


def _clamp_float16(hidden_states):
    """Keep float16 activations finite (HF's guard for half-precision training): clamp to the
    largest float16, 1000 below it once an inf has appeared."""
    if hidden_states.dtype != core.float16:
        return hidden_states
    limit = core.finfo(core.float16).max
    if bool(core.isinf(hidden_states).any()):
        limit -= 1000
    return hidden_states.clamp(min=-limit, max=limit)


class T5Block(GradientCheckpointingLayer):
    """Self-attention, cross-attention (decoder with an encoder output only), feed-forward."""

    def __init__(self, config, has_relative_attention_bias=False, layer_idx=None):
        super().__init__()
        self.is_decoder = config.is_decoder
        self.layer = nn.ModuleList()
        self.layer.append(T5LayerSelfAttention(config, has_relative_attention_bias=has_relative_attention_bias,
                                               layer_idx=layer_idx))
        if self.is_decoder:
            self.layer.append(T5LayerCrossAttention(config, layer_idx=layer_idx))
        self.layer.append(T5LayerFF(config))

    def forward(self, hidden_states, attention_mask=None, position_bias=None, encoder_hidden_states=None,
                encoder_attention_mask=None, encoder_decoder_position_bias=None, past_key_values=None,
                output_attentions=False, cache_position=None, **kwargs):
        """Returns (hidden states, self-attention bias, self-attention probabilities,
        cross-attention bias, cross-attention probabilities); the last two are None without
        cross-attention, probabilities None unless asked for."""
        hidden_states, self_bias, self_weights = self.layer[0](
            hidden_states, attention_mask=attention_mask, position_bias=position_bias,
            past_key_values=past_key_values, output_attentions=output_attentions, cache_position=cache_position)
        hidden_states = _clamp_float16(hidden_states)
        cross_bias = cross_weights = None
        if self.is_decoder and encoder_hidden_states is not None:
            hidden_states, cross_bias, cross_weights = self.layer[1](
                hidden_states, key_value_states=encoder_hidden_states, attention_mask=encoder_attention_mask,
                position_bias=encoder_decoder_position_bias, past_key_values=past_key_values,
                output_attentions=output_attentions)
            hidden_states = _clamp_float16(hidden_states)
        hidden_states = _clamp_float16(self.layer[-1](hidden_states))
        return hidden_states, self_bias, self_weights, cross_bias, cross_weights


class T5ClassificationHead(Seq2SeqClassificationHead):
    def __init__(self, config):
        super().__init__(config.d_model, config.d_model, config.num_labels, config.classifier_dropout)


class T5PreTrainedModel(PreTrainedModel):
    config_class = T5Config
    base_model_prefix = "transformer"
    supports_gradient_checkpointing = True
    _no_split_modules = ["T5Block"]
    _keep_in_fp32_modules = ["wo"]
    _can_compile_fullgraph = True  # HF's flag: generate() with static caches, decoding steps under core.compile

    def _init_weights(self, module):
        """HF's T5 initialisation: every matrix is normal with a std of initializer_factor
        times the inverse square root of its fan-in (embeddings: std = factor), norms at factor."""
        super()._init_weights(module)
        factor = self.config.initializer_factor
        d_model, d_kv, n_heads = self.config.d_model, self.config.d_kv, self.config.num_heads

        def normal(linear, std):
            nn.init.normal_(linear.weight, mean=0.0, std=std)
            if getattr(linear, "bias", None) is not None:
                nn.init.zeros_(linear.bias)

        if isinstance(module, T5LayerNorm):
            nn.init.constant_(module.weight, factor * 1.0)
        elif isinstance(module, (T5Model, T5ForConditionalGeneration, T5EncoderModel, T5ForQuestionAnswering)):
            nn.init.normal_(module.shared.weight, mean=0.0, std=factor * 1.0)
            if hasattr(module, "lm_head") and not self.config.tie_word_embeddings:
                nn.init.normal_(module.lm_head.weight, mean=0.0, std=factor * 1.0)
            if hasattr(module, "qa_outputs"):
                normal(module.qa_outputs, factor * d_model ** -0.5)
        elif isinstance(module, T5ForTokenClassification):
            normal(module.classifier, factor * 1.0)
        elif isinstance(module, T5ClassificationHead):
            normal(module.dense, factor * d_model ** -0.5)
            normal(module.out_proj, factor * d_model ** -0.5)
        elif isinstance(module, T5DenseActDense):
            normal(module.wi, factor * d_model ** -0.5)
            normal(module.wo, factor * self.config.d_ff ** -0.5)
        elif isinstance(module, T5DenseGatedActDense):
            normal(module.wi_0, factor * d_model ** -0.5)
            normal(module.wi_1, factor * d_model ** -0.5)
            normal(module.wo, factor * self.config.d_ff ** -0.5)
        elif isinstance(module, T5Attention):
            normal(module.q, factor * (d_model * d_kv) ** -0.5)
            normal(module.k, factor * d_model ** -0.5)
            normal(module.v, factor * d_model ** -0.5)
            normal(module.o, factor * (n_heads * d_kv) ** -0.5)
            if module.has_relative_attention_bias:
                nn.init.normal_(module.relative_attention_bias.weight, mean=0.0, std=factor * d_model ** -0.5)

    def _shift_right(self, input_ids):
        """Decoder inputs from labels: decoder_start_token_id, then the labels but the last,
        with -100 (ignored positions) replaced by the pad id."""
        decoder_start_token_id = getattr(self.config, "decoder_start_token_id", None)
        if decoder_start_token_id is None:
            raise ValueError(
                "self.model.config.decoder_start_token_id has to be defined. In T5 it is usually set to the "
                "pad_token_id. See T5 docs for more information."
            )
        return shift_tokens_right(input_ids, self.config.pad_token_id, decoder_start_token_id)


class T5Stack(T5PreTrainedModel):
    """The encoder (config.is_decoder False) or the decoder: embeddings, blocks, final norm.
    Block 0 holds the relative attention bias the other blocks reuse."""

    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model)
        self.is_decoder = config.is_decoder
        self.block = nn.ModuleList([T5Block(config, has_relative_attention_bias=i == 0, layer_idx=i)
                                    for i in range(config.num_layers)])
        self.final_layer_norm = T5LayerNorm(config.d_model, eps=config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.post_init()
        self.gradient_checkpointing = False

    def get_input_embeddings(self):
        return self.embed_tokens

    def set_input_embeddings(self, new_embeddings):
        self.embed_tokens = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                inputs_embeds=None, past_key_values=None, use_cache=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        prefix = "decoder_" if self.is_decoder else ""
        if input_ids is not None and inputs_embeds is not None:
            raise ValueError(f"You cannot specify both {prefix}input_ids and {prefix}inputs_embeds at the same time")
        if input_ids is None and inputs_embeds is None:
            raise ValueError(f"You have to specify either {prefix}input_ids or {prefix}inputs_embeds")
        if self.gradient_checkpointing and self.training:
            use_cache = False  # recomputing a block in backward would write its keys to the cache twice
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids.view(-1, input_ids.shape[-1]))
        if use_cache and not self.is_decoder:
            raise ValueError(f"`use_cache` can only be set to `True` if {type(self).__name__} is used as a decoder")

        if self.is_decoder:
            if use_cache and past_key_values is None:
                past_key_values = EncoderDecoderCache(DynamicCache(), DynamicCache()) \
                    if self.config.is_encoder_decoder else DynamicCache()
            self_cache = past_key_values.self_attention_cache \
                if isinstance(past_key_values, EncoderDecoderCache) else past_key_values
            if cache_position is None and self_cache is not None and self_cache.is_compileable:
                # A static cache's buffer does not tell where the new tokens go: its length does.
                past_length = self_cache.get_seq_length()
                cache_position = core.arange(past_length, past_length + inputs_embeds.shape[1],
                                             device=inputs_embeds.device)
            mask = create_causal_mask(self.config, inputs_embeds, attention_mask, self_cache,
                                      cache_position=cache_position)
        else:
            past_key_values = None  # the encoder keeps no cache
            mask = create_bidirectional_mask(self.config, inputs_embeds, attention_mask)
        encoder_mask = None
        if self.is_decoder and encoder_hidden_states is not None:
            encoder_mask = create_bidirectional_mask(self.config, inputs_embeds, encoder_attention_mask,
                                                     encoder_hidden_states=encoder_hidden_states)

        collected = LayerOutputs(output_hidden_states, output_attentions, self.is_decoder)
        position_bias = encoder_decoder_position_bias = None
        hidden_states = self.dropout(inputs_embeds)
        for block in self.block:
            collected.add_hidden(hidden_states)
            hidden_states, position_bias, weights, cross_bias, cross_weights = block(
                hidden_states, mask, position_bias, encoder_hidden_states, encoder_mask,
                encoder_decoder_position_bias, past_key_values=past_key_values,
                output_attentions=output_attentions, cache_position=cache_position)
            if self.is_decoder and encoder_hidden_states is not None:
                encoder_decoder_position_bias = cross_bias
            collected.add_attentions(weights, cross_weights)
        return collected.output(BaseModelOutputWithPastAndCrossAttentions, return_dict,
                                self.dropout(self.final_layer_norm(hidden_states)), past_key_values=past_key_values)


def _stack_configs(config):
    """The encoder's and the decoder's configs: copies that say which side they build."""
    encoder_config = copy.deepcopy(config)
    encoder_config.is_decoder = False
    encoder_config.use_cache = False
    decoder_config = copy.deepcopy(config)
    decoder_config.is_decoder = True
    decoder_config.num_layers = config.num_decoder_layers
    return encoder_config, decoder_config


class _T5EncoderDecoder(T5PreTrainedModel):
    """The shared embeddings, the encoder and the decoder, and the forward pass through
    both that every encoder-decoder head of T5 starts with."""

    _keys_to_ignore_on_load_unexpected = ["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"]
    _tied_weights_keys = {
        "encoder.embed_tokens.weight": "shared.weight",
        "decoder.embed_tokens.weight": "shared.weight",
    }

    def _build_stacks(self, config):
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        encoder_config, decoder_config = _stack_configs(config)
        self.encoder = T5Stack(encoder_config)
        self.decoder = T5Stack(decoder_config)

    def get_input_embeddings(self):
        return self.shared

    def set_input_embeddings(self, new_embeddings):
        self.shared = new_embeddings
        self.encoder.set_input_embeddings(new_embeddings)
        self.decoder.set_input_embeddings(new_embeddings)

    def _encode_decode(self, input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, encoder_outputs,
                       past_key_values, inputs_embeds, decoder_inputs_embeds, use_cache, output_attentions,
                       output_hidden_states, cache_position):
        """(encoder output, decoder output), both as ModelOutputs (see encode_and_decode)."""
        return encode_and_decode(
            self.encoder, self.decoder, encoder_outputs,
            dict(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds),
            dict(input_ids=decoder_input_ids, attention_mask=decoder_attention_mask, inputs_embeds=decoder_inputs_embeds,
                 past_key_values=past_key_values, encoder_attention_mask=attention_mask, use_cache=use_cache,
                 cache_position=cache_position),
            output_attentions, output_hidden_states)


class T5Model(_T5EncoderDecoder):
    """The bare encoder-decoder: returns the decoder's last hidden states."""

    def __init__(self, config):
        super().__init__(config)
        self._build_stacks(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, inputs_embeds=None, decoder_inputs_embeds=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        encoder_outputs, decoder_outputs = self._encode_decode(
            input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, encoder_outputs, past_key_values,
            inputs_embeds, decoder_inputs_embeds, use_cache, output_attentions, output_hidden_states, cache_position)
        output = Seq2SeqModelOutput(last_hidden_state=decoder_outputs.last_hidden_state,
                                    **seq2seq_fields(encoder_outputs, decoder_outputs))
        return output if return_dict else output.to_tuple()


class T5ForConditionalGeneration(_T5EncoderDecoder, GenerationMixin):
    """T5 with its language-modelling head: next-token logits of the decoder; with `labels`,
    the decoder inputs default to the labels shifted right and the loss is their
    cross-entropy (-100 ignored)."""

    _tied_weights_keys = {
        "lm_head.weight": "shared.weight",
        "encoder.embed_tokens.weight": "shared.weight",
        "decoder.embed_tokens.weight": "shared.weight",
    }

    def __init__(self, config):
        super().__init__(config)
        self.model_dim = config.d_model
        self._build_stacks(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.post_init()

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, inputs_embeds=None, decoder_inputs_embeds=None,
                labels=None, use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if labels is not None and decoder_input_ids is None and decoder_inputs_embeds is None:
            decoder_input_ids = self._shift_right(labels)
        encoder_outputs, decoder_outputs = self._encode_decode(
            input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, encoder_outputs, past_key_values,
            inputs_embeds, decoder_inputs_embeds, use_cache, output_attentions, output_hidden_states, cache_position)
        sequence_output = decoder_outputs.last_hidden_state
        if getattr(self.config, "scale_decoder_outputs", False):
            sequence_output = sequence_output * (self.model_dim ** -0.5)
        logits = self.lm_head(sequence_output)
        loss = masked_lm_loss(logits, labels, logits.shape[-1]) if labels is not None else None
        output = Seq2SeqLMOutput(loss=loss, logits=logits, **seq2seq_fields(encoder_outputs, decoder_outputs))
        return output if return_dict else output.to_tuple()

    def prepare_decoder_input_ids_from_labels(self, labels):
        return self._shift_right(labels)


class T5EncoderModel(T5PreTrainedModel):
    """The encoder alone (sentence embeddings, token classification)."""

    _tied_weights_keys = {"encoder.embed_tokens.weight": "shared.weight"}
    _keys_to_ignore_on_load_unexpected = [r"decoder"]

    def __init__(self, config):
        super().__init__(config)
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        # HF builds the encoder from the model's own config, which so stops being an encoder-decoder's.
        config.use_cache = False
        config.is_encoder_decoder = False
        self.encoder = T5Stack(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.shared

    def set_input_embeddings(self, new_embeddings):
        self.shared = new_embeddings
        self.encoder.set_input_embeddings(new_embeddings)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, **kwargs):
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                            output_attentions=output_attentions, output_hidden_states=output_hidden_states,
                            return_dict=return_dict)


def _default_decoder_input_ids(model, input_ids, decoder_input_ids, decoder_inputs_embeds):
    """The heads that read a whole sequence feed the decoder the input shifted right when
    no decoder input is given."""
    require_decoder_inputs_source(input_ids, decoder_input_ids, decoder_inputs_embeds)
    if decoder_input_ids is not None or decoder_inputs_embeds is not None:
        return decoder_input_ids
    return model._shift_right(input_ids)


class T5ForSequenceClassification(T5PreTrainedModel):
    """Classifies a sequence from the decoder's hidden state at the last EOS token of the input."""

    _keys_to_ignore_on_load_unexpected = ["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"]

    def __init__(self, config):
        super().__init__(config)
        self.transformer = T5Model(config)
        self.classification_head = T5ClassificationHead(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, inputs_embeds=None, decoder_inputs_embeds=None, labels=None, use_cache=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if labels is not None:
            use_cache = False
        if input_ids is None and inputs_embeds is not None:
            raise NotImplementedError(f"Passing input embeddings is currently not supported for {type(self).__name__}")
        decoder_input_ids = _default_decoder_input_ids(self, input_ids, decoder_input_ids, decoder_inputs_embeds)
        outputs = self.transformer(
            input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=decoder_attention_mask, encoder_outputs=encoder_outputs,
            inputs_embeds=inputs_embeds, decoder_inputs_embeds=decoder_inputs_embeds, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True)
        output = eos_classification_output(self.config, self.classification_head, input_ids, outputs, labels)
        return output if return_dict else output.to_tuple()


class T5ForTokenClassification(T5PreTrainedModel):
    """Per-token labels from the encoder's hidden states."""

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.transformer = T5EncoderModel(config)
        self.dropout = nn.Dropout(config.classifier_dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.transformer(input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                                   output_attentions=output_attentions, output_hidden_states=output_hidden_states,
                                   return_dict=True)
        logits = self.classifier(self.dropout(outputs.last_hidden_state))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))
        output = TokenClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                       attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


class T5ForQuestionAnswering(_T5EncoderDecoder):
    """Span start/end logits from the decoder's hidden states (the decoder reads the input
    shifted right unless given its own)."""

    def __init__(self, config):
        super().__init__(config)
        self.model_dim = config.d_model
        self._build_stacks(config)
        self.num_labels = config.num_labels
        self.qa_outputs = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, start_positions=None, end_positions=None, inputs_embeds=None,
                decoder_inputs_embeds=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if start_positions is not None and end_positions is not None:
            use_cache = False
        decoder_input_ids = _default_decoder_input_ids(self, input_ids, decoder_input_ids, decoder_inputs_embeds)
        encoder_outputs, decoder_outputs = self._encode_decode(
            input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, encoder_outputs, None,
            inputs_embeds, decoder_inputs_embeds, use_cache, output_attentions, output_hidden_states, None)
        output = Seq2SeqQuestionAnsweringModelOutput(
            **span_fields(self.qa_outputs, decoder_outputs.last_hidden_state, start_positions, end_positions),
            **seq2seq_fields(encoder_outputs, decoder_outputs))
        return output if return_dict else output.to_tuple()


__all__ = [
    "T5EncoderModel",
    "T5ForConditionalGeneration",
    "T5ForQuestionAnswering",
    "T5ForSequenceClassification",
    "T5ForTokenClassification",
    "T5Model",
    "T5PreTrainedModel",
    "T5Stack",
]
