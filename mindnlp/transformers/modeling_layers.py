# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Layer base classes and the task heads that many families share.

The heads are mixins in the manner of HF's `GenericFor...` classes: a family declares
`class LlamaForTokenClassification(GenericForTokenClassification, LlamaPreTrainedModel)` and
the head builds the family's base model under `base_model_prefix`, so its parameter names
are the family's (`model.layers.0...`, `score.weight`). The small functions above them are
the pieces of those heads that encoder and GPT-2 heads reuse with their own layer names.
"""
from .. import core
from ..core import nn
from ..core.utils.checkpoint import checkpoint
from .activations import get_activation
from .loss_utils import question_answering_loss, sequence_classification_loss
from .modeling_outputs import (QuestionAnsweringModelOutput, SequenceClassifierOutput,
                               SequenceClassifierOutputWithPast, TokenClassifierOutput)


class GradientCheckpointingLayer(nn.Module):
    """A layer whose activations are recomputed in backward when gradient checkpointing is on."""

    gradient_checkpointing = False

    def __call__(self, *args, **kwargs):
        if self.gradient_checkpointing and self.training:
            return checkpoint(super().__call__, *args, **kwargs)
        return super().__call__(*args, **kwargs)


def output_flags(config, output_attentions, output_hidden_states, return_dict):
    """Per-call output flags, falling back to the config as HF does."""
    return (
        output_attentions if output_attentions is not None else config.output_attentions,
        output_hidden_states if output_hidden_states is not None else config.output_hidden_states,
        return_dict if return_dict is not None else config.use_return_dict,
    )


class LayerOutputs:
    """What a stack of layers reports besides its last hidden state: each layer's input (and,
    once the stack ends, its output) when `output_hidden_states`, each layer's attention weights
    (and cross-attention weights, for a stack that attends to an encoder) when
    `output_attentions`; None for what was not asked for, as HF's models return."""

    def __init__(self, output_hidden_states, output_attentions, cross_attentions=False):
        self.hidden_states = () if output_hidden_states else None
        self.attentions = () if output_attentions else None
        self.cross_attentions = () if output_attentions and cross_attentions else None

    def add_hidden(self, hidden_states):
        if self.hidden_states is not None:
            self.hidden_states += (hidden_states,)

    def add_attentions(self, weights, cross_weights=None):
        if self.attentions is not None:
            self.attentions += (weights,)
        if self.cross_attentions is not None:
            self.cross_attentions += (cross_weights,)

    def output(self, output_class, return_dict, last_hidden_state, **fields):
        """`output_class` with the final state added to the hidden states; a tuple unless `return_dict`."""
        self.add_hidden(last_hidden_state)
        if self.cross_attentions is not None:
            fields["cross_attentions"] = self.cross_attentions
        output = output_class(last_hidden_state=last_hidden_state, hidden_states=self.hidden_states,
                              attentions=self.attentions, **fields)
        return output if return_dict else output.to_tuple()


def base_model_kwargs(kwargs):
    """The per-call options a head passes on to its base model (the rest are the head's own)."""
    return {k: kwargs[k] for k in ("output_attentions", "output_hidden_states", "cache_position") if k in kwargs}


def keep_last_positions(hidden_states, logits_to_keep):
    """HF's logits_to_keep: an int keeps that many last positions (0: all), a tensor lists the positions.

    Generation asks for the last position only, which skips the vocabulary projection of
    every other position of the prompt.
    """
    if isinstance(logits_to_keep, int):
        return hidden_states[:, -logits_to_keep:, :] if logits_to_keep else hidden_states
    return hidden_states[:, logits_to_keep, :]


def last_non_pad_logits(config, logits, input_ids):
    """Each row's logits at its last non-padding token (HF: the rightmost non-pad position).

    Without a pad id, or from `inputs_embeds` (where padding cannot be seen), the last
    position is read.
    """
    batch_size = logits.shape[0]
    pad_token_id = config.pad_token_id
    if pad_token_id is None and batch_size != 1:
        raise ValueError("Cannot handle batch sizes > 1 if no padding token is defined.")
    if pad_token_id is None or input_ids is None:
        last = -1
    else:
        non_pad = (input_ids != pad_token_id).to(core.int32)
        positions = core.arange(input_ids.shape[-1], dtype=core.int32, device=input_ids.device)
        last = (positions * non_pad).argmax(-1)
    return logits[core.arange(batch_size, device=logits.device), last]


def token_classifier_dropout(config):
    """`classifier_dropout`, else `hidden_dropout`, else 0.1, as HF's token-classification heads choose."""
    for name in ("classifier_dropout", "hidden_dropout"):
        if getattr(config, name, None) is not None:
            return getattr(config, name)
    return 0.1


def head_output(output_class, outputs, return_dict, **fields):
    """`output_class(**fields)` with the base model's hidden states and attentions, as a tuple
    unless `return_dict`: how every head ends."""
    output = output_class(**fields, hidden_states=outputs.hidden_states, attentions=outputs.attentions)
    return output if return_dict else output.to_tuple()


def token_classification_output(logits, labels, outputs):
    """TokenClassifierOutput with, given labels, the per-token cross-entropy (-100 ignored)."""
    loss = None
    if labels is not None:
        loss = nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]).float(), labels.view(-1),
                                           ignore_index=-100)
    return TokenClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                 attentions=outputs.attentions)


def sequence_classification_output(config, logits, labels, outputs):
    """SequenceClassifierOutput with, given labels, the loss `config.problem_type` calls for."""
    loss = sequence_classification_loss(config, config.num_labels, logits, labels) if labels is not None else None
    return SequenceClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                    attentions=outputs.attentions)


def span_fields(qa_outputs, sequence_output, start_positions=None, end_positions=None):
    """The fields of a question-answering output from a (hidden → 2) layer: start and end logits
    per token and, given both positions, the mean of their cross-entropies as `loss`."""
    start_logits, end_logits = qa_outputs(sequence_output).split(1, dim=-1)
    start_logits = start_logits.squeeze(-1).contiguous()
    end_logits = end_logits.squeeze(-1).contiguous()
    loss = None
    if start_positions is not None and end_positions is not None:
        loss = question_answering_loss(start_logits, end_logits, start_positions, end_positions)
    return dict(loss=loss, start_logits=start_logits, end_logits=end_logits)


def span_prediction(qa_outputs, sequence_output, start_positions=None, end_positions=None, outputs=None):
    """QuestionAnsweringModelOutput: `span_fields` with the base model's hidden states and attentions."""
    return QuestionAnsweringModelOutput(**span_fields(qa_outputs, sequence_output, start_positions, end_positions),
                                        hidden_states=outputs.hidden_states, attentions=outputs.attentions)


class SequenceSummary(nn.Module):
    """One vector per sequence for a multiple-choice head (GPT-2's, ELECTRA's): the state at `cls_index` (default:
    the last position), or the first/last/mean state per `config.summary_type`, then an
    optional projection (to `num_labels` or hidden size), activation and dropouts."""

    def __init__(self, config):
        super().__init__()
        self.summary_type = getattr(config, "summary_type", "last")
        if self.summary_type == "attn":
            raise NotImplementedError("summary_type='attn' is not implemented (nor is it in HF transformers)")
        self.summary = nn.Identity()
        if getattr(config, "summary_use_proj", False):
            if getattr(config, "summary_proj_to_labels", False) and config.num_labels > 0:
                num_classes = config.num_labels
            else:
                num_classes = config.hidden_size
            self.summary = nn.Linear(config.hidden_size, num_classes)
        activation = getattr(config, "summary_activation", None)
        self.activation = get_activation(activation) if activation else nn.Identity()
        first_dropout = getattr(config, "summary_first_dropout", 0) or 0
        last_dropout = getattr(config, "summary_last_dropout", 0) or 0
        self.first_dropout = nn.Dropout(first_dropout) if first_dropout > 0 else nn.Identity()
        self.last_dropout = nn.Dropout(last_dropout) if last_dropout > 0 else nn.Identity()

    def forward(self, hidden_states, cls_index=None):
        if self.summary_type == "last":
            output = hidden_states[:, -1]
        elif self.summary_type == "first":
            output = hidden_states[:, 0]
        elif self.summary_type == "mean":
            output = hidden_states.mean(dim=1)
        elif self.summary_type == "cls_index":
            hidden = hidden_states.shape[-1]
            if cls_index is None:
                index = core.full(tuple(hidden_states.shape[:-2]) + (1, hidden), hidden_states.shape[-2] - 1,
                                  dtype=core.long, device=hidden_states.device)
            else:
                index = cls_index.unsqueeze(-1).unsqueeze(-1)
                index = index.expand(tuple(index.shape[:-1]) + (hidden,))
            output = hidden_states.gather(-2, index).squeeze(-2)
        else:
            raise ValueError(f"unknown summary_type {self.summary_type!r}; choose last, first, mean or cls_index")
        return self.last_dropout(self.activation(self.summary(self.first_dropout(output))))


class GenericHead:
    """Builds the base model with the family's `base_model_class` under `base_model_prefix`,
    so that a family's head is its parent's head with another base model. The head reads
    base-model outputs as wide as the config's `hidden_size_key` (OPT: `word_embed_proj_dim`)."""

    hidden_size_key = "hidden_size"

    def _build_base_model(self, config, **options):
        setattr(self, self.base_model_prefix, self.base_model_class(config, **options))

    def _run_base_model(self, input_ids, kwargs, **inputs):
        return getattr(self, self.base_model_prefix)(input_ids, return_dict=True, **inputs,
                                                     **base_model_kwargs(kwargs))

    def _run_encoder(self, input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs,
                     **options):
        """`_run_base_model` with the inputs every BERT-style encoder head takes (and the head's `options`)."""
        return self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                    position_ids=position_ids, inputs_embeds=inputs_embeds, **options)


class GenericForSequenceClassification(GenericHead):
    """A linear `score` (no bias) read at each row's last non-padding token."""

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config)
        self.score = nn.Linear(getattr(config, self.hidden_size_key), self.num_labels, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return self.classify_last_token(input_ids, labels, return_dict, kwargs, attention_mask=attention_mask,
                                        position_ids=position_ids, past_key_values=past_key_values,
                                        inputs_embeds=inputs_embeds, use_cache=use_cache)

    def classify_last_token(self, input_ids, labels, return_dict, kwargs, **inputs):
        """The forward of every such head, whatever inputs its base model takes besides input_ids."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, **inputs)
        pooled_logits = last_non_pad_logits(self.config, self.score(outputs.last_hidden_state), input_ids)
        loss = sequence_classification_loss(self.config, self.num_labels, pooled_logits, labels) \
            if labels is not None else None
        output = SequenceClassifierOutputWithPast(loss=loss, logits=pooled_logits,
                                                  past_key_values=outputs.past_key_values,
                                                  hidden_states=outputs.hidden_states, attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


class GenericForTokenClassification(GenericHead):
    """Dropout, then a linear `score` (named `classifier_name`; GPT-NeoX's `classifier`) over
    every position."""

    classifier_name = "score"

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config)
        self.dropout = nn.Dropout(token_classifier_dropout(config))
        setattr(self, self.classifier_name, nn.Linear(getattr(config, self.hidden_size_key), config.num_labels))
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       past_key_values=past_key_values, inputs_embeds=inputs_embeds,
                                       use_cache=use_cache)
        classifier = getattr(self, self.classifier_name)
        output = token_classification_output(classifier(self.dropout(outputs.last_hidden_state)), labels, outputs)
        return output if return_dict else output.to_tuple()


class GenericForQuestionAnswering(GenericHead):
    """Span start/end logits from `qa_outputs` (hidden → 2)."""

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.qa_outputs = nn.Linear(getattr(config, self.hidden_size_key), 2)
        self.post_init()

    def get_input_embeddings(self):
        return getattr(self, self.base_model_prefix).get_input_embeddings()

    def set_input_embeddings(self, value):
        getattr(self, self.base_model_prefix).set_input_embeddings(value)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, start_positions=None, end_positions=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       past_key_values=past_key_values, inputs_embeds=inputs_embeds,
                                       use_cache=False)
        output = span_prediction(self.qa_outputs, outputs.last_hidden_state, start_positions, end_positions,
                                 outputs)
        return output if return_dict else output.to_tuple()
