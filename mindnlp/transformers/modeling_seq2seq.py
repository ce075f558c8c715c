# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""What every encoder-decoder family (T5, BART, mBART, Marian) does the same way around its
encoder and decoder stacks.

The stacks differ from family to family; the plumbing between them does not: decoder inputs
made from labels by shifting them right, an encoder output a user passes as a tuple,
the fields of a `Seq2Seq...Output` gathered from both stacks, and the sentence
classification head that reads the decoder's state at the input's last EOS token.
"""
from .. import core
from ..core import nn
from .loss_utils import sequence_classification_loss
from .modeling_outputs import BaseModelOutput, Seq2SeqSequenceClassifierOutput
from .utils.generic import ModelOutput


def shift_tokens_right(input_ids, pad_token_id, decoder_start_token_id):
    """Decoder inputs for teacher forcing: `decoder_start_token_id`, then every token but the
    last; -100 (positions the loss ignores) becomes the pad id, which the embeddings know."""
    if pad_token_id is None:
        raise ValueError("self.model.config.pad_token_id has to be defined.")
    shifted = input_ids.new_zeros(input_ids.shape)
    shifted[..., 1:] = input_ids[..., :-1].clone()
    shifted[..., 0] = decoder_start_token_id
    return shifted.masked_fill(shifted == -100, pad_token_id)


def as_encoder_output(encoder_outputs):
    """A user's tuple (last hidden state, hidden states?, attentions?) as a BaseModelOutput."""
    if isinstance(encoder_outputs, ModelOutput):
        return encoder_outputs
    return BaseModelOutput(last_hidden_state=encoder_outputs[0],
                           hidden_states=encoder_outputs[1] if len(encoder_outputs) > 1 else None,
                           attentions=encoder_outputs[2] if len(encoder_outputs) > 2 else None)


def encode_and_decode(encoder, decoder, encoder_outputs, encoder_inputs, decoder_inputs, output_attentions,
                      output_hidden_states):
    """(encoder output, decoder output), both as ModelOutputs: the encoder runs over
    `encoder_inputs` unless its output is given (generation encodes once), and the decoder
    reads `decoder_inputs` while attending to the encoder's last hidden state."""
    flags = dict(output_attentions=output_attentions, output_hidden_states=output_hidden_states, return_dict=True)
    if encoder_outputs is None:
        encoder_outputs = encoder(**encoder_inputs, **flags)
    else:
        encoder_outputs = as_encoder_output(encoder_outputs)
    decoder_outputs = decoder(**decoder_inputs, encoder_hidden_states=encoder_outputs.last_hidden_state, **flags)
    return encoder_outputs, decoder_outputs


def seq2seq_fields(encoder_outputs, decoder_outputs):
    """The fields every Seq2Seq...Output takes from the two stacks' outputs."""
    return dict(past_key_values=decoder_outputs.past_key_values, decoder_hidden_states=decoder_outputs.hidden_states,
                decoder_attentions=decoder_outputs.attentions, cross_attentions=decoder_outputs.cross_attentions,
                encoder_last_hidden_state=encoder_outputs.last_hidden_state,
                encoder_hidden_states=encoder_outputs.get("hidden_states"),
                encoder_attentions=encoder_outputs.get("attentions"))


def seq2seq_output_fields(outputs):
    """The fields a head's Seq2Seq...Output carries over from the base model's Seq2SeqModelOutput."""
    return dict(past_key_values=outputs.past_key_values, decoder_hidden_states=outputs.decoder_hidden_states,
                decoder_attentions=outputs.decoder_attentions, cross_attentions=outputs.cross_attentions,
                encoder_last_hidden_state=outputs.encoder_last_hidden_state,
                encoder_hidden_states=outputs.encoder_hidden_states, encoder_attentions=outputs.encoder_attentions)


def require_decoder_inputs_source(input_ids, decoder_input_ids, decoder_inputs_embeds):
    """The heads that make the decoder's inputs from `input_ids` need one or the other."""
    if decoder_input_ids is None and decoder_inputs_embeds is None and input_ids is None:
        raise ValueError(
            "If no `decoder_input_ids` or `decoder_inputs_embeds` are passed, `input_ids` cannot be `None`. Please "
            "pass either `input_ids` or `decoder_input_ids` or `decoder_inputs_embeds`."
        )


class Seq2SeqClassificationHead(nn.Module):
    """dropout → dense → tanh → dropout → out_proj: the sentence classifier of T5 and BART."""

    def __init__(self, input_dim, inner_dim, num_classes, pooler_dropout):
        super().__init__()
        self.dense = nn.Linear(input_dim, inner_dim)
        self.dropout = nn.Dropout(p=pooler_dropout)
        self.out_proj = nn.Linear(inner_dim, num_classes)

    def forward(self, hidden_states):
        hidden_states = core.tanh(self.dense(self.dropout(hidden_states)))
        return self.out_proj(self.dropout(hidden_states))


def eos_classification_output(config, classification_head, input_ids, outputs, labels):
    """Seq2SeqSequenceClassifierOutput from the decoder's state at each row's last EOS of the
    input: the decoder has read the whole sentence there. Rows must hold equally many EOS
    tokens (HF's rule), which is what makes the gather one reshape."""
    hidden_states = outputs.last_hidden_state
    eos_mask = input_ids.eq(config.eos_token_id).to(hidden_states.device)
    eos_counts = eos_mask.sum(1)
    if bool((eos_counts != eos_counts[0]).any()):
        raise ValueError("All examples must have the same number of <eos> tokens.")
    batch_size, _, hidden_size = hidden_states.shape
    sentence_representation = hidden_states[eos_mask, :].view(batch_size, -1, hidden_size)[:, -1, :]
    logits = classification_head(sentence_representation)
    loss = sequence_classification_loss(config, config.num_labels, logits, labels) if labels is not None else None
    return Seq2SeqSequenceClassifierOutput(loss=loss, logits=logits, **seq2seq_output_fields(outputs))
