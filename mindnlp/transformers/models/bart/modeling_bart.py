# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BART (Lewis et al., 2019): a denoising encoder-decoder with Hugging Face's parameter names.

Both stacks are post-norm transformers: each sub-layer (self-attention; in the decoder,
cross-attention over the encoder output; then the fc1 → activation → fc2 block) adds its
dropped-out output to its input and normalises the sum with a LayerNorm. Attention is
scaled dot-product attention with biased projections. Tokens are embedded (times
sqrt(d_model) when `scale_embedding`), positions come from a learned table whose first two
rows are never used (fairseq reserved them, so position p reads row p + 2), and the sum is
normalised (`layernorm_embedding`) before the first layer.

The pieces mBART and Marian change are hooks here: `normalize_before` on the layers (mBART
normalises each sub-layer's input instead), and on the stacks `build_embeddings`,
`build_positions`, `embed_inputs`, `has_layernorm_embedding` and `has_final_layer_norm`.
"""
import math

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...cache_utils import DynamicCache, EncoderDecoderCache, cross_attention_key_value, update_self_attention
from ...generation import GenerationMixin
from ...loss_utils import masked_lm_loss
from ...masking_utils import create_bidirectional_mask, create_causal_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward, split_heads
from ...modeling_layers import GradientCheckpointingLayer, LayerOutputs, keep_last_positions, output_flags, span_fields
from ...modeling_outputs import (
    BaseModelOutput,
    BaseModelOutputWithPastAndCrossAttentions,
    CausalLMOutputWithCrossAttentions,
    Seq2SeqLMOutput,
    Seq2SeqModelOutput,
    Seq2SeqQuestionAnsweringModelOutput,
)
from ...modeling_seq2seq import (Seq2SeqClassificationHead, encode_and_decode, eos_classification_output,
                                 require_decoder_inputs_source, seq2seq_fields, seq2seq_output_fields,
                                 shift_tokens_right)
from ...modeling_utils import PreTrainedModel
from .configuration_bart import BartConfig


class BartLearnedPositionalEmbedding(nn.Embedding):
    """Learned positions; position p reads row p + 2 (`offset`), as fairseq laid the table out."""

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__(num_embeddings + 2, embedding_dim)
        self.offset = 2

    def forward(self, position_ids):
        return super().forward(position_ids + self.offset)


class BartScaledWordEmbedding(nn.Embedding):
    """Token embeddings times `embed_scale` (sqrt(d_model) when the config scales them, else 1)."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx, embed_scale=1.0):
        super().__init__(num_embeddings, embedding_dim, padding_idx)
        self.embed_scale = embed_scale

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale


def embed_scale(config):
    return math.sqrt(config.d_model) if config.scale_embedding else 1.0


class BartAttention(nn.Module):
    """Multi-head attention with biased q/k/v/out projections; cross-attention when
    `key_value_states` (the encoder output) are given.

    With an EncoderDecoderCache, self-attention keys accumulate in its self-attention half;
    cross-attention keys are projected at the first decoding step and read back after.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, is_decoder=False, bias=True, is_causal=False, config=None,
                 layer_idx=None):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(
                f"embed_dim must be divisible by num_heads (got `embed_dim`: {embed_dim} and `num_heads`: {num_heads})."
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.head_dim = embed_dim // num_heads
        self.config = config
        self.scaling = self.head_dim ** -0.5
        self.is_decoder = is_decoder
        self.is_causal = is_causal
        self.layer_idx = layer_idx
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, hidden_states, key_value_states=None, past_key_values=None, attention_mask=None,
                output_attentions=False, **kwargs):
        """Returns (output, attention probabilities or None)."""
        batch_size, target_length = hidden_states.shape[:2]
        query = split_heads(self.q_proj(hidden_states), self.head_dim)
        if key_value_states is not None:
            key, value = cross_attention_key_value(past_key_values, self.layer_idx, lambda: (
                split_heads(self.k_proj(key_value_states), self.head_dim),
                split_heads(self.v_proj(key_value_states), self.head_dim)))
        else:
            key, value = update_self_attention(past_key_values, split_heads(self.k_proj(hidden_states), self.head_dim),
                                               split_heads(self.v_proj(hidden_states), self.head_dim), self.layer_idx)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, attention_mask, scaling=self.scaling,
                                    dropout=self.dropout if self.training else 0.0)
        return self.out_proj(output.reshape(batch_size, target_length, -1)), weights


def _clamp_float16(hidden_states):
    """Bring float16 activations that overflowed back to finite values (HF's guard)."""
    if hidden_states.dtype == core.float16 and bool((~core.isfinite(hidden_states)).any()):
        limit = core.finfo(core.float16).max - 1000
        return hidden_states.clamp(min=-limit, max=limit)
    return hidden_states


class BartLayer(GradientCheckpointingLayer):
    """What the encoder and decoder layers share: the residual sub-layer and the feed-forward block.

    `normalize_before` False (BART, Marian) normalises the sum after each residual addition;
    True (mBART) normalises each sub-layer's input and leaves the residual stream unnormalised.
    """

    normalize_before = False
    attention_class = BartAttention

    def _build_feed_forward(self, config, ffn_dim, bias=True, elementwise_affine=True):
        """fc1 → activation → fc2 and its norm; OPT's config may drop the linear biases and the
        norm's weights, and has no dropout after the activation."""
        self.embed_dim = config.hidden_size
        self.dropout = config.dropout
        self.activation_fn = ACT2FN[config.activation_function]
        self.activation_dropout = getattr(config, "activation_dropout", 0.0)
        self.fc1 = nn.Linear(self.embed_dim, ffn_dim, bias=bias)
        self.fc2 = nn.Linear(ffn_dim, self.embed_dim, bias=bias)
        self.final_layer_norm = nn.LayerNorm(self.embed_dim, elementwise_affine=elementwise_affine)

    def feed_forward(self, hidden_states):
        hidden_states = self.activation_fn(self.fc1(hidden_states))
        hidden_states = nn.functional.dropout(hidden_states, p=self.activation_dropout, training=self.training)
        return self.fc2(hidden_states), None

    def residual(self, norm, hidden_states, sublayer):
        """(hidden states after the sub-layer and its residual, the sub-layer's attention weights)."""
        output, weights = sublayer(norm(hidden_states) if self.normalize_before else hidden_states)
        hidden_states = hidden_states + nn.functional.dropout(output, p=self.dropout, training=self.training)
        return (hidden_states if self.normalize_before else norm(hidden_states)), weights


class BartEncoderLayer(BartLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        self.self_attn = self.attention_class(config.d_model, config.encoder_attention_heads,
                                       dropout=config.attention_dropout, config=config, layer_idx=layer_idx)
        self.self_attn_layer_norm = nn.LayerNorm(config.d_model)
        self._build_feed_forward(config, config.encoder_ffn_dim)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, **kwargs):
        """Returns (hidden states, self-attention probabilities or None)."""
        hidden_states, weights = self.residual(self.self_attn_layer_norm, hidden_states, lambda x: self.self_attn(
            x, attention_mask=attention_mask, output_attentions=output_attentions))
        hidden_states, _ = self.residual(self.final_layer_norm, hidden_states, self.feed_forward)
        return _clamp_float16(hidden_states), weights


class BartDecoderLayer(BartLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        heads, dropout = config.decoder_attention_heads, config.attention_dropout
        self.self_attn = self.attention_class(config.d_model, heads, dropout=dropout, is_decoder=True, is_causal=True,
                                       config=config, layer_idx=layer_idx)
        self.self_attn_layer_norm = nn.LayerNorm(config.d_model)
        self.encoder_attn = self.attention_class(config.d_model, heads, dropout=dropout, is_decoder=True, config=config,
                                          layer_idx=layer_idx)
        self.encoder_attn_layer_norm = nn.LayerNorm(config.d_model)
        self._build_feed_forward(config, config.decoder_ffn_dim)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, output_attentions=False, **kwargs):
        """Returns (hidden states, self-attention probabilities, cross-attention probabilities);
        the probabilities are None unless asked for, cross-attention's also without an encoder."""
        hidden_states, self_weights = self.residual(self.self_attn_layer_norm, hidden_states, lambda x: self.self_attn(
            x, past_key_values=past_key_values, attention_mask=attention_mask, output_attentions=output_attentions))
        cross_weights = None
        if encoder_hidden_states is not None:
            hidden_states, cross_weights = self.residual(
                self.encoder_attn_layer_norm, hidden_states, lambda x: self.encoder_attn(
                    x, key_value_states=encoder_hidden_states, past_key_values=past_key_values,
                    attention_mask=encoder_attention_mask, output_attentions=output_attentions))
        hidden_states, _ = self.residual(self.final_layer_norm, hidden_states, self.feed_forward)
        return hidden_states, self_weights, cross_weights


class BartClassificationHead(Seq2SeqClassificationHead):
    """Sentence classifier over the decoder state at the last EOS token."""


class BartPreTrainedModel(PreTrainedModel):
    config_class = BartConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _keys_to_ignore_on_load_unexpected = ["encoder.version", "decoder.version"]
    _no_split_modules = [r"BartEncoderLayer", r"BartDecoderLayer"]
    _supports_sdpa = True
    _can_compile_fullgraph = True  # HF's flag: generate() with static caches, decoding steps under core.compile

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, BartForConditionalGeneration):
            nn.init.zeros_(module.final_logits_bias)

    @property
    def dummy_inputs(self):
        pad_token = self.config.pad_token_id
        input_ids = core.tensor([[0, 6, 10, 4, 2], [0, 8, 12, 2, pad_token]], device=self.device)
        return {"attention_mask": input_ids.ne(pad_token), "input_ids": input_ids}


class BartStack(BartPreTrainedModel):
    """What the encoder and the decoder share: token and position embeddings, the norms around
    the layers, and LayerDrop (a training-time layer skip with probability `layerdrop`)."""

    layer_class = None
    has_layernorm_embedding = True
    has_final_layer_norm = False

    def _build(self, config, num_layers, layerdrop, vocab_size):
        self.dropout = config.dropout
        self.layerdrop = layerdrop
        self.padding_idx = config.pad_token_id
        self.embed_tokens = self.build_embeddings(config, vocab_size)
        self.embed_positions = self.build_positions(config)
        self.layers = nn.ModuleList([self.layer_class(config, layer_idx=i) for i in range(num_layers)])
        if self.has_layernorm_embedding:
            self.layernorm_embedding = nn.LayerNorm(config.d_model)
        if self.has_final_layer_norm:
            self.layer_norm = nn.LayerNorm(config.d_model)
        self.gradient_checkpointing = False
        self.post_init()

    def build_embeddings(self, config, vocab_size):
        return BartScaledWordEmbedding(vocab_size, config.d_model, config.pad_token_id,
                                       embed_scale=embed_scale(config))

    @staticmethod
    def position_limit(config):
        """How many positions the stack embeds (Whisper's encoder and decoder each have their own)."""
        return config.max_position_embeddings

    def build_positions(self, config):
        return BartLearnedPositionalEmbedding(self.position_limit(config), config.d_model)

    def get_input_embeddings(self):
        return self.embed_tokens

    def set_input_embeddings(self, value):
        self.embed_tokens = value

    def embed_inputs(self, input_ids, inputs_embeds):
        """Token embeddings: looked up unless given (given ones are used as they are)."""
        return self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds

    def input_hidden_states(self, inputs_embeds, position_ids):
        hidden_states = inputs_embeds + self.embed_positions(position_ids).to(inputs_embeds.dtype)
        if self.has_layernorm_embedding:
            hidden_states = self.layernorm_embedding(hidden_states)
        return nn.functional.dropout(hidden_states, p=self.dropout, training=self.training)

    def final_hidden_states(self, hidden_states):
        return self.layer_norm(hidden_states) if self.has_final_layer_norm else hidden_states

    def skips_layer(self):
        return self.training and bool(core.rand([]) < self.layerdrop)


class BartEncoder(BartStack):
    """Embeddings, `encoder_layers` bidirectional layers."""

    layer_class = BartEncoderLayer

    def __init__(self, config):
        super().__init__(config)
        self.max_source_positions = self.position_limit(config)
        self._build(config, config.encoder_layers, config.encoder_layerdrop, config.vocab_size)

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if input_ids is not None and inputs_embeds is not None:
            raise ValueError("You cannot specify both input_ids and inputs_embeds at the same time")
        if input_ids is None and inputs_embeds is None:
            raise ValueError("You have to specify either input_ids or inputs_embeds")
        if input_ids is not None:
            input_ids = input_ids.view(-1, input_ids.shape[-1])
        inputs_embeds = self.embed_inputs(input_ids, inputs_embeds)
        position_ids = core.arange(inputs_embeds.shape[1], device=inputs_embeds.device)[None, :]
        hidden_states = self.input_hidden_states(inputs_embeds, position_ids)
        mask = create_bidirectional_mask(self.config, inputs_embeds, attention_mask)

        collected = LayerOutputs(output_hidden_states, output_attentions)
        for layer in self.layers:
            collected.add_hidden(hidden_states)
            weights = None
            if not self.skips_layer():
                hidden_states, weights = layer(hidden_states, mask, output_attentions=output_attentions)
            collected.add_attentions(weights)
        return collected.output(BaseModelOutput, return_dict, self.final_hidden_states(hidden_states))


class BartDecoder(BartStack):
    """Embeddings, `decoder_layers` causal layers with cross-attention to the encoder output."""

    layer_class = BartDecoderLayer

    def __init__(self, config):
        super().__init__(config)
        self.max_target_positions = self.position_limit(config)
        self._build(config, config.decoder_layers, config.decoder_layerdrop, self.decoder_vocab_size(config))

    @staticmethod
    def decoder_vocab_size(config):
        return config.vocab_size

    def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, inputs_embeds=None, use_cache=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, cache_position=None, position_ids=None, **kwargs):
        """`position_ids` default to the tokens' places after the cached ones (`cache_position`)."""
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training:
            use_cache = False  # recomputing a layer in backward would write its keys to the cache twice
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of decoder_input_ids or decoder_inputs_embeds")
        if input_ids is not None:
            input_ids = input_ids.view(-1, input_ids.shape[-1])
        inputs_embeds = self.embed_inputs(input_ids, inputs_embeds)
        if use_cache and past_key_values is None:
            past_key_values = EncoderDecoderCache(DynamicCache(), DynamicCache()) \
                if encoder_hidden_states is not None or self.config.is_encoder_decoder else DynamicCache()
        self_cache = past_key_values.self_attention_cache \
            if isinstance(past_key_values, EncoderDecoderCache) else past_key_values
        if cache_position is None:
            past_length = self_cache.get_seq_length() if self_cache is not None else 0
            cache_position = core.arange(past_length, past_length + inputs_embeds.shape[1],
                                         device=inputs_embeds.device)
        mask = create_causal_mask(self.config, inputs_embeds, attention_mask, self_cache,
                                  cache_position=cache_position)
        encoder_mask = None
        if encoder_hidden_states is not None:
            encoder_mask = create_bidirectional_mask(self.config, inputs_embeds, encoder_attention_mask,
                                                     encoder_hidden_states=encoder_hidden_states)
        hidden_states = self.input_hidden_states(
            inputs_embeds, cache_position[None, :] if position_ids is None else position_ids)

        collected = LayerOutputs(output_hidden_states, output_attentions, encoder_hidden_states is not None)
        for layer in self.layers:
            collected.add_hidden(hidden_states)
            if self.skips_layer():
                continue
            hidden_states, weights, cross_weights = layer(
                hidden_states, mask, encoder_hidden_states, encoder_attention_mask=encoder_mask,
                past_key_values=past_key_values, output_attentions=output_attentions)
            collected.add_attentions(weights, cross_weights)
        return collected.output(BaseModelOutputWithPastAndCrossAttentions, return_dict,
                                self.final_hidden_states(hidden_states), past_key_values=past_key_values)


class BartModel(BartPreTrainedModel):
    """The bare encoder-decoder: the decoder's last hidden states. Without decoder inputs the
    decoder reads the input shifted right (BART's denoising setup)."""

    encoder_class = BartEncoder
    decoder_class = BartDecoder
    _tied_weights_keys = {
        "decoder.embed_tokens.weight": "shared.weight",
        "encoder.embed_tokens.weight": "shared.weight",
    }

    def __init__(self, config):
        super().__init__(config)
        self.build_shared_embeddings(config)
        self.encoder = self.encoder_class(config)
        self.decoder = self.decoder_class(config)
        self.post_init()

    def build_shared_embeddings(self, config):
        self.shared = BartScaledWordEmbedding(config.vocab_size, config.d_model, config.pad_token_id,
                                              embed_scale=embed_scale(config))

    def get_input_embeddings(self):
        return self.shared

    def set_input_embeddings(self, value):
        self.shared = value
        self.encoder.embed_tokens = self.shared
        self.decoder.embed_tokens = self.shared

    def shift_tokens_right(self, input_ids):
        """Decoder inputs from token ids (labels, or the input itself)."""
        return shift_tokens_right(input_ids, self.config.pad_token_id, self.config.decoder_start_token_id)

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, inputs_embeds=None, decoder_inputs_embeds=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        # The stacks share this config, and fall back to it for use_cache and the output flags.
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if decoder_input_ids is None and decoder_inputs_embeds is None:
            require_decoder_inputs_source(input_ids, decoder_input_ids, decoder_inputs_embeds)
            decoder_input_ids = self.shift_tokens_right(input_ids)
        encoder_outputs, decoder_outputs = encode_and_decode(
            self.encoder, self.decoder, encoder_outputs,
            dict(input_ids=input_ids, attention_mask=attention_mask, inputs_embeds=inputs_embeds),
            dict(input_ids=decoder_input_ids, attention_mask=decoder_attention_mask,
                 encoder_attention_mask=attention_mask, past_key_values=past_key_values,
                 inputs_embeds=decoder_inputs_embeds, use_cache=use_cache, cache_position=cache_position),
            output_attentions, output_hidden_states)
        output = Seq2SeqModelOutput(last_hidden_state=decoder_outputs.last_hidden_state,
                                    **seq2seq_fields(encoder_outputs, decoder_outputs))
        return output if return_dict else output.to_tuple()


class BartForConditionalGeneration(BartPreTrainedModel, GenerationMixin):
    """BART with its language-modelling head (tied to the shared embeddings) plus
    `final_logits_bias`, a buffer fairseq checkpoints fill (zero otherwise). With `labels`,
    the decoder inputs default to the labels shifted right and the loss is their
    cross-entropy (-100 ignored)."""

    base_model_class = BartModel
    _tied_weights_keys = {"lm_head.weight": "model.shared.weight"}
    _keys_to_ignore_on_load_missing = ["final_logits_bias"]

    def __init__(self, config):
        super().__init__(config)
        self.model = self.base_model_class(config)
        target_vocab_size = self.target_vocab_size(config)
        self.register_buffer("final_logits_bias", core.zeros((1, target_vocab_size)))
        self.lm_head = nn.Linear(config.d_model, target_vocab_size, bias=False)
        self.post_init()

    @staticmethod
    def target_vocab_size(config):
        return config.vocab_size

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None, mean_resizing=True):
        new_embeddings = super().resize_token_embeddings(new_num_tokens, pad_to_multiple_of, mean_resizing)
        self._resize_final_logits_bias(new_embeddings.weight.shape[0])
        return new_embeddings

    def _resize_final_logits_bias(self, new_num_tokens):
        """Keep one bias per vocabulary entry: cut, or extended with zeros."""
        old_num_tokens = self.final_logits_bias.shape[-1]
        if new_num_tokens <= old_num_tokens:
            new_bias = self.final_logits_bias[:, :new_num_tokens]
        else:
            extra = core.zeros((1, new_num_tokens - old_num_tokens), device=self.final_logits_bias.device)
            new_bias = core.cat([self.final_logits_bias, extra], dim=1)
        self.register_buffer("final_logits_bias", new_bias)

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, inputs_embeds=None, decoder_inputs_embeds=None,
                labels=None, use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if labels is not None:
            use_cache = False
            if decoder_input_ids is None and decoder_inputs_embeds is None:
                decoder_input_ids = self.prepare_decoder_input_ids_from_labels(labels)
        outputs = self.model(
            input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
            encoder_outputs=encoder_outputs, decoder_attention_mask=decoder_attention_mask,
            past_key_values=past_key_values, inputs_embeds=inputs_embeds, decoder_inputs_embeds=decoder_inputs_embeds,
            use_cache=use_cache, output_attentions=output_attentions, output_hidden_states=output_hidden_states,
            return_dict=True, cache_position=cache_position)
        logits = self.lm_head(outputs.last_hidden_state) + self.final_logits_bias.to(outputs.last_hidden_state.dtype)
        loss = masked_lm_loss(logits, labels, logits.shape[-1]) if labels is not None else None
        output = Seq2SeqLMOutput(loss=loss, logits=logits, **seq2seq_output_fields(outputs))
        return output if return_dict else output.to_tuple()

    def prepare_decoder_input_ids_from_labels(self, labels):
        return self.model.shift_tokens_right(labels)


class BartDecoderStateHead(BartPreTrainedModel):
    """A head that reads the decoder's states of a `BartModel` (no cache carried between calls)."""

    def _read_decoder(self, input_ids, attention_mask, decoder_input_ids, decoder_attention_mask, encoder_outputs,
                      inputs_embeds, decoder_inputs_embeds, use_cache, output_attentions, output_hidden_states,
                      cache_position):
        return self.model(
            input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=decoder_attention_mask, encoder_outputs=encoder_outputs,
            inputs_embeds=inputs_embeds, decoder_inputs_embeds=decoder_inputs_embeds, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
            cache_position=cache_position)


class BartForSequenceClassification(BartDecoderStateHead):
    """Classifies a sequence from the decoder's state at the input's last EOS token."""

    base_model_class = BartModel

    def __init__(self, config, **kwargs):
        super().__init__(config, **kwargs)
        self.model = self.base_model_class(config)
        self.classification_head = BartClassificationHead(config.d_model, config.d_model, config.num_labels,
                                                          config.classifier_dropout)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, inputs_embeds=None, decoder_inputs_embeds=None, labels=None, use_cache=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, cache_position=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if labels is not None:
            use_cache = False
        if input_ids is None and inputs_embeds is not None:
            raise NotImplementedError(f"Passing input embeddings is currently not supported for {type(self).__name__}")
        outputs = self._read_decoder(input_ids, attention_mask, decoder_input_ids, decoder_attention_mask,
                                     encoder_outputs, inputs_embeds, decoder_inputs_embeds, use_cache,
                                     output_attentions, output_hidden_states, cache_position)
        output = eos_classification_output(self.config, self.classification_head, input_ids, outputs, labels)
        return output if return_dict else output.to_tuple()


class BartForQuestionAnswering(BartDecoderStateHead):
    """Span start/end logits from the decoder's hidden states."""

    base_model_class = BartModel

    def __init__(self, config):
        super().__init__(config)
        config.num_labels = 2
        self.num_labels = config.num_labels
        self.model = self.base_model_class(config)
        self.qa_outputs = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, start_positions=None, end_positions=None, inputs_embeds=None,
                decoder_inputs_embeds=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, cache_position=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if start_positions is not None and end_positions is not None:
            use_cache = False
        outputs = self._read_decoder(input_ids, attention_mask, decoder_input_ids, decoder_attention_mask,
                                     encoder_outputs, inputs_embeds, decoder_inputs_embeds, use_cache,
                                     output_attentions, output_hidden_states, cache_position)
        output = Seq2SeqQuestionAnsweringModelOutput(
            **span_fields(self.qa_outputs, outputs.last_hidden_state, start_positions, end_positions),
            **seq2seq_output_fields(outputs))
        return output if return_dict else output.to_tuple()


class BartDecoderWrapper(BartPreTrainedModel):
    """Holds the decoder under `model.decoder`, where the encoder-decoder checkpoints keep it,
    so that BartForCausalLM loads their decoder weights."""

    decoder_class = BartDecoder

    def __init__(self, config):
        super().__init__(config)
        self.decoder = self.decoder_class(config)
        self.post_init()

    def forward(self, *args, **kwargs):
        return self.decoder(*args, **kwargs)


class BartForCausalLM(BartPreTrainedModel, GenerationMixin):
    """The decoder alone as a language model (cross-attention runs when encoder states are given)."""

    wrapper_class = BartDecoderWrapper
    _tied_weights_keys = {"lm_head.weight": "model.decoder.embed_tokens.weight"}

    def __init__(self, config):
        config.is_decoder = True
        config.is_encoder_decoder = False
        super().__init__(config)
        self.model = self.wrapper_class(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def get_input_embeddings(self):
        return self.model.decoder.embed_tokens

    def set_input_embeddings(self, value):
        self.model.decoder.embed_tokens = value

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, inputs_embeds=None, labels=None, use_cache=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, cache_position=None, logits_to_keep=0, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model.decoder(
            input_ids=input_ids, attention_mask=attention_mask, encoder_hidden_states=encoder_hidden_states,
            encoder_attention_mask=encoder_attention_mask, past_key_values=past_key_values,
            inputs_embeds=inputs_embeds, use_cache=use_cache, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states, return_dict=True, cache_position=cache_position)
        logits = self.lm_head(keep_last_positions(outputs.last_hidden_state, logits_to_keep))
        # As in HF, the labels are read as aligned with the logits (no shift here).
        loss = masked_lm_loss(logits, labels, logits.shape[-1]) if labels is not None else None
        output = CausalLMOutputWithCrossAttentions(
            loss=loss, logits=logits, past_key_values=outputs.past_key_values, hidden_states=outputs.hidden_states,
            attentions=outputs.attentions, cross_attentions=outputs.cross_attentions)
        return output if return_dict else output.to_tuple()


__all__ = [
    "BartDecoder",
    "BartEncoder",
    "BartForCausalLM",
    "BartForConditionalGeneration",
    "BartForQuestionAnswering",
    "BartForSequenceClassification",
    "BartModel",
    "BartPreTrainedModel",
    "shift_tokens_right",
]
