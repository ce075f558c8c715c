# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""DeBERTa-v2 and v3 (He et al., 2020/2021): BERT with disentangled attention.

What differs from BERT:
- attention scores add, to content·content, the terms `pos_att_type` names between content
  and relative position: "c2p" (query content · key-relative position embedding) and "p2c"
  (key content · query-relative position embedding), every term divided by
  sqrt(head_dim · number of terms). The relative embeddings (`encoder.rel_embeddings`,
  optionally layer-normalised) are shared by all layers and projected by each layer's own
  query/key projections (`share_att_key`, v3) or by `pos_query_proj` / `pos_key_proj`;
  distances beyond `position_buckets / 2` fall in log-scale buckets;
- the padding mask hides padded queries as well as keys (a padded row attends uniformly),
  and the embeddings are zeroed at padded positions; absolute positions and token types
  are optional (v3 has neither), and embeddings narrower than the layers are projected;
- an optional convolution (`conv_kernel_size`) runs beside the first layer;
- no pooler in the base model: the sequence and multiple-choice heads pool the first token
  with their own `ContextPooler` (dense, then `pooler_hidden_act`), and score a single label
  column with DeBERTa's own loss when `problem_type` is unset;
- the masked-LM head is BERT's (`cls.predictions`) while `legacy`, else the head HF v5 has for
  v3 (`lm_predictions.lm_head`: dense, LayerNorm, then the word embeddings and a bias).
  The original enhanced mask decoder (`mask_predictions`) is not part of HF's model: its
  weights are ignored on load, as HF ignores them.
"""
from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...loss_utils import masked_lm_loss, sequence_classification_loss
from ...modeling_layers import GradientCheckpointingLayer, head_output, output_flags
from ...modeling_outputs import BaseModelOutput, MaskedLMOutput, SequenceClassifierOutput
from ...modeling_position_buckets import log_bucket_position
from ..bert.modeling_bert import (BertForMaskedLM, BertForMultipleChoice, BertForQuestionAnswering,
                                  BertForSequenceClassification, BertForTokenClassification, BertIntermediate,
                                  BertLMPredictionHead, BertModel, BertOnlyMLMHead, BertOutput,
                                  BertPredictionHeadTransform, BertPreTrainedModel, BertSelfOutput)
from .configuration_deberta_v2 import DebertaV2Config


def relative_span(config):
    """(max_relative_positions, position_buckets, number of relative embeddings per direction)."""
    max_relative = getattr(config, "max_relative_positions", -1)
    max_relative = max_relative if max_relative >= 1 else config.max_position_embeddings
    buckets = getattr(config, "position_buckets", -1)
    return max_relative, buckets, buckets if buckets > 0 else max_relative


def build_relative_position(query_size, key_size, bucket_size=-1, max_position=-1, device=None):
    """(1, q, k) query position minus key position, log-bucketed when both limits are set."""
    relative = (core.arange(query_size, dtype=core.long, device=device)[:, None]
                - core.arange(key_size, dtype=core.long, device=device)[None, :])
    if bucket_size > 0 and max_position > 0:
        relative = log_bucket_position(relative, bucket_size, max_position)
    return relative.unsqueeze(0)


class DebertaV2Embeddings(nn.Module):
    """Word embeddings plus, when configured, absolute positions and token types; projected to
    `hidden_size` when `embedding_size` differs, LayerNorm, zeroed at padding, dropout."""

    def __init__(self, config):
        super().__init__()
        self.embedding_size = getattr(config, "embedding_size", config.hidden_size)
        self.word_embeddings = nn.Embedding(config.vocab_size, self.embedding_size, padding_idx=config.pad_token_id)
        self.position_biased_input = getattr(config, "position_biased_input", True)
        self.position_embeddings = (nn.Embedding(config.max_position_embeddings, self.embedding_size)
                                    if self.position_biased_input else None)
        self.token_type_embeddings = (nn.Embedding(config.type_vocab_size, self.embedding_size)
                                      if config.type_vocab_size > 0 else None)
        self.embed_proj = (nn.Linear(self.embedding_size, config.hidden_size, bias=False)
                           if self.embedding_size != config.hidden_size else None)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.config = config
        self.register_buffer("position_ids", core.arange(config.max_position_embeddings).expand((1, -1)),
                             persistent=False)

    def forward(self, input_ids=None, token_type_ids=None, position_ids=None, mask=None, inputs_embeds=None):
        embeddings = self.word_embeddings(input_ids) if inputs_embeds is None else inputs_embeds
        seq_length = embeddings.shape[1]
        if self.position_embeddings is not None:
            if position_ids is None:
                position_ids = self.position_ids[:, :seq_length]
            embeddings = embeddings + self.position_embeddings(position_ids.long())
        if self.token_type_embeddings is not None:
            if token_type_ids is None:
                token_type_ids = core.zeros(embeddings.shape[:2], dtype=core.long, device=embeddings.device)
            embeddings = embeddings + self.token_type_embeddings(token_type_ids)
        if self.embed_proj is not None:
            embeddings = self.embed_proj(embeddings)
        embeddings = self.LayerNorm(embeddings)
        if mask is not None:
            embeddings = embeddings * mask.unsqueeze(-1).to(embeddings.dtype)
        return self.dropout(embeddings)


class DisentangledSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        if config.hidden_size % config.num_attention_heads != 0:
            raise ValueError(f"The hidden size ({config.hidden_size}) is not a multiple of the number of attention "
                             f"heads ({config.num_attention_heads})")
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = getattr(config, "attention_head_size",
                                           config.hidden_size // config.num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query_proj = nn.Linear(config.hidden_size, self.all_head_size)
        self.key_proj = nn.Linear(config.hidden_size, self.all_head_size)
        self.value_proj = nn.Linear(config.hidden_size, self.all_head_size)
        self.share_att_key = getattr(config, "share_att_key", False)
        # "none" (old configs write "None") names no term
        self.pos_att_type = [kind for kind in config.pos_att_type or [] if kind != "none"]
        unknown = set(self.pos_att_type) - {"c2p", "p2c"}
        if unknown:
            raise ValueError(f"pos_att_type may list 'c2p' and 'p2c', not {sorted(unknown)}")
        self.relative_attention = getattr(config, "relative_attention", False)
        if self.relative_attention:
            self.max_relative_positions, self.position_buckets, self.pos_ebd_size = relative_span(config)
            self.pos_dropout = nn.Dropout(config.hidden_dropout_prob)
            if not self.share_att_key:
                if "c2p" in self.pos_att_type:
                    self.pos_key_proj = nn.Linear(config.hidden_size, self.all_head_size)
                if "p2c" in self.pos_att_type:
                    self.pos_query_proj = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)

    def heads(self, x):
        """(batch, seq, heads·d) → (batch, heads, seq, d)."""
        return x.view(tuple(x.shape[:-1]) + (self.num_attention_heads, -1)).transpose(1, 2)

    def forward(self, hidden_states, attention_mask, output_attentions=False, relative_pos=None,
                rel_embeddings=None):
        query = self.heads(self.query_proj(hidden_states))
        key = self.heads(self.key_proj(hidden_states))
        value = self.heads(self.value_proj(hidden_states))
        scale = (self.attention_head_size * (1 + len(self.pos_att_type))) ** 0.5
        scores = core.matmul(query, key.transpose(-1, -2) / scale)
        if self.relative_attention:
            scores = scores + self.disentangled_attention_bias(query, key, relative_pos,
                                                               self.pos_dropout(rel_embeddings), scale)
        scores = scores.masked_fill(~attention_mask, core.finfo(query.dtype).min)
        probs = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = core.matmul(probs, value).transpose(1, 2).contiguous()
        context = context.view(tuple(context.shape[:2]) + (-1,))
        return context, probs if output_attentions else None

    def disentangled_attention_bias(self, query, key, relative_pos, rel_embeddings, scale):
        """The c2p and p2c terms: each query (key) meets the embedding of its distance to every
        key (query), clamped to the 2·span embeddings there are."""
        if relative_pos is None:
            relative_pos = build_relative_position(query.shape[-2], key.shape[-2], self.position_buckets,
                                                   self.max_relative_positions, device=query.device)
        span = self.pos_ebd_size
        rel_embeddings = rel_embeddings[:span * 2].unsqueeze(0)
        query_proj = self.query_proj if self.share_att_key else getattr(self, "pos_query_proj", None)
        key_proj = self.key_proj if self.share_att_key else getattr(self, "pos_key_proj", None)
        relative_pos = relative_pos.reshape(relative_pos.shape[-2], relative_pos.shape[-1])
        score = 0
        if "c2p" in self.pos_att_type:
            c2p = core.matmul(query, self.heads(key_proj(rel_embeddings)).transpose(-1, -2))
            index = core.clamp(relative_pos + span, 0, span * 2 - 1)
            c2p = core.gather(c2p, -1, index.expand(tuple(c2p.shape[:2]) + tuple(index.shape)))
            score = score + c2p / scale
        if "p2c" in self.pos_att_type:
            p2c = core.matmul(key, self.heads(query_proj(rel_embeddings)).transpose(-1, -2))
            index = core.clamp(-relative_pos + span, 0, span * 2 - 1)
            p2c = core.gather(p2c, -1, index.expand(tuple(p2c.shape[:2]) + tuple(index.shape))).transpose(-1, -2)
            score = score + p2c / scale
        return score


class DebertaV2SelfOutput(BertSelfOutput):
    pass


class DebertaV2Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self = DisentangledSelfAttention(config)
        self.output = DebertaV2SelfOutput(config)
        self.config = config

    def forward(self, hidden_states, attention_mask, output_attentions=False, relative_pos=None,
                rel_embeddings=None):
        context, probs = self.self(hidden_states, attention_mask, output_attentions, relative_pos, rel_embeddings)
        return self.output(context, hidden_states), probs


class DebertaV2Intermediate(BertIntermediate):
    pass


class DebertaV2Output(BertOutput):
    pass


class DebertaV2Layer(GradientCheckpointingLayer):
    def __init__(self, config):
        super().__init__()
        self.attention = DebertaV2Attention(config)
        self.intermediate = DebertaV2Intermediate(config)
        self.output = DebertaV2Output(config)

    def forward(self, hidden_states, attention_mask, relative_pos=None, rel_embeddings=None,
                output_attentions=False):
        attention_output, probs = self.attention(hidden_states, attention_mask, output_attentions, relative_pos,
                                                 rel_embeddings)
        return self.output(self.intermediate(attention_output), attention_output), probs


class ConvLayer(nn.Module):
    """A same-length convolution over the layer's input, activated, added to the first layer's
    output and layer-normalised; padded positions stay zero."""

    def __init__(self, config):
        super().__init__()
        kernel_size = getattr(config, "conv_kernel_size", 3)
        self.conv_act = getattr(config, "conv_act", "tanh")
        self.conv = nn.Conv1d(config.hidden_size, config.hidden_size, kernel_size, padding=(kernel_size - 1) // 2,
                              groups=getattr(config, "conv_groups", 1))
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.config = config

    def forward(self, hidden_states, residual_states, input_mask):
        keep = input_mask.unsqueeze(-1).to(hidden_states.dtype)
        out = self.conv(hidden_states.permute(0, 2, 1)).permute(0, 2, 1) * keep
        out = ACT2FN[self.conv_act](self.dropout(out))
        return self.LayerNorm(residual_states + out) * keep


class DebertaV2Encoder(nn.Module):
    """BERT's layer stack with the relative embeddings and positions every layer reads."""

    def __init__(self, config):
        super().__init__()
        self.layer = nn.ModuleList([DebertaV2Layer(config) for _ in range(config.num_hidden_layers)])
        self.relative_attention = getattr(config, "relative_attention", False)
        if self.relative_attention:
            self.max_relative_positions, self.position_buckets, span = relative_span(config)
            self.rel_embeddings = nn.Embedding(span * 2, config.hidden_size)
        self.norm_rel_ebd = [kind.strip() for kind in getattr(config, "norm_rel_ebd", "none").lower().split("|")]
        if "layer_norm" in self.norm_rel_ebd:
            self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.conv = ConvLayer(config) if getattr(config, "conv_kernel_size", 0) > 0 else None
        self.gradient_checkpointing = False

    def get_rel_embedding(self):
        if not self.relative_attention:
            return None
        weight = self.rel_embeddings.weight
        return self.LayerNorm(weight) if "layer_norm" in self.norm_rel_ebd else weight

    def get_rel_pos(self, hidden_states):
        if not self.relative_attention:
            return None
        length = hidden_states.shape[-2]
        return build_relative_position(length, length, self.position_buckets, self.max_relative_positions,
                                       device=hidden_states.device)

    def forward(self, hidden_states, attention_mask, output_hidden_states=False, output_attentions=False):
        """`attention_mask` is the (batch, seq) 0/1 padding mask; a pair is allowed when both its
        query and its key are real tokens."""
        input_mask = attention_mask.to(core.bool)
        pair_mask = input_mask[:, None, None, :] & input_mask[:, None, :, None]
        relative_pos = self.get_rel_pos(hidden_states)
        rel_embeddings = self.get_rel_embedding()
        all_hidden = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        layer_input = hidden_states
        for i, layer in enumerate(self.layer):
            output, probs = layer(layer_input, pair_mask, relative_pos, rel_embeddings, output_attentions)
            if i == 0 and self.conv is not None:
                output = self.conv(hidden_states, output, attention_mask)
            if output_hidden_states:
                all_hidden += (output,)
            if output_attentions:
                all_attentions += (probs,)
            layer_input = output
        return BaseModelOutput(last_hidden_state=layer_input, hidden_states=all_hidden, attentions=all_attentions)


class ContextPooler(nn.Module):
    """`pooler_hidden_act`(dense(dropout(first token)))."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.pooler_hidden_size, config.pooler_hidden_size)
        self.dropout = nn.Dropout(config.pooler_dropout)
        self.config = config

    def forward(self, hidden_states):
        return ACT2FN[self.config.pooler_hidden_act](self.dense(self.dropout(hidden_states[:, 0])))

    @property
    def output_dim(self):
        return self.config.hidden_size


class LegacyDebertaV2PredictionHeadTransform(BertPredictionHeadTransform):
    """BERT's transform, mapping to `embedding_size` (the word embeddings' width)."""

    def __init__(self, config):
        super().__init__(config)
        self.embedding_size = getattr(config, "embedding_size", config.hidden_size)
        self.dense = nn.Linear(config.hidden_size, self.embedding_size)
        self.LayerNorm = nn.LayerNorm(self.embedding_size, eps=config.layer_norm_eps)


class LegacyDebertaV2LMPredictionHead(BertLMPredictionHead):
    def __init__(self, config):
        super().__init__(config)
        self.transform = LegacyDebertaV2PredictionHeadTransform(config)
        self.decoder = nn.Linear(self.transform.embedding_size, config.vocab_size)


class LegacyDebertaV2OnlyMLMHead(BertOnlyMLMHead):
    def __init__(self, config):
        super().__init__(config)
        self.predictions = LegacyDebertaV2LMPredictionHead(config)


class DebertaV2LMPredictionHead(BertPredictionHeadTransform):
    """BERT's transform (dense → activation → LayerNorm, under the same parameter names), scored
    against the word embeddings given to forward, plus `bias`."""

    def __init__(self, config):
        super().__init__(config)
        self.bias = nn.Parameter(core.zeros(config.vocab_size))

    def forward(self, hidden_states, word_embeddings):
        return core.matmul(super().forward(hidden_states), word_embeddings.weight.t()) + self.bias


class DebertaV2OnlyMLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.lm_head = DebertaV2LMPredictionHead(config)

    def forward(self, sequence_output, word_embeddings):
        return self.lm_head(sequence_output, word_embeddings)


class DebertaV2PreTrainedModel(BertPreTrainedModel):
    config_class = DebertaV2Config
    base_model_prefix = "deberta"
    _keys_to_ignore_on_load_unexpected = ["position_embeddings"]
    _supports_sdpa = False

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, (LegacyDebertaV2LMPredictionHead, DebertaV2LMPredictionHead)):
            nn.init.zeros_(module.bias)
        elif isinstance(module, DebertaV2Embeddings):
            with core.no_grad():
                module.position_ids.copy_(core.arange(module.position_ids.shape[-1]).expand((1, -1)))


class DebertaV2Model(BertModel, DebertaV2PreTrainedModel):
    """Embeddings → encoder, no pooler; the padding mask goes to both as it is."""

    _no_split_modules = ["DebertaV2Embeddings", "DebertaV2Layer"]
    embeddings_class = DebertaV2Embeddings
    encoder_class = DebertaV2Encoder
    pooler_class = None

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, output_attentions=None, output_hidden_states=None, return_dict=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        shape = tuple((input_ids if input_ids is not None else inputs_embeds).shape[:2])
        device = (input_ids if input_ids is not None else inputs_embeds).device
        if attention_mask is None:
            attention_mask = core.ones(shape, dtype=core.long, device=device)
        elif attention_mask.ndim != 2:
            raise ValueError(f"DeBERTa-v2 takes a (batch, seq) padding mask, got shape {tuple(attention_mask.shape)}")
        embedding_output = self.embeddings(input_ids=input_ids, token_type_ids=token_type_ids,
                                           position_ids=position_ids, mask=attention_mask,
                                           inputs_embeds=inputs_embeds)
        output = self.encoder(embedding_output, attention_mask, output_hidden_states=output_hidden_states,
                              output_attentions=output_attentions)
        return output if return_dict else output.to_tuple()


class DebertaV2ForMaskedLM(BertForMaskedLM, DebertaV2PreTrainedModel):
    base_model_class = DebertaV2Model
    _keys_to_ignore_on_load_unexpected = [r"mask_predictions.*"]
    _tied_weights_keys = {
        "cls.predictions.decoder.bias": "cls.predictions.bias",
        "cls.predictions.decoder.weight": "deberta.embeddings.word_embeddings.weight",
    }

    def __init__(self, config):
        self.legacy = config.legacy
        if not self.legacy:
            # Scored against the word embeddings directly; HF names the tie all the same.
            self._tied_weights_keys = {"lm_predictions.lm_head.weight": "deberta.embeddings.word_embeddings.weight"}
        super().__init__(config)

    def build_prediction_head(self, config):
        if self.legacy:
            self.cls = LegacyDebertaV2OnlyMLMHead(config)
        else:
            self.lm_predictions = DebertaV2OnlyMLMHead(config)

    def prediction_head(self):
        return self.cls.predictions if self.legacy else self.lm_predictions.lm_head

    def predict_tokens(self, sequence_output):
        if self.legacy:
            return self.cls(sequence_output)
        return self.lm_predictions(sequence_output, self.deberta.embeddings.word_embeddings)

    def get_output_embeddings(self):
        return self.cls.predictions.decoder if self.legacy else self.lm_predictions.lm_head.dense

    def set_output_embeddings(self, new_embeddings):
        head = self.prediction_head()
        if self.legacy:
            head.decoder = new_embeddings
        else:
            head.dense = new_embeddings
        head.bias = new_embeddings.bias

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        scores = self.predict_tokens(outputs[0])
        loss = masked_lm_loss(scores, labels, self.config.vocab_size) if labels is not None else None
        return head_output(MaskedLMOutput, outputs, return_dict, loss=loss, logits=scores)


def deberta_classification_loss(config, logits, labels):
    """With `problem_type` unset, DeBERTa's own loss: mean squared error for one label column,
    cross-entropy over the rows whose class label is not negative, or cross-entropy against
    soft labels given as one row of scores per example; else the loss `problem_type` names."""
    if config.problem_type is not None:
        return sequence_classification_loss(config, config.num_labels, logits, labels)
    if config.num_labels == 1:
        return nn.functional.mse_loss(logits.view(-1).to(labels.dtype), labels.view(-1))
    if labels.ndim == 1 or labels.shape[-1] == 1:
        labels = labels.view(-1).long()
        kept = labels >= 0
        if not bool(kept.any()):
            return core.zeros((), dtype=logits.dtype, device=logits.device)
        return nn.functional.cross_entropy(logits[kept].float(), labels[kept])
    return -(nn.functional.log_softmax(logits, dim=-1) * labels).sum(-1).mean()


class DebertaV2ForSequenceClassification(BertForSequenceClassification, DebertaV2PreTrainedModel):
    """dropout(`cls_dropout`, else `hidden_dropout_prob`) → classifier on the ContextPooler's output."""

    base_model_class = DebertaV2Model

    def build_classifier(self, config):
        self._build_base_model(config)
        self.pooler = ContextPooler(config)
        self.classifier = nn.Linear(self.pooler.output_dim, config.num_labels)
        dropout = getattr(config, "cls_dropout", None)
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)

    def classify(self, outputs):
        return self.classifier(self.dropout(self.pooler(outputs[0])))

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        logits = self.classify(outputs)
        loss = deberta_classification_loss(self.config, logits, labels) if labels is not None else None
        return head_output(SequenceClassifierOutput, outputs, return_dict, loss=loss, logits=logits)


class DebertaV2ForTokenClassification(BertForTokenClassification, DebertaV2PreTrainedModel):
    base_model_class = DebertaV2Model


class DebertaV2ForQuestionAnswering(BertForQuestionAnswering, DebertaV2PreTrainedModel):
    base_model_class = DebertaV2Model


class DebertaV2ForMultipleChoice(BertForMultipleChoice, DebertaV2PreTrainedModel):
    """Each choice summarised by the ContextPooler, then dropout(`cls_dropout`)."""

    base_model_class = DebertaV2Model

    def build_summary(self, config):
        self.pooler = ContextPooler(config)
        dropout = getattr(config, "cls_dropout", None)
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)

    def summarize(self, outputs):
        return self.dropout(self.pooler(outputs[0]))


__all__ = [
    "DebertaV2ForMaskedLM", "DebertaV2ForMultipleChoice", "DebertaV2ForQuestionAnswering",
    "DebertaV2ForSequenceClassification", "DebertaV2ForTokenClassification", "DebertaV2Model",
    "DebertaV2PreTrainedModel",
]
