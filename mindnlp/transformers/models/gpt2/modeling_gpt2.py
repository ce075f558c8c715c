# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-2 (Radford et al., 2019): a decoder-only transformer with Hugging Face's parameter names.

Each block is pre-norm: LayerNorm → causal self-attention → residual, then LayerNorm →
MLP (gelu_new) → residual; learned absolute position embeddings are added to the token
embeddings, and a final LayerNorm closes the stack. The projections are `Conv1D` layers,
whose weights are stored (in_features, out_features) as in the original TensorFlow
checkpoints, so HF checkpoints (`transformer.h.0.attn.c_attn.weight`, ...) load unchanged.

Positions come from the attention mask when one with padding is given and no
`position_ids` are: left-padded rows then see the same positions as unpadded ones, so a
padded batch gives each row's unpadded result (HF's GPT2Model counts positions from the
left edge unless `position_ids` are passed, as `generate()` does; both agree on
right-padded and unpadded batches).
"""
import math
from dataclasses import dataclass
from typing import Optional

from .... import core
from ....core import nn
from ...activations import ACT2FN
from ...cache_utils import DynamicCache, EncoderDecoderCache, cross_attention_key_value, update_self_attention
from ...generation import GenerationMixin
from ...masking_utils import create_bidirectional_mask, create_causal_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward, split_heads
from ...modeling_decoder import GenericForCausalLM
from ...modeling_layers import (GenericForSequenceClassification, GradientCheckpointingLayer, LayerOutputs,
                                SequenceSummary, base_model_kwargs, output_flags, span_prediction,
                                token_classification_output, token_classifier_dropout)
from ...modeling_outputs import BaseModelOutputWithPastAndCrossAttentions, CausalLMOutputWithCrossAttentions
from ...modeling_utils import PreTrainedModel
from ...pytorch_utils import Conv1D
from ...utils.generic import ModelOutput
from .configuration_gpt2 import GPT2Config


def upcast_reordered_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0):
    """GPT-2's `reorder_and_upcast_attn` (eager only): scores in float32 with the scale applied
    inside the product (q · (k * scale)), so half-precision models do not overflow."""
    scores = core.matmul(query.float(), key.float().transpose(-1, -2) * scaling)
    if attention_mask is not None:
        scores = scores + attention_mask[:, :, :, : key.shape[-2]]
    probs = nn.functional.softmax(scores, dim=-1).to(value.dtype)
    probs = nn.functional.dropout(probs, p=dropout, training=module.training)
    return core.matmul(probs, value).transpose(1, 2), probs


class GPT2Attention(nn.Module):
    """Multi-head attention whose query, key and value come from one `c_attn` projection.

    Scores are scaled by 1/sqrt(head_dim) when `scale_attn_weights`, and further by
    1/(layer_idx + 1) when `scale_attn_by_inverse_layer_idx`. As cross-attention (for
    `add_cross_attention`), the query comes from `q_attn` and keys/values from the encoder's
    states through a `c_attn` of width 2 * hidden.
    """

    def __init__(self, config, is_cross_attention=False, layer_idx=None):
        super().__init__()
        self.config = config
        self.embed_dim = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        if self.head_dim * self.num_heads != self.embed_dim:
            raise ValueError(
                f"`embed_dim` must be divisible by num_heads (got `embed_dim`: {self.embed_dim} and `num_heads`:"
                f" {self.num_heads})."
            )
        self.scale_attn_weights = config.scale_attn_weights
        self.scale_attn_by_inverse_layer_idx = config.scale_attn_by_inverse_layer_idx
        self.reorder_and_upcast_attn = config.reorder_and_upcast_attn
        self.is_cross_attention = is_cross_attention
        self.layer_idx = layer_idx
        self.scaling = self.head_dim ** -0.5 if self.scale_attn_weights else 1.0
        if self.scale_attn_by_inverse_layer_idx:
            self.scaling /= float(self.layer_idx + 1)
        if is_cross_attention:
            self.c_attn = Conv1D(2 * self.embed_dim, self.embed_dim)
            self.q_attn = Conv1D(self.embed_dim, self.embed_dim)
        else:
            self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(config.attn_pdrop)
        self.resid_dropout = nn.Dropout(config.resid_pdrop)
        self.is_causal = not is_cross_attention

    def _heads(self, states):
        """(batch, seq, hidden) → (batch, heads, seq, head_dim), one view node (a compiled decoding
        step's attention is then the pattern fused_decode_attention fuses)."""
        return split_heads(states, self.head_dim)

    def forward(self, hidden_states, past_key_values=None, attention_mask=None, encoder_hidden_states=None,
                output_attentions=False, **kwargs):
        if encoder_hidden_states is not None:
            if not hasattr(self, "q_attn"):
                raise ValueError(
                    "If class is used as cross attention, the weights `q_attn` have to be defined. Please make sure "
                    "to instantiate class with `GPT2Attention(..., is_cross_attention=True)`."
                )
            query = self._heads(self.q_attn(hidden_states))

            def encoder_key_value():
                key, value = self.c_attn(encoder_hidden_states).split(self.split_size, dim=2)
                return self._heads(key), self._heads(value)

            key, value = cross_attention_key_value(past_key_values, self.layer_idx, encoder_key_value)
        else:
            query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
            query, key, value = self._heads(query), self._heads(key), self._heads(value)
            key, value = update_self_attention(past_key_values, key, value, self.layer_idx)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        dropout = self.attn_dropout.p if self.training else 0.0
        if self.reorder_and_upcast_attn and implementation in (None, "eager"):
            output, weights = upcast_reordered_attention_forward(self, query, key, value, attention_mask,
                                                                 self.scaling, dropout)
        else:
            attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
            output, weights = attention(self, query, key, value, attention_mask, scaling=self.scaling,
                                        dropout=dropout)
        output = output.reshape(tuple(output.shape[:-2]) + (self.embed_dim,))
        return self.resid_dropout(self.c_proj(output)), weights


class GPT2MLP(nn.Module):
    def __init__(self, intermediate_size, config):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, config.hidden_size)
        self.c_proj = Conv1D(config.hidden_size, intermediate_size)
        self.act = ACT2FN[config.activation_function]
        self.dropout = nn.Dropout(config.resid_pdrop)

    def forward(self, hidden_states):
        return self.dropout(self.c_proj(self.act(self.c_fc(hidden_states))))


class GPT2Block(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx=None):
        super().__init__()
        hidden_size = config.hidden_size
        inner_dim = config.n_inner if config.n_inner is not None else 4 * hidden_size
        self.ln_1 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.attn = GPT2Attention(config, layer_idx=layer_idx)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        if config.add_cross_attention:
            self.crossattention = GPT2Attention(config, is_cross_attention=True, layer_idx=layer_idx)
            self.ln_cross_attn = nn.LayerNorm(hidden_size, eps=config.layer_norm_epsilon)
        self.mlp = GPT2MLP(inner_dim, config)

    def forward(self, hidden_states, past_key_values=None, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, output_attentions=False, **kwargs):
        """Returns (hidden states, self-attention weights, cross-attention weights)."""
        attention_output, self_weights = self.attn(self.ln_1(hidden_states), past_key_values=past_key_values,
                                                   attention_mask=attention_mask,
                                                   output_attentions=output_attentions)
        hidden_states = hidden_states + attention_output
        cross_weights = None
        if encoder_hidden_states is not None:
            if not hasattr(self, "crossattention"):
                raise ValueError(
                    f"If `encoder_hidden_states` are passed, {self} has to be instantiated with cross-attention "
                    "layers by setting `config.add_cross_attention=True`"
                )
            cross_output, cross_weights = self.crossattention(
                self.ln_cross_attn(hidden_states), past_key_values=past_key_values, attention_mask=encoder_attention_mask,
                encoder_hidden_states=encoder_hidden_states, output_attentions=output_attentions)
            hidden_states = hidden_states + cross_output
        hidden_states = hidden_states + self.mlp(self.ln_2(hidden_states))
        return hidden_states, self_weights, cross_weights


class GPT2PreTrainedModel(PreTrainedModel):
    config_class = GPT2Config
    base_model_prefix = "transformer"
    supports_gradient_checkpointing = True
    _no_split_modules = ["GPT2Block"]
    _supports_sdpa = True
    _supports_attention_backend = True
    _can_compile_fullgraph = True  # HF's flag: static caches, masks and decoding steps under core.compile
    # Older checkpoints store the causal mask as a buffer named `attn.bias`; masks are built per call here.
    _keys_to_ignore_on_load_unexpected = [r"\.attn\.bias$", r"\.crossattention\.bias$", r"\.attn\.masked_bias$"]

    def _init_weights(self, module):
        """HF's scheme: N(0, initializer_range) everywhere, and the residual output projections
        (`c_proj`) scaled by 1/sqrt(2 * n_layer), as in the GPT-2 paper."""
        super()._init_weights(module)
        std = self.config.initializer_range
        if isinstance(module, Conv1D):
            nn.init.normal_(module.weight, mean=0.0, std=std)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        if isinstance(module, (GPT2Attention, GPT2MLP)):
            nn.init.normal_(module.c_proj.weight, mean=0.0, std=std / math.sqrt(2 * self.config.n_layer))


@dataclass
class GPT2DoubleHeadsModelOutput(ModelOutput):
    """Language-modelling and multiple-choice outputs; `logits` is (batch, choices, seq, vocab)
    and `mc_logits` (batch, choices)."""

    loss: Optional[object] = None
    mc_loss: Optional[object] = None
    logits: Optional[object] = None
    mc_logits: Optional[object] = None
    past_key_values: Optional[object] = None
    hidden_states: Optional[tuple] = None
    attentions: Optional[tuple] = None


def _position_ids(attention_mask, past_length, query_length, device):
    """Positions of the new tokens: past_length .. past_length + query_length - 1, except that
    with a padded 2-D mask the real tokens are counted over the real tokens only, so left
    padding shifts nothing. Padding positions keep their index: right-padded batches then
    get exactly HF's positions everywhere, padding included."""
    positions = core.arange(past_length, past_length + query_length, device=device).unsqueeze(0)
    if attention_mask is not None and attention_mask.ndim == 2 and not bool(attention_mask.all()):
        mask = attention_mask.long()
        counted = (mask.cumsum(-1) - 1)[:, -query_length:]
        return core.where(mask[:, -query_length:] == 1, counted, positions)
    return positions


class GPT2Model(GPT2PreTrainedModel):
    """Token + position embeddings, the blocks and the final LayerNorm."""

    def __init__(self, config):
        super().__init__(config)
        self.embed_dim = config.hidden_size
        self.wte = nn.Embedding(config.vocab_size, self.embed_dim)
        self.wpe = nn.Embedding(config.max_position_embeddings, self.embed_dim)
        self.drop = nn.Dropout(config.embd_pdrop)
        self.h = nn.ModuleList([GPT2Block(config, layer_idx=i) for i in range(config.num_hidden_layers)])
        self.ln_f = nn.LayerNorm(self.embed_dim, eps=config.layer_norm_epsilon)
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self):
        return self.wte

    def set_input_embeddings(self, new_embeddings):
        self.wte = new_embeddings

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, inputs_embeds=None, encoder_hidden_states=None, encoder_attention_mask=None,
                use_cache=None, output_attentions=None, output_hidden_states=None, return_dict=None,
                cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if input_ids is not None and inputs_embeds is not None:
            raise ValueError("You cannot specify both input_ids and inputs_embeds at the same time")
        if input_ids is not None:
            input_shape = tuple(input_ids.shape)
            input_ids = input_ids.view(-1, input_shape[-1])
        elif inputs_embeds is not None:
            input_shape = tuple(inputs_embeds.shape[:-1])
        else:
            raise ValueError("You have to specify either input_ids or inputs_embeds")
        if token_type_ids is not None:
            token_type_ids = token_type_ids.view(-1, input_shape[-1])
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training:
            # Recomputing a block in backward would write its keys to the cache twice.
            use_cache, past_key_values = False, None
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        if use_cache and self.config.add_cross_attention and not isinstance(past_key_values, EncoderDecoderCache):
            past_key_values = EncoderDecoderCache(past_key_values, DynamicCache(config=self.config))
        if inputs_embeds is None:
            inputs_embeds = self.wte(input_ids)
        batch_size, query_length = inputs_embeds.shape[0], inputs_embeds.shape[1]
        if attention_mask is not None and attention_mask.ndim < 4:
            attention_mask = attention_mask.view(batch_size, -1)
        # A static cache's length is a tensor: not read back into Python when positions are given.
        needs_length = position_ids is None or cache_position is None
        past_length = past_key_values.get_seq_length() if past_key_values is not None and needs_length else 0
        if position_ids is None:
            position_ids = _position_ids(attention_mask, past_length, query_length, inputs_embeds.device)
        hidden_states = inputs_embeds + self.wpe(position_ids)
        if token_type_ids is not None:
            hidden_states = hidden_states + self.wte(token_type_ids)
        hidden_states = self.drop(hidden_states)

        if cache_position is None:
            cache_position = core.arange(past_length, past_length + query_length, device=inputs_embeds.device)
        causal_mask = create_causal_mask(self.config, inputs_embeds, attention_mask, past_key_values,
                                         cache_position=cache_position, position_ids=position_ids)
        if encoder_hidden_states is not None:
            encoder_attention_mask = create_bidirectional_mask(self.config, inputs_embeds, encoder_attention_mask,
                                                               encoder_hidden_states=encoder_hidden_states)

        collected = LayerOutputs(output_hidden_states, output_attentions, self.config.add_cross_attention)
        for block in self.h:
            collected.add_hidden(hidden_states)
            hidden_states, weights, cross_weights = block(
                hidden_states, past_key_values, causal_mask, encoder_hidden_states,
                encoder_attention_mask=encoder_attention_mask, output_attentions=output_attentions)
            collected.add_attentions(weights, cross_weights)
        hidden_states = self.ln_f(hidden_states)
        hidden_states = hidden_states.view((-1,) + input_shape[1:] + (hidden_states.shape[-1],))
        return collected.output(BaseModelOutputWithPastAndCrossAttentions, return_dict, hidden_states,
                                past_key_values=past_key_values if use_cache else None)


class GPT2LMHeadModel(GenericForCausalLM, GPT2PreTrainedModel, GenerationMixin):
    """GPT-2 with its language-modelling head, tied to the token embeddings; its forward also
    takes token types and, with `add_cross_attention`, an encoder's states."""

    base_model_class = GPT2Model
    _tied_weights_keys = {"lm_head.weight": "transformer.wte.weight"}

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, inputs_embeds=None, encoder_hidden_states=None, encoder_attention_mask=None,
                labels=None, use_cache=None, return_dict=None, logits_to_keep=0, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        loss, logits, outputs = self.predict_next_tokens(
            input_ids, labels, logits_to_keep, kwargs, past_key_values=past_key_values, attention_mask=attention_mask,
            token_type_ids=token_type_ids, position_ids=position_ids, inputs_embeds=inputs_embeds,
            encoder_hidden_states=encoder_hidden_states, encoder_attention_mask=encoder_attention_mask,
            use_cache=use_cache)
        output = CausalLMOutputWithCrossAttentions(
            loss=loss, logits=logits, past_key_values=outputs.past_key_values, hidden_states=outputs.hidden_states,
            attentions=outputs.attentions, cross_attentions=outputs.cross_attentions)
        return output if return_dict else output.to_tuple()


class GPT2DoubleHeadsModel(GPT2PreTrainedModel, GenerationMixin):
    """Language modelling plus a multiple-choice head reading each choice's state at `mc_token_ids`.

    Inputs are (batch, choices, seq); the multiple-choice head always has one output per
    choice (`config.num_labels` is set to 1, as HF does).
    """

    _tied_weights_keys = {"lm_head.weight": "transformer.wte.weight"}

    def __init__(self, config):
        super().__init__(config)
        config.num_labels = 1
        self.transformer = GPT2Model(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.multiple_choice_head = SequenceSummary(config)
        self.post_init()

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, inputs_embeds=None, mc_token_ids=None, labels=None, mc_labels=None,
                use_cache=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.transformer(input_ids, past_key_values=past_key_values, attention_mask=attention_mask,
                                   token_type_ids=token_type_ids, position_ids=position_ids,
                                   inputs_embeds=inputs_embeds, use_cache=use_cache, return_dict=True,
                                   **base_model_kwargs(kwargs))
        hidden_states = outputs.last_hidden_state
        lm_logits = self.lm_head(hidden_states)
        mc_logits = self.multiple_choice_head(hidden_states, mc_token_ids).squeeze(-1)
        mc_loss = None
        if mc_labels is not None:
            mc_loss = nn.functional.cross_entropy(mc_logits.view(-1, mc_logits.shape[-1]), mc_labels.view(-1))
        lm_loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            lm_loss = nn.functional.cross_entropy(shift_logits.view(-1, shift_logits.shape[-1]),
                                                  shift_labels.view(-1))
        output = GPT2DoubleHeadsModelOutput(
            loss=lm_loss, mc_loss=mc_loss, logits=lm_logits, mc_logits=mc_logits,
            past_key_values=outputs.past_key_values, hidden_states=outputs.hidden_states,
            attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


class GPT2ForSequenceClassification(GenericForSequenceClassification, GPT2PreTrainedModel):
    """Classifies a sequence from the scores at its last non-padding token; the shared head with
    GPT-2's inputs."""

    base_model_class = GPT2Model

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return self.classify_last_token(input_ids, labels, return_dict, kwargs, past_key_values=past_key_values,
                                        attention_mask=attention_mask, token_type_ids=token_type_ids,
                                        position_ids=position_ids, inputs_embeds=inputs_embeds, use_cache=use_cache)


class GPT2ForTokenClassification(GPT2PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.transformer = GPT2Model(config)
        self.dropout = nn.Dropout(token_classifier_dropout(config))
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids=None, past_key_values=None, attention_mask=None, token_type_ids=None,
                position_ids=None, inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.transformer(input_ids, past_key_values=past_key_values, attention_mask=attention_mask,
                                   token_type_ids=token_type_ids, position_ids=position_ids,
                                   inputs_embeds=inputs_embeds, use_cache=use_cache, return_dict=True,
                                   **base_model_kwargs(kwargs))
        output = token_classification_output(self.classifier(self.dropout(outputs.last_hidden_state)), labels,
                                             outputs)
        return output if return_dict else output.to_tuple()


class GPT2ForQuestionAnswering(GPT2PreTrainedModel):
    """Span start/end logits from a linear layer over the last hidden states."""

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.transformer = GPT2Model(config)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, position_ids=None,
                inputs_embeds=None, start_positions=None, end_positions=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.transformer(input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                                   position_ids=position_ids, inputs_embeds=inputs_embeds, use_cache=False,
                                   return_dict=True, **base_model_kwargs(kwargs))
        output = span_prediction(self.qa_outputs, outputs.last_hidden_state, start_positions, end_positions, outputs)
        return output if return_dict else output.to_tuple()


__all__ = [
    "GPT2DoubleHeadsModel", "GPT2ForQuestionAnswering", "GPT2ForSequenceClassification", "GPT2ForTokenClassification",
    "GPT2LMHeadModel", "GPT2Model", "GPT2PreTrainedModel",
]
