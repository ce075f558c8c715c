# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Marian (Junczys-Dowmunt et al., 2018), the OPUS-MT translation models, written as BART's
difference.

- Positions are fixed sinusoids (sines in the first half of each vector, cosines in the
  second), computed rather than stored: checkpoints do not hold them.
- No LayerNorm after the embeddings; token embeddings are plain and the stack multiplies them
  by sqrt(d_model) when `scale_embedding` (the decoder also scales embeddings it is given).
- The decoder starts from the pad token (`decoder_start_token_id = pad`).
- With `share_encoder_decoder_embeddings` False the decoder has a vocabulary of its own
  (`decoder_vocab_size`) and the LM head predicts over it.
"""

from .... import core
from ....core import nn
from ...generation import GenerationMixin
from ..bart.modeling_bart import (
    BartDecoder,
    BartDecoderWrapper,
    BartEncoder,
    BartForCausalLM,
    BartForConditionalGeneration,
    BartModel,
    BartPreTrainedModel,
    embed_scale,
    shift_tokens_right,
)
from .configuration_marian import MarianConfig


class MarianSinusoidalPositionalEmbedding(nn.Embedding):
    """A table of sinusoidal position vectors, frozen; position p reads row p."""

    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__(num_positions, embedding_dim)
        self.weight.requires_grad_(False)

    def create_weight(self):
        """Row p, column j: sin(p / 10000^(2i/dim)) for j = i in the first half, cos of the same
        angle for j = half + i in the second (XLM's table without interleaving)."""
        n_positions, dim = self.weight.shape
        half = (dim + 1) // 2
        positions = core.arange(n_positions, dtype=core.float64)[:, None]
        angles = positions / core.pow(10000.0, core.arange(0, dim, 2, dtype=core.float64) / dim)[None, :]
        table = core.cat([core.sin(angles[:, :half]), core.cos(angles[:, : dim - half])], dim=1)
        return table.to(self.weight.dtype)


class MarianPreTrainedModel(BartPreTrainedModel):
    config_class = MarianConfig
    _no_split_modules = None

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, MarianSinusoidalPositionalEmbedding):
            with core.no_grad():
                module.weight.copy_(module.create_weight())

    @property
    def dummy_inputs(self):
        inputs = super().dummy_inputs
        inputs["decoder_input_ids"] = inputs["input_ids"]
        return inputs


class MarianStack:
    """Marian's embeddings, mixed into BART's encoder and decoder."""

    has_layernorm_embedding = False

    def build_embeddings(self, config, vocab_size):
        self.embed_scale = embed_scale(config)
        return nn.Embedding(vocab_size, config.d_model, config.pad_token_id)

    def build_positions(self, config):
        return MarianSinusoidalPositionalEmbedding(config.max_position_embeddings, config.d_model)


class MarianEncoder(MarianStack, BartEncoder, MarianPreTrainedModel):
    def embed_inputs(self, input_ids, inputs_embeds):
        """Looked-up embeddings are scaled; given ones are used as they are (as HF)."""
        return self.embed_tokens(input_ids) * self.embed_scale if inputs_embeds is None else inputs_embeds


class MarianDecoder(MarianStack, BartDecoder, MarianPreTrainedModel):
    @staticmethod
    def decoder_vocab_size(config):
        return config.decoder_vocab_size

    def embed_inputs(self, input_ids, inputs_embeds):
        """Embeddings are scaled whether looked up or given (as HF)."""
        return (self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds) * self.embed_scale


class MarianModel(BartModel, MarianPreTrainedModel):
    encoder_class = MarianEncoder
    decoder_class = MarianDecoder
    _keys_to_ignore_on_load_missing = ["encoder.embed_positions.weight", "decoder.embed_positions.weight"]

    def build_shared_embeddings(self, config):
        """One matrix for both stacks only when the vocabularies are shared."""
        if config.share_encoder_decoder_embeddings:
            self.shared = nn.Embedding(config.vocab_size, config.d_model, config.pad_token_id)
        else:
            self._tied_weights_keys = None

    def get_input_embeddings(self):
        return self.encoder.get_input_embeddings()

    def set_input_embeddings(self, value):
        if self.config.share_encoder_decoder_embeddings:
            super().set_input_embeddings(value)
        else:
            self.encoder.embed_tokens = value

    def get_decoder_input_embeddings(self):
        if self.config.share_encoder_decoder_embeddings:
            raise ValueError(
                "`get_decoder_input_embeddings` should not be called if `config.share_encoder_decoder_embeddings` "
                "is `True`. Please use `get_input_embeddings` instead."
            )
        return self.decoder.get_input_embeddings()

    def set_decoder_input_embeddings(self, value):
        if self.config.share_encoder_decoder_embeddings:
            raise ValueError(
                "`config.share_encoder_decoder_embeddings` is set to `True` meaning the decoder input embeddings "
                "are shared with the encoder. In order to set the decoder input embeddings, you should simply set "
                "the encoder input embeddings by calling `set_input_embeddings` with the appropriate embeddings."
            )
        self.decoder.embed_tokens = value

    def resize_decoder_token_embeddings(self, new_num_tokens):
        """Resize the decoder's own vocabulary (unshared vocabularies only)."""
        if self.config.share_encoder_decoder_embeddings:
            raise ValueError(
                "`resize_decoder_token_embeddings` should not be called if `config.share_encoder_decoder_embeddings` "
                "is `True`. Please use `resize_token_embeddings` instead."
            )
        embeddings = self.get_decoder_input_embeddings()
        if new_num_tokens is None:
            return embeddings
        self._resize_embedding_rows(embeddings, new_num_tokens, True)
        self.config.decoder_vocab_size = new_num_tokens
        self.tie_weights()
        return embeddings


class MarianMTModel(BartForConditionalGeneration, MarianPreTrainedModel, GenerationMixin):
    """Marian with its LM head (over the decoder's vocabulary) and `final_logits_bias`."""

    base_model_class = MarianModel
    _keys_to_ignore_on_load_missing = [
        "final_logits_bias",
        "model.encoder.embed_positions.weight",
        "model.decoder.embed_positions.weight",
    ]
    _keys_to_ignore_on_save = ["model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight"]
    _tied_weights_keys = {"lm_head.weight": "model.decoder.embed_tokens.weight"}

    def __init__(self, config):
        if config.share_encoder_decoder_embeddings:
            self._tied_weights_keys = {
                "lm_head.weight": "model.shared.weight",
                "model.decoder.embed_tokens.weight": "model.shared.weight",
                "model.encoder.embed_tokens.weight": "model.shared.weight",
            }
        super().__init__(config)

    @staticmethod
    def target_vocab_size(config):
        return config.vocab_size if config.share_encoder_decoder_embeddings else config.decoder_vocab_size

    def resize_token_embeddings(self, new_num_tokens=None, pad_to_multiple_of=None, mean_resizing=True):
        """Resizes the encoder's (shared) vocabulary; the head and its bias follow only when the
        decoder shares it."""
        if self.config.share_encoder_decoder_embeddings:
            embeddings = super().resize_token_embeddings(new_num_tokens, pad_to_multiple_of, mean_resizing)
            self.config.decoder_vocab_size = embeddings.weight.shape[0]
            return embeddings
        embeddings = self.get_input_embeddings()
        if new_num_tokens is not None:
            self._resize_embedding_rows(embeddings, new_num_tokens, mean_resizing)
            self.config.vocab_size = new_num_tokens
        return embeddings

    def resize_decoder_token_embeddings(self, new_num_tokens):
        """Resize the decoder's own vocabulary, its head and `final_logits_bias` (unshared vocabularies only)."""
        embeddings = self.model.resize_decoder_token_embeddings(new_num_tokens)
        if new_num_tokens is None:
            return embeddings
        if not self.config.tie_word_embeddings:
            self._resize_lm_head_rows(self.lm_head, new_num_tokens, True)
        self.tie_weights()
        self._resize_final_logits_bias(new_num_tokens)
        return embeddings


class MarianDecoderWrapper(BartDecoderWrapper, MarianPreTrainedModel):
    decoder_class = MarianDecoder


class MarianForCausalLM(BartForCausalLM, MarianPreTrainedModel, GenerationMixin):
    wrapper_class = MarianDecoderWrapper


__all__ = ["MarianForCausalLM", "MarianModel", "MarianMTModel", "MarianPreTrainedModel", "shift_tokens_right"]
