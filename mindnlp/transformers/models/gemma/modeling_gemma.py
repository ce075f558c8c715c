"""Gemma (Gemma team, Google DeepMind, 2024): a Llama-like decoder with Hugging Face's parameter names.

What differs from Llama: token embeddings are multiplied by sqrt(hidden_size) (rounded to the
weights' dtype, as HF does); RMSNorm scales by (1 + weight), computed in float32 before the
cast back, and its weight starts at zero; the MLP is GeGLU, down(gelu_tanh(gate(x)) · up(x));
`head_dim` is set on its own (256 in the released models) rather than derived; and the
output head is tied to the embeddings by default.

Decoding is memory-bound, so the per-token path stays lean: cos/sin are computed once per
forward and shared by every layer, the cache writes new keys into preallocated storage, and
attention runs as one fused node.
"""
from .... import core
from ....core import nn
from ...activations import ACT2FN, gated_activation
from ...cache_utils import DynamicCache
from ...generation import GenerationMixin
from ...loss_utils import causal_lm_loss, sequence_classification_loss
from ...masking_utils import create_causal_mask
from ...modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward, split_heads
from ...modeling_layers import GradientCheckpointingLayer
from ...modeling_outputs import (
    BaseModelOutputWithPast,
    CausalLMOutputWithPast,
    SequenceClassifierOutputWithPast,
    TokenClassifierOutput,
)
from ...modeling_rope_utils import rope_init
from ...modeling_rotary import apply_rotary_pos_emb
from ...modeling_utils import PreTrainedModel
from .configuration_gemma import GemmaConfig


class GemmaRMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · (1 + weight), all in float32, then cast back (unlike Llama, which
    casts before the weight)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(core.zeros(dim))

    def forward(self, x):
        normed = nn.functional.rms_norm(x.float(), (x.shape[-1],), eps=self.eps)
        return (normed * (1.0 + self.weight.float())).type_as(x)

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.eps}"


class GemmaTextScaledWordEmbedding(nn.Embedding):
    """An embedding whose output is multiplied by `embed_scale` (sqrt(hidden_size)), rounded to the
    weight's dtype first; the scale is a non-persistent buffer."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx, embed_scale=1.0):
        super().__init__(num_embeddings, embedding_dim, padding_idx)
        self.scalar_embed_scale = embed_scale
        self.register_buffer("embed_scale", core.tensor(embed_scale), persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(self.weight.dtype)


class GemmaRotaryEmbedding(nn.Module):
    """cos/sin of position · inv_freq for the positions of a forward call.

    `inv_freq` is a non-persistent buffer (checkpoints do not store it). With "dynamic" RoPE
    the frequencies are recomputed when a position beyond every one seen so far arrives
    (and reset once sequences are short again), as HF's `dynamic_rope_update` does.
    """

    def __init__(self, config, device=None):
        super().__init__()
        self.config = config
        self.rope_type = config.rope_parameters["rope_type"]
        self.max_seq_len_cached = config.max_position_embeddings
        self.original_max_seq_len = config.max_position_embeddings
        inv_freq, self.attention_scaling = rope_init(config)
        self.register_buffer("inv_freq", core.tensor(inv_freq, device=device), persistent=False)
        self.register_buffer("original_inv_freq", core.tensor(inv_freq, device=device), persistent=False)

    def _update_dynamic_frequencies(self, position_ids):
        seq_len = int(position_ids.max()) + 1
        if seq_len > self.max_seq_len_cached:
            inv_freq, self.attention_scaling = rope_init(self.config, seq_len=seq_len)
            self.inv_freq = core.tensor(inv_freq, device=self.inv_freq.device)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len < self.max_seq_len_cached:
            self.inv_freq = self.original_inv_freq
            self.max_seq_len_cached = self.original_max_seq_len

    def forward(self, x, position_ids):
        """(cos, sin), each (batch, seq, head_dim) in x's dtype."""
        if "dynamic" in self.rope_type:
            self._update_dynamic_frequencies(position_ids)
        with core.no_grad():
            freqs = position_ids[..., None].float() * self.inv_freq.float()
            emb = core.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            if self.attention_scaling != 1.0:
                cos, sin = cos * self.attention_scaling, sin * self.attention_scaling
        return cos.to(x.dtype), sin.to(x.dtype)


class GemmaMLP(nn.Module):
    """GeGLU: down(act(gate(x)) · up(x)) with `hidden_act` (the tanh approximation of GELU)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.hidden_size = config.hidden_size
        self.intermediate_size = config.intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, x):
        return self.down_proj(gated_activation(self.act_fn, self.gate_proj(x), self.up_proj(x)))


class GemmaAttention(nn.Module):
    """Multi-head (or grouped-query) self-attention with RoPE and an optional KV cache."""

    def __init__(self, config, layer_idx):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.scaling = self.head_dim ** -0.5
        self.attention_dropout = config.attention_dropout
        self.is_causal = True
        bias = config.attention_bias
        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=bias)
        self.v_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=bias)
        self.o_proj = nn.Linear(config.num_attention_heads * self.head_dim, config.hidden_size, bias=bias)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        input_shape = tuple(hidden_states.shape[:-1])
        query = split_heads(self.q_proj(hidden_states), self.head_dim)
        key = split_heads(self.k_proj(hidden_states), self.head_dim)
        value = split_heads(self.v_proj(hidden_states), self.head_dim)
        cos, sin = position_embeddings
        query, key = apply_rotary_pos_emb(query, key, cos, sin)
        if past_key_values is not None:
            key, value = past_key_values.update(key, value, self.layer_idx)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, attention_mask, scaling=self.scaling,
                                    dropout=self.attention_dropout if self.training else 0.0)
        return self.o_proj(output.reshape(input_shape + (-1,))), weights


class GemmaDecoderLayer(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.self_attn = GemmaAttention(config=config, layer_idx=layer_idx)
        self.mlp = GemmaMLP(config)
        self.input_layernorm = GemmaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = GemmaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        attention_output, weights = self.self_attn(self.input_layernorm(hidden_states), position_embeddings,
                                                   attention_mask=attention_mask, past_key_values=past_key_values,
                                                   output_attentions=output_attentions)
        hidden_states = hidden_states + attention_output
        hidden_states = hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))
        return hidden_states, weights


class GemmaPreTrainedModel(PreTrainedModel):
    config_class = GemmaConfig
    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _no_split_modules = ["GemmaDecoderLayer"]
    _supports_sdpa = True
    _supports_attention_backend = True

    def _init_weights(self, module):
        """HF's defaults, but norms start at zero (they scale by 1 + weight) and the embedding's
        scale buffer is restored."""
        super()._init_weights(module)
        if isinstance(module, GemmaRMSNorm):
            nn.init.zeros_(module.weight)
        elif isinstance(module, GemmaTextScaledWordEmbedding):
            nn.init.constant_(module.embed_scale, module.scalar_embed_scale)


def _output_flags(config, output_attentions, output_hidden_states, return_dict):
    """Per-call flags, falling back to the config as HF does."""
    return (
        output_attentions if output_attentions is not None else config.output_attentions,
        output_hidden_states if output_hidden_states is not None else config.output_hidden_states,
        return_dict if return_dict is not None else config.use_return_dict,
    )


class GemmaModel(GemmaPreTrainedModel):
    """The decoder stack: embeddings, layers, final norm. Returns the last hidden states and the cache."""

    def __init__(self, config):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.vocab_size = config.vocab_size
        self.embed_tokens = GemmaTextScaledWordEmbedding(config.vocab_size, config.hidden_size, self.padding_idx,
                                                         embed_scale=config.hidden_size ** 0.5)
        self.layers = nn.ModuleList([GemmaDecoderLayer(config, i) for i in range(config.num_hidden_layers)])
        self.norm = GemmaRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.rotary_emb = GemmaRotaryEmbedding(config=config)
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self):
        return self.embed_tokens

    def set_input_embeddings(self, value):
        self.embed_tokens = value

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = _output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training:
            use_cache = False  # recomputing a layer in backward would write its keys to the cache twice
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        if cache_position is None:
            past_seen = past_key_values.get_seq_length() if past_key_values is not None else 0
            cache_position = core.arange(past_seen, past_seen + inputs_embeds.shape[1], device=inputs_embeds.device)
        if position_ids is None:
            position_ids = cache_position.unsqueeze(0)
        mask = create_causal_mask(self.config, inputs_embeds, attention_mask, past_key_values,
                                  cache_position=cache_position, position_ids=position_ids)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        all_hidden = () if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers[: self.config.num_hidden_layers]:
            if output_hidden_states:
                all_hidden += (hidden_states,)
            hidden_states, weights = layer(hidden_states, position_embeddings, attention_mask=mask,
                                           past_key_values=past_key_values, output_attentions=output_attentions)
            if output_attentions:
                all_attentions += (weights,)
        hidden_states = self.norm(hidden_states)
        if output_hidden_states:
            all_hidden += (hidden_states,)
        output = BaseModelOutputWithPast(last_hidden_state=hidden_states,
                                         past_key_values=past_key_values if use_cache else None,
                                         hidden_states=all_hidden, attentions=all_attentions)
        return output if return_dict else output.to_tuple()


def _base_inputs(kwargs):
    return {k: kwargs[k] for k in ("output_attentions", "output_hidden_states", "cache_position") if k in kwargs}


def _keep_last(hidden_states, logits_to_keep):
    """HF's logits_to_keep: an int keeps that many last positions (0: all), a tensor lists the positions."""
    if isinstance(logits_to_keep, int):
        return hidden_states[:, -logits_to_keep:, :] if logits_to_keep else hidden_states
    return hidden_states[:, logits_to_keep, :]


class GemmaForCausalLM(GemmaPreTrainedModel, GenerationMixin):
    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}
    _tp_plan = {"lm_head": "colwise_gather_output"}
    _pp_plan = {"lm_head": (["hidden_states"], ["logits"])}

    def __init__(self, config):
        super().__init__(config)
        self.model = GemmaModel(config)
        self.vocab_size = config.vocab_size
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.post_init()

    def get_output_embeddings(self):
        return self.lm_head

    def set_output_embeddings(self, new_embeddings):
        self.lm_head = new_embeddings

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, logits_to_keep=0, **kwargs):
        """Next-token logits; with `labels`, also the shifted cross-entropy (-100 ignored).

        `logits_to_keep` (an int n: the last n positions, or a tensor of positions) lets
        generation skip the vocabulary projection of the prompt's other positions.
        """
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
                             return_dict=True, **_base_inputs(kwargs))
        logits = self.lm_head(_keep_last(outputs.last_hidden_state, logits_to_keep))
        loss = None
        if labels is not None:
            loss = causal_lm_loss(logits, labels, self.config.vocab_size,
                                  num_items_in_batch=kwargs.get("num_items_in_batch"),
                                  shift_labels=kwargs.get("shift_labels"))
        output = CausalLMOutputWithPast(loss=loss, logits=logits, past_key_values=outputs.past_key_values,
                                        hidden_states=outputs.hidden_states, attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


def _last_token_indices(config, input_ids, batch_size):
    """Index of each row's last non-padding token (HF: the rightmost non-pad position; -1 without a pad id)."""
    pad_token_id = config.pad_token_id
    if pad_token_id is None:
        if batch_size != 1:
            raise ValueError("Cannot handle batch sizes > 1 if no padding token is defined.")
        return -1
    if input_ids is None:
        return -1
    non_pad = (input_ids != pad_token_id).to(core.int32)
    positions = core.arange(input_ids.shape[-1], dtype=core.int32, device=input_ids.device)
    return (positions * non_pad).argmax(-1)


class GemmaForSequenceClassification(GemmaPreTrainedModel):
    """Classifies a sequence from the logits at its last non-padding token."""

    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.model = GemmaModel(config)
        self.score = nn.Linear(config.hidden_size, self.num_labels, bias=False)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
                             return_dict=True, **_base_inputs(kwargs))
        logits = self.score(outputs.last_hidden_state)
        batch_size = logits.shape[0]
        last = _last_token_indices(self.config, input_ids, batch_size)
        pooled_logits = logits[core.arange(batch_size, device=logits.device), last]
        loss = sequence_classification_loss(self.config, self.num_labels, pooled_logits, labels) \
            if labels is not None else None
        output = SequenceClassifierOutputWithPast(loss=loss, logits=pooled_logits,
                                                  past_key_values=outputs.past_key_values,
                                                  hidden_states=outputs.hidden_states, attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


def _token_classifier_dropout(config):
    for name in ("classifier_dropout", "hidden_dropout"):
        if getattr(config, name, None) is not None:
            return getattr(config, name)
    return 0.1


class GemmaForTokenClassification(GemmaPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.model = GemmaModel(config)
        self.dropout = nn.Dropout(_token_classifier_dropout(config))
        self.score = nn.Linear(config.hidden_size, config.num_labels,
                               bias=getattr(config, "token_classification_bias", True))
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        outputs = self.model(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                             past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
                             return_dict=True, **_base_inputs(kwargs))
        logits = self.score(self.dropout(outputs.last_hidden_state))
        loss = None
        if labels is not None:
            loss = nn.functional.cross_entropy(logits.view(-1, self.num_labels).float(), labels.view(-1),
                                               ignore_index=-100)
        output = TokenClassifierOutput(loss=loss, logits=logits, hidden_states=outputs.hidden_states,
                                       attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()


__all__ = [
    "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification", "GemmaModel",
    "GemmaPreTrainedModel",
]
