# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DistilBERT (Sanh et al., 2019): a 6-layer student of BERT, with Hugging Face's parameter names.

The block is BERT's (post-norm self-attention and feed-forward) under its own names
(`q_lin`/`k_lin`/`v_lin`/`out_lin`, `sa_layer_norm`, `ffn.lin1`/`lin2`, `output_layer_norm`).
There are no token types and no pooler: classification heads read the first token through
`pre_classifier` + ReLU. Position embeddings are learned, or fixed sinusoids with
`config.sinusoidal_pos_embds`.
"""
from .... import core
from ....core import nn
from ...activations import get_activation
from ...loss_utils import masked_lm_loss
from ...masking_utils import create_bidirectional_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward
from ...modeling_layers import (GenericHead, GradientCheckpointingLayer, head_output, output_flags,
                                sequence_classification_output, span_prediction, token_classification_output)
from ...modeling_outputs import BaseModelOutput, MaskedLMOutput, MultipleChoiceModelOutput
from ...modeling_utils import PreTrainedModel
from ...padding_free import DENSE_ROWS, encoder_layout
from ...pytorch_utils import apply_chunking_to_forward
from .configuration_distilbert import DistilBertConfig


def _create_sinusoidal_embeddings(n_pos, dim, out):
    """Fill `out` (n_pos, dim) with the table of "Attention is all you need": sin on even columns,
    cos on odd ones, at angle pos / 10000^(2*(j//2)/dim); computed in float64. Returns `out`."""
    positions = core.arange(n_pos, dtype=core.float64).unsqueeze(1)
    pair_index = core.div(core.arange(dim, dtype=core.int64), 2, rounding_mode="floor").to(core.float64)
    angles = positions / core.pow(10000.0, 2 * pair_index / dim)
    table = core.where(core.arange(dim) % 2 == 0, core.sin(angles), core.cos(angles))
    with core.no_grad():
        out.copy_(table)
    return out


class Embeddings(nn.Module):
    """Word + position embeddings, then LayerNorm and dropout."""

    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.dim, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.dim)
        self.LayerNorm = nn.LayerNorm(config.dim, eps=1e-12)
        self.dropout = nn.Dropout(config.dropout)
        self.register_buffer("position_ids", core.arange(config.max_position_embeddings).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids=None, inputs_embeds=None, position_ids=None):
        if input_ids is not None:
            inputs_embeds = self.word_embeddings(input_ids)
        seq_length = inputs_embeds.shape[1]
        if position_ids is None:
            position_ids = self.position_ids[:, :seq_length]
        embeddings = inputs_embeds + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class DistilBertSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.n_heads = config.n_heads
        self.dim = config.dim
        if self.dim % self.n_heads != 0:
            raise ValueError(f"self.n_heads: {self.n_heads} must divide self.dim: {self.dim} evenly")
        self.attention_head_size = self.dim // self.n_heads
        self.scaling = self.attention_head_size ** -0.5
        self.q_lin = nn.Linear(config.dim, config.dim)
        self.k_lin = nn.Linear(config.dim, config.dim)
        self.v_lin = nn.Linear(config.dim, config.dim)
        self.out_lin = nn.Linear(config.dim, config.dim)
        self.dropout = nn.Dropout(p=config.attention_dropout)
        self.is_causal = False

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, rows=DENSE_ROWS):
        """`rows` lays out packed tokens (padding_free) as the padded batch for the attention alone."""
        query = rows.unpack(self.q_lin(hidden_states))
        input_shape = tuple(query.shape[:-1])
        head_shape = input_shape + (-1, self.attention_head_size)
        query = query.view(head_shape).transpose(1, 2)
        key = rows.unpack(self.k_lin(hidden_states)).view(head_shape).transpose(1, 2)
        value = rows.unpack(self.v_lin(hidden_states)).view(head_shape).transpose(1, 2)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, attention_mask,
                                    dropout=self.dropout.p if self.training else 0.0, scaling=self.scaling)
        return self.out_lin(rows.pack(output.reshape(input_shape + (-1,)))), weights


class FFN(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dropout = nn.Dropout(p=config.dropout)
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1
        self.lin1 = nn.Linear(config.dim, config.hidden_dim)
        self.lin2 = nn.Linear(config.hidden_dim, config.dim)
        self.activation = get_activation(config.activation)

    def forward(self, input):
        return apply_chunking_to_forward(self.ff_chunk, self.chunk_size_feed_forward, self.seq_len_dim, input)

    def ff_chunk(self, input):
        return self.dropout(self.lin2(self.activation(self.lin1(input))))


class TransformerBlock(GradientCheckpointingLayer):
    def __init__(self, config):
        super().__init__()
        if config.dim % config.n_heads != 0:
            raise ValueError(f"config.n_heads {config.n_heads} must divide config.dim {config.dim} evenly")
        self.attention = DistilBertSelfAttention(config)
        self.sa_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.ffn = FFN(config)
        self.output_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, rows=DENSE_ROWS):
        attention_output, weights = self.attention(hidden_states, attention_mask,
                                                   output_attentions=output_attentions, rows=rows)
        attention_output = self.sa_layer_norm(attention_output + hidden_states)
        output = self.output_layer_norm(self.ffn(attention_output) + attention_output)
        return output, weights


class Transformer(nn.Module):
    """The stack of blocks; given packed `rows` (padding_free), as BertEncoder."""

    supports_padding_free = True

    def __init__(self, config):
        super().__init__()
        self.n_layers = config.n_layers
        self.layer = nn.ModuleList([TransformerBlock(config) for _ in range(config.n_layers)])
        self.gradient_checkpointing = False

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, output_hidden_states=False,
                rows=DENSE_ROWS):
        all_hidden = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        hidden_states = rows.pack(hidden_states)
        for layer in self.layer:
            hidden_states, weights = layer(hidden_states, attention_mask, output_attentions, rows=rows)
            if output_hidden_states:
                all_hidden += (hidden_states,)
            if output_attentions:
                all_attentions += (weights,)
        return BaseModelOutput(last_hidden_state=rows.unpack(hidden_states), hidden_states=all_hidden,
                               attentions=all_attentions)


class DistilBertPreTrainedModel(PreTrainedModel):
    config_class = DistilBertConfig
    base_model_prefix = "distilbert"
    supports_gradient_checkpointing = True
    _supports_sdpa = True

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, Embeddings):
            with core.no_grad():
                if self.config.sinusoidal_pos_embds:
                    _create_sinusoidal_embeddings(self.config.max_position_embeddings, self.config.dim,
                                                  module.position_embeddings.weight)
                module.position_ids.copy_(core.arange(module.position_ids.shape[-1]).expand((1, -1)))


class DistilBertModel(DistilBertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.embeddings = Embeddings(config)
        self.transformer = Transformer(config)
        self.post_init()

    def get_position_embeddings(self):
        return self.embeddings.position_embeddings

    def resize_position_embeddings(self, new_num_position_embeddings):
        """Grow or shrink the position table. Learned rows are kept and new rows keep the fresh
        layer's N(0, 1) values, as in HF; sinusoids are recomputed for the new length."""
        old_num = self.config.max_position_embeddings
        if new_num_position_embeddings == old_num:
            return
        self.config.max_position_embeddings = new_num_position_embeddings
        old_weight = self.embeddings.position_embeddings.weight
        new_embeddings = nn.Embedding(new_num_position_embeddings, self.config.dim, dtype=old_weight.dtype,
                                      device=old_weight.device)
        with core.no_grad():
            if self.config.sinusoidal_pos_embds:
                _create_sinusoidal_embeddings(new_num_position_embeddings, self.config.dim, new_embeddings.weight)
            else:
                kept = min(old_num, new_num_position_embeddings)
                new_embeddings.weight[:kept] = old_weight[:kept]
        self.embeddings.position_embeddings = new_embeddings
        self.embeddings.register_buffer("position_ids", core.arange(new_num_position_embeddings).expand((1, -1)),
                                        persistent=False)

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, new_embeddings):
        self.embeddings.word_embeddings = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, position_ids=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, padding_rows_unread=False,
                **kwargs):
        """`padding_rows_unread`: as BertModel's, the caller reads no padding row of the output."""
        config = self.config
        output_attentions, output_hidden_states, return_dict = output_flags(
            config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        embeddings = self.embeddings(input_ids, inputs_embeds, position_ids)
        mask = create_bidirectional_mask(config, embeddings, attention_mask)
        output = self.transformer(embeddings, attention_mask=mask, output_attentions=output_attentions,
                                  output_hidden_states=output_hidden_states,
                                  **encoder_layout(self.transformer, attention_mask, padding_rows_unread,
                                                   output_attentions or output_hidden_states))
        return output if return_dict else output.to_tuple()


class _DistilBertHead(GenericHead):
    """Heads expose the base model's position embeddings, as HF's DistilBERT heads do, and
    encode their inputs the same way."""

    base_model_class = DistilBertModel

    def get_position_embeddings(self):
        return self.distilbert.get_position_embeddings()

    def resize_position_embeddings(self, new_num_position_embeddings):
        self.distilbert.resize_position_embeddings(new_num_position_embeddings)

    def _encode(self, input_ids, attention_mask, inputs_embeds, position_ids, kwargs, **options):
        return self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, inputs_embeds=inputs_embeds,
                                    position_ids=position_ids, **options)


class DistilBertForMaskedLM(_DistilBertHead, DistilBertPreTrainedModel):
    _tied_weights_keys = {"vocab_projector.weight": "distilbert.embeddings.word_embeddings.weight"}

    def __init__(self, config):
        super().__init__(config)
        self.activation = get_activation(config.activation)
        self._build_base_model(config)
        self.vocab_transform = nn.Linear(config.dim, config.dim)
        self.vocab_layer_norm = nn.LayerNorm(config.dim, eps=1e-12)
        self.vocab_projector = nn.Linear(config.dim, config.vocab_size)
        self.post_init()

    def get_output_embeddings(self):
        return self.vocab_projector

    def set_output_embeddings(self, new_embeddings):
        self.vocab_projector = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, position_ids=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._encode(input_ids, attention_mask, inputs_embeds, position_ids, kwargs)
        hidden = self.activation(self.vocab_transform(outputs[0]))
        logits = self.vocab_projector(self.vocab_layer_norm(hidden))
        loss = masked_lm_loss(logits, labels, logits.shape[-1]) if labels is not None else None
        return head_output(MaskedLMOutput, outputs, return_dict, loss=loss, logits=logits)


class DistilBertForSequenceClassification(_DistilBertHead, DistilBertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.config = config
        self._build_base_model(config)
        self.pre_classifier = nn.Linear(config.dim, config.dim)
        self.classifier = nn.Linear(config.dim, config.num_labels)
        self.dropout = nn.Dropout(config.seq_classif_dropout)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, position_ids=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._encode(input_ids, attention_mask, inputs_embeds, position_ids, kwargs, padding_rows_unread=True)
        pooled = nn.functional.relu(self.pre_classifier(outputs[0][:, 0]))
        output = sequence_classification_output(self.config, self.classifier(self.dropout(pooled)), labels, outputs)
        return output if return_dict else output.to_tuple()


class DistilBertForQuestionAnswering(_DistilBertHead, DistilBertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.qa_outputs = nn.Linear(config.dim, config.num_labels)
        if config.num_labels != 2:
            raise ValueError(f"config.num_labels should be 2, but it is {config.num_labels}")
        self.dropout = nn.Dropout(config.qa_dropout)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, start_positions=None,
                end_positions=None, position_ids=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._encode(input_ids, attention_mask, inputs_embeds, position_ids, kwargs)
        output = span_prediction(self.qa_outputs, self.dropout(outputs[0]), start_positions, end_positions, outputs)
        return output if return_dict else output.to_tuple()


class DistilBertForTokenClassification(_DistilBertHead, DistilBertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config)
        self.dropout = nn.Dropout(config.dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, position_ids=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._encode(input_ids, attention_mask, inputs_embeds, position_ids, kwargs)
        output = token_classification_output(self.classifier(self.dropout(outputs[0])), labels, outputs)
        return output if return_dict else output.to_tuple()


class DistilBertForMultipleChoice(_DistilBertHead, DistilBertPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.pre_classifier = nn.Linear(config.dim, config.dim)
        self.classifier = nn.Linear(config.dim, 1)
        self.dropout = nn.Dropout(config.seq_classif_dropout)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, inputs_embeds=None, labels=None, position_ids=None,
                return_dict=None, **kwargs):
        """Inputs are (batch, num_choices, seq); every choice is encoded on its own and scored."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        num_choices = input_ids.shape[1] if input_ids is not None else inputs_embeds.shape[1]
        if input_ids is not None:
            input_ids = input_ids.reshape(-1, input_ids.shape[-1])
        if attention_mask is not None:
            attention_mask = attention_mask.reshape(-1, attention_mask.shape[-1])
        if inputs_embeds is not None:
            inputs_embeds = inputs_embeds.reshape(-1, inputs_embeds.shape[-2], inputs_embeds.shape[-1])
        outputs = self._encode(input_ids, attention_mask, inputs_embeds, position_ids, kwargs, padding_rows_unread=True)
        pooled = nn.functional.relu(self.pre_classifier(outputs[0][:, 0]))
        logits = self.classifier(self.dropout(pooled)).view(-1, num_choices)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return head_output(MultipleChoiceModelOutput, outputs, return_dict, loss=loss, logits=logits)


__all__ = [
    "DistilBertForMaskedLM", "DistilBertForMultipleChoice", "DistilBertForQuestionAnswering",
    "DistilBertForSequenceClassification", "DistilBertForTokenClassification", "DistilBertModel",
    "DistilBertPreTrainedModel",
]
