# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""BERT (Devlin et al., 2018): the encoder and its heads, with Hugging Face's parameter names.

The model can also act as a decoder (`config.is_decoder`, with `add_cross_attention` for
cross-attention), as in HF transformers.
"""
from dataclasses import dataclass
from typing import Optional

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...cache_utils import DynamicCache, EncoderDecoderCache, cross_attention_key_value, update_self_attention
from ...generation import GenerationMixin
from ...loss_utils import causal_lm_loss, masked_lm_loss
from ...masking_utils import create_bidirectional_mask, create_causal_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward
from ...modeling_layers import (GenericHead, GradientCheckpointingLayer, head_output, keep_last_positions,
                                output_flags, sequence_classification_output, span_prediction,
                                token_classification_output)
from ...modeling_outputs import (BaseModelOutputWithPastAndCrossAttentions,
                                 BaseModelOutputWithPoolingAndCrossAttentions, CausalLMOutputWithCrossAttentions,
                                 MaskedLMOutput, MultipleChoiceModelOutput, NextSentencePredictorOutput)
from ...modeling_utils import PreTrainedModel
from ...padding_free import DENSE_ROWS, encoder_layout
from ...pytorch_utils import apply_chunking_to_forward
from ...utils.generic import ModelOutput
from .configuration_bert import BertConfig


class BertEmbeddings(nn.Module):
    """Sum of word, position and token-type embeddings, then LayerNorm and dropout.

    `embedding_size` is the width of the embeddings when it differs from the layers' (ALBERT's
    and ELECTRA's factorised embeddings, projected to `hidden_size` by the model).
    """

    def __init__(self, config, embedding_size=None):
        super().__init__()
        width = embedding_size or config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, width, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, width)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, width)
        self.LayerNorm = nn.LayerNorm(width, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.register_buffer("position_ids", core.arange(config.max_position_embeddings).expand((1, -1)),
                             persistent=False)
        self.register_buffer("token_type_ids", core.zeros(1, config.max_position_embeddings, dtype=core.long),
                             persistent=False)

    def default_position_ids(self, input_ids, inputs_embeds, past_key_values_length):
        """Positions past_key_values_length, +1, ... (RoBERTa counts from its padding index instead)."""
        seq_length = (input_ids if input_ids is not None else inputs_embeds).shape[1]
        return self.position_ids[:, past_key_values_length: seq_length + past_key_values_length]

    def forward(self, input_ids=None, token_type_ids=None, position_ids=None, inputs_embeds=None,
                past_key_values_length=0):
        input_shape = input_ids.shape if input_ids is not None else inputs_embeds.shape[:-1]
        batch_size, seq_length = input_shape
        if position_ids is None:
            position_ids = self.default_position_ids(input_ids, inputs_embeds, past_key_values_length)
        if token_type_ids is None:
            buffered = self.token_type_ids.expand(position_ids.shape[0], -1)
            token_type_ids = core.gather(buffered, 1, position_ids).expand(batch_size, seq_length)
        if inputs_embeds is None:
            inputs_embeds = self.word_embeddings(input_ids)
        embeddings = inputs_embeds + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


class BertSelfAttention(nn.Module):
    def __init__(self, config, is_causal=False, layer_idx=None, is_cross_attention=False):
        super().__init__()
        if config.hidden_size % config.num_attention_heads != 0 and not hasattr(config, "embedding_size"):
            raise ValueError(
                f"The hidden size ({config.hidden_size}) is not a multiple of the number of attention "
                f"heads ({config.num_attention_heads})"
            )
        self.config = config
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = int(config.hidden_size / config.num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.scaling = self.attention_head_size ** -0.5
        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.is_causal = is_causal
        self.is_cross_attention = is_cross_attention
        self.layer_idx = layer_idx

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, past_key_values=None,
                output_attentions=False, rows=DENSE_ROWS):
        """`rows` lays out packed tokens (padding_free) as the padded batch for the attention alone."""
        query = rows.unpack(self.query(hidden_states))
        input_shape = tuple(query.shape[:-1])
        head_shape = input_shape + (-1, self.attention_head_size)
        query = query.view(head_shape).transpose(1, 2)
        if self.is_cross_attention:
            kv_shape = tuple(encoder_hidden_states.shape[:-1]) + (-1, self.attention_head_size)
            key, value = cross_attention_key_value(past_key_values, self.layer_idx, lambda: (
                self.key(encoder_hidden_states).view(kv_shape).transpose(1, 2),
                self.value(encoder_hidden_states).view(kv_shape).transpose(1, 2)))
        else:
            key = rows.unpack(self.key(hidden_states)).view(head_shape).transpose(1, 2)
            value = rows.unpack(self.value(hidden_states)).view(head_shape).transpose(1, 2)
            key, value = update_self_attention(past_key_values, key, value, self.layer_idx)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, attention_mask,
                                    dropout=self.dropout.p if self.training else 0.0, scaling=self.scaling)
        return rows.pack(output.reshape(input_shape + (-1,))), weights


BertCrossAttention = BertSelfAttention


class BertSelfOutput(nn.Module):
    """dense → dropout → LayerNorm(· + residual): how attention and the feed-forward both end."""

    def __init__(self, config, input_size=None):
        super().__init__()
        self.dense = nn.Linear(input_size or config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dropout(self.dense(hidden_states))
        return self.LayerNorm(hidden_states + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config, is_causal=False, layer_idx=None, is_cross_attention=False):
        super().__init__()
        self.is_cross_attention = is_cross_attention
        self.self = BertSelfAttention(config, is_causal=is_causal, layer_idx=layer_idx,
                                      is_cross_attention=is_cross_attention)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, output_attentions=False, rows=DENSE_ROWS):
        mask = encoder_attention_mask if self.is_cross_attention else attention_mask
        attention_output, weights = self.self(hidden_states, mask, encoder_hidden_states=encoder_hidden_states,
                                              past_key_values=past_key_values, output_attentions=output_attentions,
                                              rows=rows)
        return self.output(attention_output, hidden_states), weights


class BertIntermediate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        act = config.hidden_act
        self.intermediate_act_fn = ACT2FN[act] if isinstance(act, str) else act

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertOutput(BertSelfOutput):
    """The feed-forward's closing projection, from intermediate_size."""

    def __init__(self, config):
        super().__init__(config, input_size=config.intermediate_size)


class BertLayer(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1
        self.attention = BertAttention(config, is_causal=config.is_decoder, layer_idx=layer_idx)
        self.is_decoder = config.is_decoder
        self.add_cross_attention = config.add_cross_attention
        if self.add_cross_attention:
            if not self.is_decoder:
                raise ValueError(f"{self} should be used as a decoder model if cross attention is added")
            self.crossattention = BertAttention(config, layer_idx=layer_idx, is_cross_attention=True)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, output_attentions=False, rows=DENSE_ROWS):
        attention_output, self_weights = self.attention(hidden_states, attention_mask,
                                                        past_key_values=past_key_values,
                                                        output_attentions=output_attentions, rows=rows)
        cross_weights = None
        if self.is_decoder and encoder_hidden_states is not None:
            if not hasattr(self, "crossattention"):
                raise ValueError(
                    f"If `encoder_hidden_states` are passed, {self} has to be instantiated with cross-attention "
                    "layers by setting `config.add_cross_attention=True`"
                )
            attention_output, cross_weights = self.crossattention(
                attention_output, None, encoder_hidden_states, encoder_attention_mask,
                past_key_values=past_key_values, output_attentions=output_attentions)
        layer_output = apply_chunking_to_forward(self.feed_forward_chunk, self.chunk_size_feed_forward,
                                                 self.seq_len_dim, attention_output)
        return layer_output, self_weights, cross_weights

    def feed_forward_chunk(self, attention_output):
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(nn.Module):
    """The stack of layers. Given packed `rows` (padding_free), the layers run on the real tokens
    and the last hidden state is laid out as the padded batch again, zeros at the padding."""

    supports_padding_free = True

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.layer = nn.ModuleList([BertLayer(config, layer_idx=i) for i in range(config.num_hidden_layers)])
        self.gradient_checkpointing = False

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None, encoder_attention_mask=None,
                past_key_values=None, use_cache=None, output_attentions=False, output_hidden_states=False,
                rows=DENSE_ROWS):
        all_hidden = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        all_cross = () if output_attentions and encoder_hidden_states is not None else None
        hidden_states = rows.pack(hidden_states)
        for layer in self.layer:
            hidden_states, weights, cross = layer(hidden_states, attention_mask, encoder_hidden_states,
                                                  encoder_attention_mask, past_key_values, output_attentions,
                                                  rows=rows)
            if output_hidden_states:
                all_hidden += (hidden_states,)
            if output_attentions:
                all_attentions += (weights,)
                if all_cross is not None:
                    all_cross += (cross,)
        return BaseModelOutputWithPastAndCrossAttentions(
            last_hidden_state=rows.unpack(hidden_states), past_key_values=past_key_values if use_cache else None,
            hidden_states=all_hidden, attentions=all_attentions, cross_attentions=all_cross)


class BertPooler(nn.Module):
    """tanh(dense(hidden state of the first token))."""

    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        return self.activation(self.dense(hidden_states[:, 0]))


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        act = config.hidden_act
        self.transform_act_fn = ACT2FN[act] if isinstance(act, str) else act
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states):
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=True)
        self.bias = nn.Parameter(core.zeros(config.vocab_size))

    def forward(self, hidden_states):
        return self.decoder(self.transform(hidden_states))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)

    def forward(self, sequence_output):
        return self.predictions(sequence_output)


class BertOnlyNSPHead(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, pooled_output):
        return self.seq_relationship(pooled_output)


class BertPreTrainingHeads(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, sequence_output, pooled_output):
        return self.predictions(sequence_output), self.seq_relationship(pooled_output)


class BertPreTrainedModel(PreTrainedModel):
    config_class = BertConfig
    base_model_prefix = "bert"
    supports_gradient_checkpointing = True
    _supports_sdpa = True
    _supports_attention_backend = True

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, BertLMPredictionHead):
            nn.init.zeros_(module.bias)
        elif isinstance(module, BertEmbeddings):
            with core.no_grad():
                module.position_ids.copy_(core.arange(module.position_ids.shape[-1]).expand((1, -1)))
                module.token_type_ids.zero_()


@dataclass
class BertForPreTrainingOutput(ModelOutput):
    loss: Optional[object] = None
    prediction_logits: Optional[object] = None
    seq_relationship_logits: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


class BertModel(BertPreTrainedModel):
    """Embeddings → encoder → pooler. A family swaps the three classes; one without a pooler
    (ELECTRA) sets `pooler_class = None`. Configs without `is_decoder` (ALBERT's) are encoders."""

    _no_split_modules = ["BertEmbeddings", "BertLayer"]
    embeddings_class = BertEmbeddings
    encoder_class = BertEncoder
    pooler_class = BertPooler

    def __init__(self, config, add_pooling_layer=True):
        super().__init__(config)
        self.config = config
        self.embeddings = self.embeddings_class(config)
        self.encoder = self.encoder_class(config)
        self.pooler = self.pooler_class(config) if add_pooling_layer and self.pooler_class else None
        self.post_init()

    def get_input_embeddings(self):
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value):
        self.embeddings.word_embeddings = value

    def embed(self, **inputs):
        """The encoder's input; ELECTRA projects the embeddings to the layers' width here."""
        return self.embeddings(**inputs)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, encoder_hidden_states=None, encoder_attention_mask=None, past_key_values=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                padding_rows_unread=False, **kwargs):
        """`padding_rows_unread`: the caller reads no padding row of `last_hidden_state` (a head
        reading each row's first token, or pooling the real ones). The encoder may then skip the
        padding (padding_free), and the padding rows of `last_hidden_state` are zeros."""
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        is_decoder = getattr(self.config, "is_decoder", False)
        use_cache = (use_cache if use_cache is not None else self.config.use_cache) if is_decoder else False
        if use_cache and past_key_values is None:
            past_key_values = (EncoderDecoderCache(DynamicCache(config=self.config), DynamicCache(config=self.config))
                               if encoder_hidden_states is not None else DynamicCache(config=self.config))
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        embedding_output = self.embed(input_ids=input_ids, position_ids=position_ids,
                                      token_type_ids=token_type_ids, inputs_embeds=inputs_embeds,
                                      past_key_values_length=past_length)
        if is_decoder:
            mask = create_causal_mask(self.config, embedding_output, attention_mask, past_key_values,
                                      position_ids=position_ids)
        else:
            mask = create_bidirectional_mask(self.config, embedding_output, attention_mask)
        if encoder_attention_mask is not None:
            encoder_attention_mask = create_bidirectional_mask(self.config, embedding_output, encoder_attention_mask,
                                                               encoder_hidden_states=encoder_hidden_states)
        rows_returned = is_decoder or output_attentions or output_hidden_states or past_key_values is not None
        padding_free = encoder_layout(self.encoder, attention_mask, padding_rows_unread, rows_returned)
        encoder_outputs = self.encoder(embedding_output, attention_mask=mask,
                                       encoder_hidden_states=encoder_hidden_states,
                                       encoder_attention_mask=encoder_attention_mask, past_key_values=past_key_values,
                                       use_cache=use_cache, output_attentions=output_attentions,
                                       output_hidden_states=output_hidden_states, **padding_free)
        sequence_output = encoder_outputs.last_hidden_state
        pooled_output = self.pooler(sequence_output) if self.pooler is not None else None
        output = BaseModelOutputWithPoolingAndCrossAttentions(
            last_hidden_state=sequence_output, pooler_output=pooled_output,
            past_key_values=encoder_outputs.past_key_values, hidden_states=encoder_outputs.hidden_states,
            attentions=encoder_outputs.attentions, cross_attentions=encoder_outputs.cross_attentions)
        return output if return_dict else output.to_tuple()


class BertPredictionHeadMixin(GenericHead):
    """A head that predicts tokens. Its decoder is BERT's `cls.predictions`, tied to the word
    embeddings, with `bias` as the decoder's bias; RoBERTa overrides the three methods
    below for its `lm_head`."""

    add_pooling_layer = False
    _tied_weights_keys = {
        "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
        "cls.predictions.decoder.bias": "cls.predictions.bias",
    }

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config, add_pooling_layer=self.add_pooling_layer)
        self.build_prediction_head(config)
        self.post_init()

    def build_prediction_head(self, config):
        self.cls = BertOnlyMLMHead(config)

    def prediction_head(self):
        return self.cls.predictions

    def predict_tokens(self, sequence_output):
        return self.cls(sequence_output)

    def get_output_embeddings(self):
        return self.prediction_head().decoder

    def set_output_embeddings(self, new_embeddings):
        """The new decoder's bias becomes the head's `bias` too, so resizing keeps them tied."""
        head = self.prediction_head()
        head.decoder = new_embeddings
        head.bias = new_embeddings.bias


class BertForPreTraining(BertPredictionHeadMixin, BertPreTrainedModel):
    """Masked-LM and next-sentence heads together, the latter on the pooled first token."""

    base_model_class = BertModel
    add_pooling_layer = True

    output_class = BertForPreTrainingOutput
    sentence_logits_name = "seq_relationship_logits"

    def build_prediction_head(self, config):
        self.cls = BertPreTrainingHeads(config)

    def pretraining_scores(self, outputs):
        """(token prediction scores, two-way sentence scores on the pooled output)."""
        return self.cls(outputs[0], outputs[1])

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, next_sentence_label=None, return_dict=None, **kwargs):
        return self.pretraining_output(labels, next_sentence_label, return_dict, kwargs, input_ids=input_ids,
                                       attention_mask=attention_mask, token_type_ids=token_type_ids,
                                       position_ids=position_ids, inputs_embeds=inputs_embeds)

    def pretraining_output(self, labels, sentence_labels, return_dict, kwargs, input_ids=None, **inputs):
        """Both heads' scores and, given both kinds of labels, the sum of the masked-LM loss and the
        sentence-level cross-entropy; the sentence scores go in `sentence_logits_name`."""
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, **inputs)
        prediction_scores, sentence_scores = self.pretraining_scores(outputs)
        loss = None
        if labels is not None and sentence_labels is not None:
            loss = masked_lm_loss(prediction_scores, labels, self.config.vocab_size) + nn.functional.cross_entropy(
                sentence_scores.view(-1, 2), sentence_labels.view(-1))
        return head_output(self.output_class, outputs, return_dict, loss=loss, prediction_logits=prediction_scores,
                           **{self.sentence_logits_name: sentence_scores})


class BertLMHeadModel(BertPredictionHeadMixin, BertPreTrainedModel, GenerationMixin):
    base_model_class = BertModel

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, encoder_hidden_states=None, encoder_attention_mask=None, labels=None,
                past_key_values=None, use_cache=None, return_dict=None, logits_to_keep=0, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if labels is not None:
            use_cache = False
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                       position_ids=position_ids, inputs_embeds=inputs_embeds,
                                       encoder_hidden_states=encoder_hidden_states,
                                       encoder_attention_mask=encoder_attention_mask, past_key_values=past_key_values,
                                       use_cache=use_cache)
        logits = self.predict_tokens(keep_last_positions(outputs.last_hidden_state, logits_to_keep))
        loss = causal_lm_loss(logits, labels, self.config.vocab_size) if labels is not None else None
        output = CausalLMOutputWithCrossAttentions(loss=loss, logits=logits, past_key_values=outputs.past_key_values,
                                                   hidden_states=outputs.hidden_states,
                                                   attentions=outputs.attentions,
                                                   cross_attentions=outputs.cross_attentions)
        return output if return_dict else output.to_tuple()


class BertForMaskedLM(BertPredictionHeadMixin, BertPreTrainedModel):
    base_model_class = BertModel

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, encoder_hidden_states=None, encoder_attention_mask=None, labels=None,
                return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_base_model(input_ids, kwargs, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                       position_ids=position_ids, inputs_embeds=inputs_embeds,
                                       encoder_hidden_states=encoder_hidden_states,
                                       encoder_attention_mask=encoder_attention_mask)
        prediction_scores = self.predict_tokens(outputs[0])
        loss = masked_lm_loss(prediction_scores, labels, self.config.vocab_size) if labels is not None else None
        return head_output(MaskedLMOutput, outputs, return_dict, loss=loss, logits=prediction_scores)


class BertForNextSentencePrediction(GenericHead, BertPreTrainedModel):
    base_model_class = BertModel

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.cls = BertOnlyNSPHead(config)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        scores = self.cls(outputs[1])
        loss = nn.functional.cross_entropy(scores.view(-1, 2), labels.view(-1)) if labels is not None else None
        return head_output(NextSentencePredictorOutput, outputs, return_dict, loss=loss, logits=scores)


def classifier_dropout(config):
    """The heads' dropout: `classifier_dropout`, else (None, or a config without it, as MPNet's) `hidden_dropout_prob`."""
    dropout = getattr(config, "classifier_dropout", None)
    return dropout if dropout is not None else config.hidden_dropout_prob


class BertForSequenceClassification(GenericHead, BertPreTrainedModel):
    """dropout → classifier on the pooled first token. `classify` reads each row's first token
    alone (every family's head here does), so the encoder may skip the padding (padding_free)."""

    base_model_class = BertModel

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.config = config
        self.build_classifier(config)
        self.post_init()

    def build_classifier(self, config):
        self._build_base_model(config)
        self.dropout = nn.Dropout(classifier_dropout(config))
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def classify(self, outputs):
        return self.classifier(self.dropout(outputs.pooler_output))

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs,
                                    padding_rows_unread=True)
        output = sequence_classification_output(self.config, self.classify(outputs), labels, outputs)
        return output if return_dict else output.to_tuple()


class BertForMultipleChoice(GenericHead, BertPreTrainedModel):
    """Inputs are (batch, num_choices, seq); every choice is encoded on its own, summarised as one
    vector (BERT: the pooled first token) and scored."""

    base_model_class = BertModel

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.build_summary(config)
        self.classifier = nn.Linear(config.hidden_size, 1)
        self.post_init()

    def build_summary(self, config):
        self.dropout = nn.Dropout(classifier_dropout(config))

    def summarize(self, outputs):
        return self.dropout(outputs.pooler_output)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        num_choices = input_ids.shape[1] if input_ids is not None else inputs_embeds.shape[1]

        def flat(t):
            return t.reshape(-1, t.shape[-1]) if t is not None else None

        flat_embeds = inputs_embeds.reshape(-1, inputs_embeds.shape[-2], inputs_embeds.shape[-1]) \
            if inputs_embeds is not None else None
        outputs = self._run_base_model(flat(input_ids), kwargs, attention_mask=flat(attention_mask),
                                       token_type_ids=flat(token_type_ids), position_ids=flat(position_ids),
                                       inputs_embeds=flat_embeds)
        logits = self.classifier(self.summarize(outputs)).view(-1, num_choices)
        loss = nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return head_output(MultipleChoiceModelOutput, outputs, return_dict, loss=loss, logits=logits)


class BertForTokenClassification(GenericHead, BertPreTrainedModel):
    base_model_class = BertModel

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config, add_pooling_layer=False)
        self.dropout = nn.Dropout(classifier_dropout(config))
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, labels=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        output = token_classification_output(self.classifier(self.dropout(outputs[0])), labels, outputs)
        return output if return_dict else output.to_tuple()


class BertForQuestionAnswering(GenericHead, BertPreTrainedModel):
    base_model_class = BertModel

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self._build_base_model(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, start_positions=None, end_positions=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self._run_encoder(input_ids, attention_mask, token_type_ids, position_ids, inputs_embeds, kwargs)
        output = span_prediction(self.qa_outputs, outputs[0], start_positions, end_positions, outputs)
        return output if return_dict else output.to_tuple()


__all__ = [
    "BertForMaskedLM", "BertForMultipleChoice", "BertForNextSentencePrediction", "BertForPreTraining",
    "BertForQuestionAnswering", "BertForSequenceClassification", "BertForTokenClassification", "BertLayer",
    "BertLMHeadModel", "BertModel", "BertPreTrainedModel",
]
