# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""mBART (Liu et al., 2020): BART pre-trained on many languages, written as BART's difference.

- Pre-norm layers: each sub-layer normalises its input and the residual stream is left
  unnormalised (BART normalises after each residual addition), so both stacks end with a
  LayerNorm of their own (`layer_norm`), after the layers.
- No single decoder start token: sequences end with `</s>` and their language code
  (`... </s> ro_RO`), and teacher forcing starts the decoder with that code, moved from the
  end of each row to its front (`shift_tokens_right`). Generation starts from
  `decoder_start_token_id` and forces the target language as the first token
  (`forced_bos_token_id`).
"""
from ...generation import GenerationMixin
from ..bart.modeling_bart import (
    BartDecoder,
    BartDecoderLayer,
    BartDecoderWrapper,
    BartEncoder,
    BartEncoderLayer,
    BartForCausalLM,
    BartForConditionalGeneration,
    BartForQuestionAnswering,
    BartForSequenceClassification,
    BartModel,
    BartPreTrainedModel,
)
from .configuration_mbart import MBartConfig


def shift_tokens_right(input_ids, pad_token_id):
    """Decoder inputs for teacher forcing: each row's last non-pad token (its language code)
    first, then every token but the last; -100 becomes the pad id."""
    if pad_token_id is None:
        raise ValueError("self.model.config.pad_token_id has to be defined.")
    previous = input_ids.clone().masked_fill(input_ids == -100, pad_token_id)
    index_of_eos = (previous.ne(pad_token_id).sum(dim=1) - 1).unsqueeze(-1)
    decoder_start_tokens = previous.gather(1, index_of_eos).squeeze(-1)
    shifted = previous.clone()
    shifted[:, 1:] = previous[:, :-1]
    shifted[:, 0] = decoder_start_tokens
    return shifted


class MBartEncoderLayer(BartEncoderLayer):
    normalize_before = True


class MBartDecoderLayer(BartDecoderLayer):
    normalize_before = True


class MBartPreTrainedModel(BartPreTrainedModel):
    config_class = MBartConfig
    _no_split_modules = ["MBartDecoderLayer", "MBartEncoderLayer", "MBartAttention"]


class MBartEncoder(BartEncoder, MBartPreTrainedModel):
    layer_class = MBartEncoderLayer
    has_final_layer_norm = True


class MBartDecoder(BartDecoder, MBartPreTrainedModel):
    layer_class = MBartDecoderLayer
    has_final_layer_norm = True


class MBartModel(BartModel, MBartPreTrainedModel):
    encoder_class = MBartEncoder
    decoder_class = MBartDecoder

    def shift_tokens_right(self, input_ids):
        return shift_tokens_right(input_ids, self.config.pad_token_id)


class MBartForConditionalGeneration(BartForConditionalGeneration, MBartPreTrainedModel, GenerationMixin):
    base_model_class = MBartModel


class MBartForSequenceClassification(BartForSequenceClassification, MBartPreTrainedModel):
    base_model_class = MBartModel


class MBartForQuestionAnswering(BartForQuestionAnswering, MBartPreTrainedModel):
    base_model_class = MBartModel


class MBartDecoderWrapper(BartDecoderWrapper, MBartPreTrainedModel):
    decoder_class = MBartDecoder


class MBartForCausalLM(BartForCausalLM, MBartPreTrainedModel, GenerationMixin):
    wrapper_class = MBartDecoderWrapper


__all__ = [
    "MBartDecoder",
    "MBartEncoder",
    "MBartForCausalLM",
    "MBartForConditionalGeneration",
    "MBartForQuestionAnswering",
    "MBartForSequenceClassification",
    "MBartModel",
    "MBartPreTrainedModel",
    "shift_tokens_right",
]
