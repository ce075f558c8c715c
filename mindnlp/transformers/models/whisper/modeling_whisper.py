# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Whisper (Radford et al., 2022): speech recognition as an encoder-decoder, written as
BART's difference.

- The encoder reads a log-mel spectrogram (batch, `num_mel_bins`, 3000 frames), not tokens:
  two 3-wide convolutions, each followed by GELU, the second with stride 2, turn it into 1500
  vectors. Positions are fixed sinusoids (`sinusoids`, sines then cosines) stored in a frozen
  table; the decoder's positions are learned, with no offset.
- Both stacks are pre-norm (mBART's layers) and end with a LayerNorm; there is no LayerNorm
  after the embeddings, and the key projections have no bias.
- The encoder attends everywhere: its input is always padded to 30 s, so `attention_mask`
  is taken for the feature extractor's sake and only used by SpecAugment, which masks spans
  of frames (`mask_time_prob`) and of mel channels (`mask_feature_prob`) in training.
- The LM head is `proj_out`, tied to the decoder's token embeddings, without a bias.
- Heads: the encoder-decoder for transcription (`WhisperForConditionalGeneration`, with
  Whisper's generate), the decoder alone (`WhisperForCausalLM`, the assistant of speculative
  decoding), and an audio classifier over the encoder (`WhisperForAudioClassification`).
"""
import math

from .... import core
from ....core import nn
from ...audio_utils import compute_mask_indices
from ...generation import GenerationMixin
from ...loss_utils import masked_lm_loss
from ...modeling_layers import output_flags
from ...modeling_outputs import (
    BaseModelOutput,
    CausalLMOutputWithCrossAttentions,
    Seq2SeqLMOutput,
    Seq2SeqModelOutput,
    SequenceClassifierOutput,
)
from ...modeling_seq2seq import (as_encoder_output, encode_and_decode, seq2seq_fields, seq2seq_output_fields,
                                 shift_tokens_right)
from ..bart.modeling_bart import (
    BartAttention,
    BartDecoder,
    BartDecoderLayer,
    BartDecoderWrapper,
    BartEncoder,
    BartEncoderLayer,
    BartPreTrainedModel,
)
from .configuration_whisper import WhisperConfig
from .generation_whisper import WhisperGenerationMixin


def sinusoids(length, channels, max_timescale=10000):
    """Row p: sin(p * s_i) for the first half of the channels, cos(p * s_i) for the second, with
    timescales s_i falling geometrically from 1 to 1 / `max_timescale`."""
    if channels % 2 != 0:
        raise ValueError("Number of channels has to be divisible by 2 for sinusoidal positional embeddings, got "
                         f"{channels} channels.")
    log_timescale_increment = math.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = core.exp(-log_timescale_increment * core.arange(channels // 2))
    scaled_time = core.arange(length).view(-1, 1) * inv_timescales.view(1, -1)
    return core.cat([scaled_time.sin(), scaled_time.cos()], dim=1)


class WhisperPositionalEmbedding(nn.Embedding):
    """The decoder's learned positions: position p reads row p."""

    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__(num_positions, embedding_dim)


class WhisperAttention(BartAttention):
    """BART's attention with an unbiased key projection."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, is_decoder=False, bias=True, is_causal=False,
                 layer_idx=None, config=None):
        super().__init__(embed_dim, num_heads, dropout=dropout, is_decoder=is_decoder, bias=bias,
                         is_causal=is_causal, config=config, layer_idx=layer_idx)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, hidden_states, key_value_states=None, **kwargs):
        """An encoder output whose batch differs from the decoder's is folded into the sequence
        axis at the decoder's batch size, as HF's Whisper does (its tests decode one row
        against a batch of encodings)."""
        if key_value_states is not None and key_value_states.shape[0] != hidden_states.shape[0]:
            key_value_states = key_value_states.reshape(hidden_states.shape[0], -1, key_value_states.shape[-1])
        return super().forward(hidden_states, key_value_states=key_value_states, **kwargs)


class WhisperEncoderLayer(BartEncoderLayer):
    normalize_before = True
    attention_class = WhisperAttention


class WhisperDecoderLayer(BartDecoderLayer):
    normalize_before = True
    attention_class = WhisperAttention


class WhisperPreTrainedModel(BartPreTrainedModel):
    config_class = WhisperConfig
    main_input_name = "input_features"
    input_modalities = ("audio", "text")
    _keys_to_ignore_on_load_unexpected = None
    _no_split_modules = ["WhisperEncoderLayer", "WhisperDecoderLayer"]
    _can_compile_fullgraph = True  # HF's flag: the masks are built right for static caches

    def _init_weights(self, module):
        super()._init_weights(module)
        with core.no_grad():
            if isinstance(module, WhisperEncoder):
                module.embed_positions.weight.copy_(sinusoids(*module.embed_positions.weight.shape))
            elif isinstance(module, WhisperForAudioClassification) and self.config.use_weighted_layer_sum:
                module.layer_weights.fill_(1.0 / (self.config.num_hidden_layers + 1))

    def _get_feat_extract_output_lengths(self, input_lengths):
        """Frames after the stride-2 convolution for `input_lengths` mel frames."""
        return (input_lengths - 1) // 2 + 1

    @property
    def dummy_inputs(self):
        return {self.main_input_name: core.zeros((1, self.config.num_mel_bins, 2 * self.config.max_source_positions))}


class WhisperEncoder(BartEncoder, WhisperPreTrainedModel):
    """conv1 → GELU → conv2 (stride 2) → GELU, plus the sinusoidal table, then BART's encoder
    layers over the frames and a final LayerNorm."""

    layer_class = WhisperEncoderLayer
    has_layernorm_embedding = False
    has_final_layer_norm = True

    def __init__(self, config):
        WhisperPreTrainedModel.__init__(self, config)
        self.num_mel_bins = config.num_mel_bins
        self.conv1 = nn.Conv1d(config.num_mel_bins, config.d_model, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(config.d_model, config.d_model, kernel_size=3, stride=2, padding=1)
        self.max_source_positions = config.max_source_positions
        self._build(config, config.encoder_layers, config.encoder_layerdrop, config.vocab_size)

    @staticmethod
    def position_limit(config):
        return config.max_source_positions

    def build_embeddings(self, config, vocab_size):
        """No token embeddings: the convolutions are the encoder's input layer."""
        return None

    def build_positions(self, config):
        positions = nn.Embedding(config.max_source_positions, config.d_model)
        positions.requires_grad_(False)
        return positions

    def _freeze_parameters(self):
        for param in self.parameters():
            param.requires_grad = False
        self._requires_grad = False

    def get_input_embeddings(self):
        return self.conv1

    def set_input_embeddings(self, value):
        self.conv1 = value

    def forward(self, input_features, attention_mask=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, **kwargs):
        """`input_features` (batch, num_mel_bins, 2 * max_source_positions); `attention_mask`
        is accepted and not used (the input is always a full 30 s window)."""
        expected_length = self.max_source_positions * self.conv1.stride[0] * self.conv2.stride[0]
        if input_features.shape[-1] != expected_length:
            raise ValueError(
                f"Whisper expects the mel input features to be of length {expected_length}, but found "
                f"{input_features.shape[-1]}. Make sure to pad the input mel features to {expected_length}."
            )
        frames = nn.functional.gelu(self.conv1(input_features))
        frames = nn.functional.gelu(self.conv2(frames)).permute(0, 2, 1)
        return super().forward(inputs_embeds=frames, output_attentions=output_attentions,
                               output_hidden_states=output_hidden_states, return_dict=return_dict)


class WhisperDecoder(BartDecoder, WhisperPreTrainedModel):
    """BART's decoder with plain token embeddings, learned positions without offset, pre-norm
    layers and a final LayerNorm."""

    main_input_name = "input_ids"
    layer_class = WhisperDecoderLayer
    has_layernorm_embedding = False
    has_final_layer_norm = True

    def __init__(self, config):
        super().__init__(config)
        self.max_source_positions = config.max_source_positions

    @staticmethod
    def position_limit(config):
        return config.max_target_positions

    def build_embeddings(self, config, vocab_size):
        return nn.Embedding(vocab_size, config.d_model, config.pad_token_id)

    def build_positions(self, config):
        return WhisperPositionalEmbedding(config.max_target_positions, config.d_model)


class WhisperModel(WhisperPreTrainedModel):
    """The bare encoder-decoder: the decoder's last hidden states over the audio's encoding."""

    def __init__(self, config):
        super().__init__(config)
        self.encoder = WhisperEncoder(config)
        self.decoder = WhisperDecoder(config)
        self.post_init()

    def get_input_embeddings(self):
        return self.decoder.embed_tokens

    def set_input_embeddings(self, value):
        self.decoder.embed_tokens = value

    def freeze_encoder(self):
        """Stop gradients to the encoder, so that fine-tuning trains the decoder only."""
        self.encoder._freeze_parameters()

    def _mask_input_features(self, input_features, attention_mask=None):
        """SpecAugment (Park et al., 2019) in training: zero random spans of frames, then of mel
        channels, with the config's probabilities and span lengths."""
        if not getattr(self.config, "apply_spec_augment", True) or not self.training:
            return input_features
        batch_size, channels, frames = input_features.shape
        config = self.config
        if config.mask_time_prob > 0:
            mask = compute_mask_indices((batch_size, frames), config.mask_time_prob, config.mask_time_length,
                                        attention_mask=attention_mask, min_masks=config.mask_time_min_masks)
            mask = core.tensor(mask, device=input_features.device)[:, None].expand(-1, channels, -1)
            input_features = input_features.masked_fill(mask, 0)
        if config.mask_feature_prob > 0:
            mask = compute_mask_indices((batch_size, channels), config.mask_feature_prob, config.mask_feature_length,
                                        min_masks=config.mask_feature_min_masks)
            mask = core.tensor(mask, device=input_features.device)[:, :, None]
            input_features = input_features.masked_fill(mask, 0)
        return input_features

    def forward(self, input_features=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, decoder_inputs_embeds=None, decoder_position_ids=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if encoder_outputs is None:
            input_features = self._mask_input_features(input_features, attention_mask=attention_mask)
        encoder_outputs, decoder_outputs = encode_and_decode(
            self.encoder, self.decoder, encoder_outputs, dict(input_features=input_features),
            dict(input_ids=decoder_input_ids, attention_mask=decoder_attention_mask, past_key_values=past_key_values,
                 inputs_embeds=decoder_inputs_embeds, position_ids=decoder_position_ids, use_cache=use_cache,
                 cache_position=cache_position),
            output_attentions, output_hidden_states)
        output = Seq2SeqModelOutput(last_hidden_state=decoder_outputs.last_hidden_state,
                                    **seq2seq_fields(encoder_outputs, decoder_outputs))
        return output if return_dict else output.to_tuple()


class WhisperLMHead:
    """`proj_out`, the LM head of WhisperForConditionalGeneration and WhisperForCausalLM, tied to
    the decoder's token embeddings (the input embeddings are reached through `model`, as every
    model's are)."""

    _tied_weights_keys = {"proj_out.weight": "model.decoder.embed_tokens.weight"}

    def get_output_embeddings(self):
        return self.proj_out

    def set_output_embeddings(self, new_embeddings):
        self.proj_out = new_embeddings


class WhisperForConditionalGeneration(WhisperLMHead, WhisperGenerationMixin, WhisperPreTrainedModel):
    """Whisper with `proj_out`, its LM head. With `labels`, the decoder inputs default to the
    labels shifted right (after `decoder_start_token_id`)."""

    def __init__(self, config):
        super().__init__(config)
        self.model = WhisperModel(config)
        self.proj_out = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.max_target_positions = config.max_target_positions
        self.post_init()

    def get_encoder(self):
        return self.model.encoder

    def freeze_encoder(self):
        self.model.encoder._freeze_parameters()

    def forward(self, input_features=None, attention_mask=None, decoder_input_ids=None, decoder_attention_mask=None,
                encoder_outputs=None, past_key_values=None, decoder_inputs_embeds=None, decoder_position_ids=None,
                labels=None, use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if labels is not None:
            if labels.shape[1] > self.max_target_positions:
                raise ValueError(f"Labels' sequence length {labels.shape[1]} cannot exceed the maximum allowed length "
                                 f"of {self.max_target_positions} tokens.")
            if decoder_input_ids is None and decoder_inputs_embeds is None:
                decoder_input_ids = shift_tokens_right(labels, self.config.pad_token_id,
                                                       self.config.decoder_start_token_id)
        outputs = self.model(
            input_features, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids,
            encoder_outputs=encoder_outputs, decoder_attention_mask=decoder_attention_mask,
            past_key_values=past_key_values, decoder_inputs_embeds=decoder_inputs_embeds,
            decoder_position_ids=decoder_position_ids, use_cache=use_cache, output_attentions=output_attentions,
            output_hidden_states=output_hidden_states, return_dict=True, cache_position=cache_position)
        logits = self.proj_out(outputs.last_hidden_state)
        loss = masked_lm_loss(logits, labels, self.config.vocab_size) if labels is not None else None
        output = Seq2SeqLMOutput(loss=loss, logits=logits, **seq2seq_output_fields(outputs))
        return output if return_dict else output.to_tuple()


class WhisperDecoderWrapper(BartDecoderWrapper, WhisperPreTrainedModel):
    """The decoder under `model.decoder`, where WhisperForConditionalGeneration keeps it."""

    decoder_class = WhisperDecoder

    def __init__(self, config):
        config.is_encoder_decoder = False
        super().__init__(config)

    def get_input_embeddings(self):
        return self.decoder.embed_tokens

    def set_input_embeddings(self, value):
        self.decoder.embed_tokens = value


class WhisperForCausalLM(WhisperLMHead, WhisperPreTrainedModel, GenerationMixin):
    """The decoder alone with `proj_out`; it cross-attends to `encoder_outputs` when given
    (distil-whisper's assistant models for speculative decoding)."""

    main_input_name = "input_ids"

    def __init__(self, config):
        super().__init__(config)
        config.is_encoder_decoder = False
        self.model = WhisperDecoderWrapper(config)
        self.proj_out = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()


    def forward(self, input_ids=None, attention_mask=None, encoder_outputs=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, cache_position=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if isinstance(encoder_outputs, (BaseModelOutput, tuple, list)):
            encoder_outputs = encoder_outputs[0]
        outputs = self.model.decoder(
            input_ids=input_ids, attention_mask=attention_mask, encoder_hidden_states=encoder_outputs,
            past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
            output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True,
            cache_position=cache_position)
        logits = self.proj_out(outputs.last_hidden_state)
        loss = masked_lm_loss(logits, labels, self.config.vocab_size) if labels is not None else None
        output = CausalLMOutputWithCrossAttentions(
            loss=loss, logits=logits, past_key_values=outputs.past_key_values, hidden_states=outputs.hidden_states,
            attentions=outputs.attentions, cross_attentions=outputs.cross_attentions)
        return output if return_dict else output.to_tuple()


class WhisperForAudioClassification(WhisperPreTrainedModel):
    """Classifies a clip from the encoder alone: its last hidden states (or, with
    `use_weighted_layer_sum`, a learned softmax-weighted sum of every layer's), projected to
    `classifier_proj_size` and averaged over the frames."""

    def __init__(self, config):
        super().__init__(config)
        self.encoder = WhisperEncoder(config)
        if config.use_weighted_layer_sum:
            num_layers = config.num_hidden_layers + 1  # the layers and the input embeddings
            self.layer_weights = nn.Parameter(core.ones(num_layers) / num_layers)
        self.projector = nn.Linear(config.hidden_size, config.classifier_proj_size)
        self.classifier = nn.Linear(config.classifier_proj_size, config.num_labels)
        self.post_init()

    def freeze_encoder(self):
        """Train only the projector and the classifier."""
        self.encoder._freeze_parameters()

    def get_input_embeddings(self):
        return self.encoder.get_input_embeddings()

    def set_input_embeddings(self, value):
        self.encoder.set_input_embeddings(value)

    def forward(self, input_features=None, encoder_outputs=None, labels=None, output_attentions=None,
                output_hidden_states=None, return_dict=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if self.config.use_weighted_layer_sum:
            output_hidden_states = True
        if encoder_outputs is None:
            encoder_outputs = self.encoder(input_features, output_attentions=output_attentions,
                                           output_hidden_states=output_hidden_states, return_dict=True)
        else:
            encoder_outputs = as_encoder_output(encoder_outputs)
        if self.config.use_weighted_layer_sum:
            stacked = core.stack(encoder_outputs.hidden_states, dim=1)
            weights = nn.functional.softmax(self.layer_weights, dim=-1)
            hidden_states = (stacked * weights.view(-1, 1, 1)).sum(dim=1)
        else:
            hidden_states = encoder_outputs.last_hidden_state
        logits = self.classifier(self.projector(hidden_states).mean(dim=1))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, self.config.num_labels),
                                               labels.to(logits.device).view(-1))
        output = SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=encoder_outputs.hidden_states,
                                          attentions=encoder_outputs.attentions)
        return output if return_dict else output.to_tuple()


__all__ = [
    "WhisperForAudioClassification",
    "WhisperForCausalLM",
    "WhisperForConditionalGeneration",
    "WhisperModel",
    "WhisperPreTrainedModel",
]
