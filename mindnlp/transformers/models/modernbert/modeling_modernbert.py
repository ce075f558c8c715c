# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ModernBERT (Warner et al., 2024): a BERT-style encoder built from decoder-era blocks.

What differs from BERT:
- rotary positions instead of position embeddings, with one base for the global layers and
  another for the local ones (`rope_parameters` by layer type);
- layers alternate between full attention and a local window of `sliding_window` tokens on
  either side (`layer_types`); each layer's padding mask is built once per forward;
- pre-norm layers (the first layer's attention takes the normalised embeddings as they are,
  `attn_norm` is an identity there), a GeGLU feed-forward with one fused input projection
  (`Wi`, the activated half first), a fused `Wqkv`, no biases and bias-free LayerNorms by
  default, and a final LayerNorm;
- the heads share `ModernBertPredictionHead` (dense, activation, norm); classification pools
  the first token (`classifier_pooling="cls"`) or the mean over real tokens ("mean"), and so
  reads no padding row: its layers may skip them (padding_free), as BERT's classifiers do.

Hugging Face's v5 model runs padded batches only (its unpadded flash-attention path is gone):
padding is masked in every layer, and that is what this file does too.
"""
import math

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...loss_utils import masked_lm_loss
from ...masking_utils import create_bidirectional_mask, create_bidirectional_sliding_window_mask
from ...modeling_decoder import DecoderAttention
from ...modeling_layers import (GenericHead, GradientCheckpointingLayer, head_output, output_flags,
                                sequence_classification_output, span_prediction, token_classification_output)
from ...modeling_outputs import BaseModelOutput, MaskedLMOutput, MultipleChoiceModelOutput
from ...modeling_rotary import RotaryEmbedding
from ...modeling_utils import PreTrainedModel
from ...padding_free import DENSE_ROWS, encoder_layout
from .configuration_modernbert import ModernBertConfig


def layer_norm(config):
    return nn.LayerNorm(config.hidden_size, eps=config.norm_eps, bias=config.norm_bias)


class ModernBertEmbeddings(nn.Module):
    """Token embeddings, LayerNorm, dropout (no positions: those are rotary)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id)
        self.norm = layer_norm(config)
        self.drop = nn.Dropout(config.embedding_dropout)

    def forward(self, input_ids=None, inputs_embeds=None):
        embeddings = self.tok_embeddings(input_ids) if inputs_embeds is None else inputs_embeds
        return self.drop(self.norm(embeddings))


class ModernBertMLP(nn.Module):
    """Wo(drop(act(input) · gate)), input and gate the two halves of Wi(x)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.Wi = nn.Linear(config.hidden_size, int(config.intermediate_size) * 2, bias=config.mlp_bias)
        self.act = ACT2FN[config.hidden_activation]
        self.drop = nn.Dropout(config.mlp_dropout)
        self.Wo = nn.Linear(config.intermediate_size, config.hidden_size, bias=config.mlp_bias)

    def forward(self, hidden_states):
        value, gate = self.Wi(hidden_states).chunk(2, dim=-1)
        return self.Wo(self.drop(self.act(value) * gate))


class ModernBertAttention(DecoderAttention):
    """Bidirectional rotary attention with one fused `Wqkv` and an output `Wo` followed by dropout."""

    def __init__(self, config, layer_idx):
        if config.hidden_size % config.num_attention_heads != 0:
            raise ValueError(f"The hidden size ({config.hidden_size}) is not a multiple of the number of attention "
                             f"heads ({config.num_attention_heads})")
        super().__init__(config, layer_idx)
        self.is_causal = False

    def build_projections(self, config, q_size, kv_size):
        self.Wqkv = nn.Linear(config.hidden_size, q_size + 2 * kv_size, bias=config.attention_bias)
        self.Wo = nn.Linear(q_size, config.hidden_size, bias=config.attention_bias)
        self.out_drop = nn.Dropout(config.attention_dropout) if config.attention_dropout > 0 else nn.Identity()

    def project(self, hidden_states):
        qkv = self.Wqkv(hidden_states).view(tuple(hidden_states.shape[:-1]) + (3, -1, self.head_dim))
        return tuple(qkv[..., i, :, :].transpose(1, 2) for i in range(3))

    def project_output(self, attention_output):
        return self.out_drop(self.Wo(attention_output))


class ModernBertEncoderLayer(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.attn_norm = nn.Identity() if layer_idx == 0 else layer_norm(config)
        self.attn = ModernBertAttention(config, layer_idx)
        self.mlp_norm = layer_norm(config)
        self.mlp = ModernBertMLP(config)
        self.attention_type = config.layer_types[layer_idx]

    def forward(self, hidden_states, attention_mask=None, position_embeddings=None, output_attentions=False,
                rows=DENSE_ROWS):
        attention_output, weights = self.attn(self.attn_norm(hidden_states), position_embeddings, attention_mask,
                                              output_attentions=output_attentions, rows=rows)
        hidden_states = hidden_states + attention_output
        return hidden_states + self.mlp(self.mlp_norm(hidden_states)), weights


class ModernBertPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.dense = nn.Linear(config.hidden_size, config.hidden_size, config.classifier_bias)
        self.act = ACT2FN[config.classifier_activation]
        self.norm = layer_norm(config)

    def forward(self, hidden_states):
        return self.norm(self.act(self.dense(hidden_states)))


class ModernBertPreTrainedModel(PreTrainedModel):
    config_class = ModernBertConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _no_split_modules = ["ModernBertEmbeddings", "ModernBertEncoderLayer"]
    _supports_sdpa = True

    def _init_weights(self, module):
        """Truncated normals: std `initializer_range` into the blocks, scaled down by
        sqrt(2 · layers) out of them, hidden_size^-0.5 for the classifiers; zero biases; norms and
        rotary frequencies as every model has them."""
        cutoff = self.config.initializer_cutoff_factor or 3
        std_in = self.config.initializer_range
        std_out = std_in / math.sqrt(2.0 * self.config.num_hidden_layers)

        def init(layer, std):
            nn.init.trunc_normal_(layer.weight, mean=0.0, std=std, a=-cutoff * std, b=cutoff * std)
            if isinstance(layer, nn.Linear) and layer.bias is not None:
                nn.init.zeros_(layer.bias)

        if isinstance(module, ModernBertEmbeddings):
            init(module.tok_embeddings, std_in)
        elif isinstance(module, (ModernBertMLP, ModernBertAttention)):
            init(module.Wi if isinstance(module, ModernBertMLP) else module.Wqkv, std_in)
            init(module.Wo, std_out)
        elif isinstance(module, ModernBertPredictionHead):
            init(module.dense, std_out)
        elif isinstance(module, ModernBertForMaskedLM):
            init(module.decoder, std_out)
        elif isinstance(module, ModernBertClassifierHead):
            init(module.classifier, self.config.hidden_size ** -0.5)
        elif isinstance(module, (nn.LayerNorm, RotaryEmbedding)):
            super()._init_weights(module)


class ModernBertModel(ModernBertPreTrainedModel):
    """Embeddings → layers (each with its layer type's mask and rotary) → final norm."""

    supports_padding_free = True

    def __init__(self, config):
        super().__init__(config)
        self.config = config
        self.embeddings = ModernBertEmbeddings(config)
        self.layers = nn.ModuleList([ModernBertEncoderLayer(config, i) for i in range(config.num_hidden_layers)])
        self.final_norm = layer_norm(config)
        self.rotary_emb = RotaryEmbedding(config)
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self):
        return self.embeddings.tok_embeddings

    def set_input_embeddings(self, value):
        self.embeddings.tok_embeddings = value

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None,
                output_attentions=None, output_hidden_states=None, return_dict=None, padding_rows_unread=False,
                **kwargs):
        """`padding_rows_unread`: as BertModel's, the caller reads no padding row of the output."""
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        hidden_states = self.embeddings(input_ids=input_ids, inputs_embeds=inputs_embeds)
        if position_ids is None:
            position_ids = core.arange(hidden_states.shape[1], device=hidden_states.device).unsqueeze(0)
        masks = {"full_attention": create_bidirectional_mask(self.config, hidden_states, attention_mask),
                 "sliding_attention": create_bidirectional_sliding_window_mask(self.config, hidden_states,
                                                                              attention_mask)}
        rotary = self.rotary_emb.for_layer_types(hidden_states, position_ids, set(self.config.layer_types))
        rows = encoder_layout(self, attention_mask, padding_rows_unread,
                              output_attentions or output_hidden_states).get("rows", DENSE_ROWS)
        hidden_states = rows.pack(hidden_states)
        all_hidden = () if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            if output_hidden_states:
                all_hidden += (hidden_states,)
            hidden_states, weights = layer(hidden_states, masks[layer.attention_type], rotary[layer.attention_type],
                                           output_attentions, rows=rows)
            if output_attentions:
                all_attentions += (weights,)
        hidden_states = rows.unpack(self.final_norm(hidden_states))
        if output_hidden_states:
            all_hidden += (hidden_states,)  # the last layer's output is reported after the final norm, as in HF
        output = BaseModelOutput(last_hidden_state=hidden_states, hidden_states=all_hidden, attentions=all_attentions)
        return output if return_dict else output.to_tuple()


class ModernBertForMaskedLM(GenericHead, ModernBertPreTrainedModel):
    """head → decoder (tied to the token embeddings). With `sparse_prediction`, only the
    positions that have a label are scored (the logits are then (labelled tokens, vocab))."""

    base_model_class = ModernBertModel
    _tied_weights_keys = {"decoder.weight": "model.embeddings.tok_embeddings.weight"}

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.head = ModernBertPredictionHead(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=config.decoder_bias)
        self.sparse_prediction = config.sparse_prediction
        self.sparse_pred_ignore_index = config.sparse_pred_ignore_index
        self.post_init()

    def get_output_embeddings(self):
        return self.decoder

    def set_output_embeddings(self, new_embeddings):
        self.decoder = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, labels=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       inputs_embeds=inputs_embeds)
        hidden_states = outputs.last_hidden_state
        if self.sparse_prediction and labels is not None:
            labels = labels.view(-1)
            hidden_states = hidden_states.reshape(labels.shape[0], -1)
            labelled = labels != self.sparse_pred_ignore_index
            hidden_states, labels = hidden_states[labelled], labels[labelled]
        logits = self.decoder(self.head(hidden_states))
        loss = masked_lm_loss(logits, labels, self.config.vocab_size) if labels is not None else None
        return head_output(MaskedLMOutput, outputs, return_dict, loss=loss, logits=logits)


class ModernBertClassifierHead(GenericHead):
    """What the classification heads share: `head` → `drop` → `classifier` (`outputs` columns)."""

    base_model_class = ModernBertModel
    classifier_outputs = None  # None: config.num_labels

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config)
        self.head = ModernBertPredictionHead(config)
        self.drop = nn.Dropout(config.classifier_dropout)
        self.classifier = nn.Linear(config.hidden_size, self.classifier_outputs or config.num_labels)
        self.post_init()

    def score(self, hidden_states):
        return self.classifier(self.drop(self.head(hidden_states)))

    def pool(self, hidden_states, attention_mask, first_real_token=False):
        """The first token (or, with `first_real_token`, each row's first unpadded one), or the
        mean over unpadded tokens, as `classifier_pooling` says."""
        if self.config.classifier_pooling == "mean":
            if attention_mask is None:
                return hidden_states.mean(dim=1)
            mask = attention_mask.unsqueeze(-1).to(hidden_states.dtype)
            return (hidden_states * mask).sum(dim=1) / mask.sum(dim=1)
        if first_real_token and attention_mask is not None:
            rows = core.arange(hidden_states.shape[0], device=hidden_states.device)
            return hidden_states[rows, attention_mask.argmax(dim=-1)]
        return hidden_states[:, 0]


class ModernBertForSequenceClassification(ModernBertClassifierHead, ModernBertPreTrainedModel):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, labels=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       inputs_embeds=inputs_embeds, padding_rows_unread=True)
        logits = self.score(self.pool(outputs.last_hidden_state, attention_mask))
        output = sequence_classification_output(self.config, logits, labels, outputs)
        return output if return_dict else output.to_tuple()


class ModernBertForTokenClassification(ModernBertClassifierHead, ModernBertPreTrainedModel):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, labels=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       inputs_embeds=inputs_embeds)
        output = token_classification_output(self.score(outputs.last_hidden_state), labels, outputs)
        return output if return_dict else output.to_tuple()


class ModernBertForQuestionAnswering(ModernBertClassifierHead, ModernBertPreTrainedModel):
    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None,
                start_positions=None, end_positions=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, position_ids=position_ids,
                                       inputs_embeds=inputs_embeds)
        output = span_prediction(self.score, outputs.last_hidden_state, start_positions, end_positions, outputs)
        return output if return_dict else output.to_tuple()


class ModernBertForMultipleChoice(ModernBertClassifierHead, ModernBertPreTrainedModel):
    """Every choice encoded on its own and pooled (from its first unpadded token, so left
    padding works), then scored by a one-column classifier."""

    classifier_outputs = 1

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, inputs_embeds=None, labels=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        num_choices = (input_ids if input_ids is not None else inputs_embeds).shape[1]

        def flat(t, trailing=1):
            return t.reshape((-1,) + tuple(t.shape[-trailing:])) if t is not None else None

        attention_mask = flat(attention_mask)
        outputs = self._run_base_model(flat(input_ids), kwargs, attention_mask=attention_mask,
                                       position_ids=flat(position_ids), inputs_embeds=flat(inputs_embeds, 2),
                                       padding_rows_unread=True)
        pooled = self.pool(outputs.last_hidden_state, attention_mask, first_real_token=True)
        logits = self.score(pooled).view(-1, num_choices)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return head_output(MultipleChoiceModelOutput, outputs, return_dict, loss=loss, logits=logits)


__all__ = [
    "ModernBertForMaskedLM", "ModernBertForMultipleChoice", "ModernBertForQuestionAnswering",
    "ModernBertForSequenceClassification", "ModernBertForTokenClassification", "ModernBertModel",
    "ModernBertPreTrainedModel",
]
