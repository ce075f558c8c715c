# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The blocks of a Llama-style decoder, written once for every family built like it.

A decoder family is declared as its difference from these blocks (see docs/adding_a_model.md):
the classes read what varies from the config (`attention_bias`, `mlp_bias`, `head_dim`,
`hidden_act`, `layer_types` / `sliding_window`, `attn_logit_softcapping`) and expose the rest
as class attributes a family overrides (`DecoderLayer.attention_class`, `DecoderLayer.norm_class`,
`DecoderAttention.qk_norm`, ...), or as small methods (`DecoderLayer.build_norm`,
`DecoderModel.build_embeddings`, ...).

Decoding is memory-bound, so the per-token path stays lean: cos/sin are computed once per
forward and shared by every layer, the cache writes new keys into preallocated storage, and
attention runs as one fused node where the options allow.
"""
from .. import core
from ..core import nn
from .activations import ACT2FN, gated_activation
from .cache_utils import DynamicCache, attention_layer_types
from .loss_utils import causal_lm_loss
from .masking_utils import create_causal_mask, create_sliding_window_causal_mask
from .modeling_attention import ALL_ATTENTION_FUNCTIONS, eager_attention_forward, split_heads
from .modeling_layers import GradientCheckpointingLayer, GenericHead, keep_last_positions, output_flags
from .modeling_outputs import BaseModelOutputWithPast, CausalLMOutputWithPast
from .modeling_rotary import RotaryEmbedding, apply_rotary_pos_emb
from .modeling_utils import PreTrainedModel
from .padding_free import DENSE_ROWS


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight, normalised in float32 and cast back before the weight (Llama)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(core.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        if hidden_states.dtype == core.float32 and self.weight.dtype == core.float32:
            # One fused node; the same arithmetic as the general path below.
            return nn.functional.rms_norm(hidden_states, (hidden_states.shape[-1],), self.weight,
                                          eps=self.variance_epsilon)
        input_dtype = hidden_states.dtype
        if input_dtype in (core.bfloat16, core.float16) and not (core.is_grad_enabled() and hidden_states.requires_grad):
            # The norm of a half array computes on its float32 values and rounds once: the
            # casts to float32 and back without their two passes. (Its backward would compute
            # in the half dtype, where the casts' computes in float32 as HF's does.)
            normed = nn.functional.rms_norm(hidden_states, (hidden_states.shape[-1],), eps=self.variance_epsilon)
        else:
            normed = nn.functional.rms_norm(hidden_states.float(), (hidden_states.shape[-1],),
                                            eps=self.variance_epsilon).to(input_dtype)
        return self.weight * normed

    def extra_repr(self):
        return f"{tuple(self.weight.shape)}, eps={self.variance_epsilon}"


class UnitOffsetRMSNorm(RMSNorm):
    """Gemma's RMSNorm: scales by (1 + weight), with the weight starting at zero, all in float32
    and cast back at the end (Llama casts before the weight)."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__(hidden_size, eps)
        self.weight = nn.Parameter(core.zeros(hidden_size))

    def forward(self, hidden_states):
        normed = nn.functional.rms_norm(hidden_states.float(), (hidden_states.shape[-1],), eps=self.variance_epsilon)
        return (normed * (1.0 + self.weight.float())).type_as(hidden_states)


class GatedMLP(nn.Module):
    """down(act(gate(x)) · up(x)): SwiGLU with SiLU, GeGLU with GELU; biased when `config.mlp_bias`.

    `activation_key` names the config field holding the activation (Gemma 2 and 3 call it
    `hidden_activation`). `intermediate_size` defaults to the config's; an MoE's shared expert
    is narrower or wider.
    """

    activation_key = "hidden_act"

    def __init__(self, config, intermediate_size=None):
        super().__init__()
        self.config = config
        self.hidden_size = config.hidden_size
        self.intermediate_size = config.intermediate_size if intermediate_size is None else intermediate_size
        bias = getattr(config, "mlp_bias", False)
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=bias)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=bias)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=bias)
        self.act_fn = ACT2FN[getattr(config, self.activation_key)]

    def forward(self, x):
        return self.down_proj(gated_activation(self.act_fn, self.gate_proj(x), self.up_proj(x)))


class DecoderAttention(nn.Module):
    """Multi-head or grouped-query self-attention with RoPE and an optional KV cache.

    Grouped-query: `num_key_value_heads` < `num_attention_heads`, each key/value head serving
    a group of query heads. Sliding windows need nothing here: the model builds each layer's
    mask and the cache keeps each layer's window. Class attributes a family sets:
    `qkv_bias` / `o_bias` (None: `config.attention_bias`); `qk_norm`, None, "head" (an RMSNorm
    of head_dim on each head's query and key, Qwen3) or "projection" (one across all heads,
    before the split, OLMo 2), with `norm_class` for it; `has_sinks` (a learned logit per head
    that joins the softmax, gpt-oss); `use_rope` (False: a NoPE layer, SmolLM3).
    `config.attn_logit_softcapping` caps the scores and `config.query_pre_attn_scalar` replaces
    head_dim in the 1/sqrt scaling (Gemma 2). A family with other projection layers (fused qkv,
    an output layer named `dense`) overrides `build_projections`, `project` and `project_output`.
    """

    qkv_bias = None
    o_bias = None
    qk_norm = None
    norm_class = RMSNorm
    has_sinks = False
    use_rope = True

    def __init__(self, config, layer_idx):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.scaling = (getattr(config, "query_pre_attn_scalar", None) or self.head_dim) ** -0.5
        self.attention_dropout = config.attention_dropout
        self.softcap = getattr(config, "attn_logit_softcapping", None)
        self.is_causal = True
        # The window this layer attends over (None: all past keys), as HF's modules record it.
        self.layer_type = attention_layer_types(config)[layer_idx]
        self.sliding_window = config.sliding_window if self.layer_type == "sliding_attention" else None
        q_size = config.num_attention_heads * self.head_dim
        kv_size = config.num_key_value_heads * self.head_dim
        self.build_projections(config, q_size, kv_size)
        if self.qk_norm is not None:
            q_norm_size, k_norm_size = (self.head_dim, self.head_dim) if self.qk_norm == "head" else (q_size, kv_size)
            self.q_norm = self.norm_class(q_norm_size, eps=config.rms_norm_eps)
            self.k_norm = self.norm_class(k_norm_size, eps=config.rms_norm_eps)
        self.sinks = nn.Parameter(core.empty(config.num_attention_heads)) if self.has_sinks else None

    def build_projections(self, config, q_size, kv_size):
        """The input projections and the output projection (`q_proj`, `k_proj`, `v_proj`, `o_proj`)."""
        qkv_bias, o_bias = self.projection_biases(config)
        self.q_proj = nn.Linear(config.hidden_size, q_size, bias=qkv_bias)
        self.k_proj = nn.Linear(config.hidden_size, kv_size, bias=qkv_bias)
        self.v_proj = nn.Linear(config.hidden_size, kv_size, bias=qkv_bias)
        self.o_proj = nn.Linear(q_size, config.hidden_size, bias=o_bias)

    def projection_biases(self, config):
        """(q/k/v bias, o_proj bias): the class's `qkv_bias`/`o_bias`, else `config.attention_bias`."""
        config_bias = getattr(config, "attention_bias", False)
        return (config_bias if self.qkv_bias is None else self.qkv_bias,
                config_bias if self.o_bias is None else self.o_bias)

    def project(self, hidden_states):
        """(query, key, value), each (batch, heads, seq, head_dim), q/k normalised if the family says so."""
        query, key, value = self.q_proj(hidden_states), self.k_proj(hidden_states), self.v_proj(hidden_states)
        if self.qk_norm == "projection":
            query, key = self.q_norm(query), self.k_norm(key)
        elif self.qk_norm == "head":
            # HF's order: each head normalised in the projection's (batch, seq, heads, head_dim)
            # layout, then transposed, so the heads stay views of those rows (the rotation and
            # attention read them in place)
            rows = (*query.shape[:-1], -1, self.head_dim)
            query, key = (norm(t.view(rows)).transpose(1, 2) for norm, t in ((self.q_norm, query), (self.k_norm, key)))
            return query, key, split_heads(value, self.head_dim)
        return tuple(split_heads(t, self.head_dim) for t in (query, key, value))

    def project_output(self, attention_output):
        """The output projection of the heads' concatenated outputs."""
        return self.o_proj(attention_output)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, rows=DENSE_ROWS, **kwargs):
        """`rows` lays out packed tokens (padding_free, an encoder's) as the padded batch around
        the attention itself: the projections run on the packed tokens."""
        query, key, value = (rows.unpack_heads(t) for t in self.project(hidden_states))
        input_shape = (query.shape[0], query.shape[2])
        if self.use_rope:
            cos, sin = position_embeddings
            query, key = apply_rotary_pos_emb(query, key, cos, sin)
        if past_key_values is not None:
            key, value = past_key_values.update(key, value, self.layer_idx)
        implementation = "eager" if output_attentions else self.config._attn_implementation
        attention = ALL_ATTENTION_FUNCTIONS.get_interface(implementation, eager_attention_forward)
        output, weights = attention(self, query, key, value, attention_mask, scaling=self.scaling,
                                    dropout=self.attention_dropout if self.training else 0.0,
                                    softcap=self.softcap, sinks=self.sinks)
        return self.project_output(rows.pack(output.reshape(input_shape + (-1,)))), weights


class DecoderLayer(GradientCheckpointingLayer):
    """Pre-norm: x + attn(norm(x)), then x + mlp(norm(x)).

    With `parallel_residual` (GPT-J's block: Phi, GPT-NeoX, Falcon) attention and MLP both read
    the block's input, x + attn(norm(x)) + mlp(norm'(x)), where the MLP's input is
    `parallel_mlp_input`. `residual_dropout_key` names the config field of the dropout on
    each branch's output before it joins the residual (`resid_pdrop`, `hidden_dropout`);
    `attention_name` the attention's attribute in checkpoints (GPT-NeoX: `attention`).
    """

    attention_class = DecoderAttention
    mlp_class = GatedMLP
    norm_class = RMSNorm
    parallel_residual = False
    residual_dropout_key = None
    attention_name = "self_attn"

    def __init__(self, config, layer_idx):
        super().__init__()
        self.hidden_size = config.hidden_size
        setattr(self, self.attention_name, self.attention_class(config=config, layer_idx=layer_idx))
        self.mlp = self.build_mlp(config, layer_idx)
        self.input_layernorm = self.build_norm(config)
        self.post_attention_layernorm = self.build_norm(config)
        self.residual_dropout = getattr(config, self.residual_dropout_key) if self.residual_dropout_key else 0.0

    def build_mlp(self, config, layer_idx):
        """This layer's feed-forward block; MoE families choose per layer between experts and a dense MLP."""
        return self.mlp_class(config)

    @classmethod
    def build_norm(cls, config):
        """A norm over hidden_size; the model builds its final norm the same way."""
        return cls.norm_class(config.hidden_size, eps=config.rms_norm_eps)

    def parallel_mlp_input(self, hidden_states, normed):
        """The MLP's input in a parallel block: its own norm of the block's input (GPT-NeoX);
        a family whose block has one norm (Phi) returns the attention's input `normed`."""
        return self.post_attention_layernorm(hidden_states)

    def forward(self, hidden_states, position_embeddings, attention_mask=None, past_key_values=None,
                output_attentions=False, **kwargs):
        normed = self.input_layernorm(hidden_states)
        attention = getattr(self, self.attention_name)
        attention_output, weights = attention(normed, position_embeddings, attention_mask=attention_mask,
                                              past_key_values=past_key_values, output_attentions=output_attentions)
        attention_output = self.dropout_branch(attention_output)
        if self.parallel_residual:
            mlp_output = self.mlp(self.parallel_mlp_input(hidden_states, normed))
            return hidden_states + attention_output + self.dropout_branch(mlp_output), weights
        hidden_states = hidden_states + attention_output
        hidden_states = hidden_states + self.dropout_branch(self.mlp(self.post_attention_layernorm(hidden_states)))
        return hidden_states, weights

    def dropout_branch(self, branch_output):
        """The residual dropout on an attention or MLP output (`residual_dropout_key`)."""
        return nn.functional.dropout(branch_output, p=self.residual_dropout, training=self.training)


class DecoderPreTrainedModel(PreTrainedModel):
    """What every decoder family's `<Name>PreTrainedModel` shares; the family adds its config class."""

    base_model_prefix = "model"
    supports_gradient_checkpointing = True
    _supports_sdpa = True
    _supports_attention_backend = True
    _can_compile_fullgraph = True  # HF's flag: static caches, masks and decoding steps under core.compile

    def _init_weights(self, module):
        super()._init_weights(module)
        if isinstance(module, UnitOffsetRMSNorm):
            nn.init.zeros_(module.weight)
        elif isinstance(module, RMSNorm):
            nn.init.ones_(module.weight)
        elif isinstance(module, DecoderAttention) and module.sinks is not None:
            nn.init.normal_(module.sinks, mean=0.0, std=self.config.initializer_range)


_MASK_FUNCTIONS = {"full_attention": create_causal_mask, "sliding_attention": create_sliding_window_causal_mask}


class DecoderModel:
    """The decoder stack, mixed into a family's PreTrainedModel: embeddings, layers, final norm.

    Returns the last hidden states and the cache. Each layer gets the mask of its kind
    (`config.layer_types`; else sliding-window everywhere when `config.sliding_window` is
    set, else full), the same rule by which the cache decides which layers keep a window.
    `embeddings_name`, `layers_name` and `final_norm_name` are the attribute names of the token
    embedding, the layer list and the final norm in the family's checkpoints (`embed_in`, `h`,
    `final_layernorm`, ...). A family without rotary embeddings (OPT's learned positions) sets
    `rotary_class` to None; its layers then get None for `position_embeddings`.
    """

    layer_class = DecoderLayer
    rotary_class = RotaryEmbedding
    embeddings_name = "embed_tokens"
    layers_name = "layers"
    final_norm_name = "norm"

    def __init__(self, config):
        super().__init__(config)
        self.padding_idx = config.pad_token_id
        self.vocab_size = config.vocab_size
        setattr(self, self.embeddings_name, self.build_embeddings(config))
        setattr(self, self.layers_name,
                nn.ModuleList([self.layer_class(config, i) for i in range(config.num_hidden_layers)]))
        setattr(self, self.final_norm_name, self.layer_class.build_norm(config))
        self.rotary_emb = self.rotary_class(config=config) if self.rotary_class is not None else None
        self.gradient_checkpointing = False
        self.post_init()

    def get_input_embeddings(self):
        return getattr(self, self.embeddings_name)

    def set_input_embeddings(self, value):
        setattr(self, self.embeddings_name, value)

    def build_embeddings(self, config):
        """The token embedding; a family whose embeddings are scaled (Gemma) returns its own."""
        return nn.Embedding(config.vocab_size, config.hidden_size, self.padding_idx)

    def input_hidden_states(self, inputs_embeds, position_ids):
        """The first layer's input from the token embeddings (StarCoder2 applies dropout here, OPT
        adds its learned position embeddings)."""
        return inputs_embeds

    def final_hidden_states(self, hidden_states):
        """The model's output from the last layer's: the final norm (OPT may also project it out)."""
        return getattr(self, self.final_norm_name)(hidden_states)

    def attention_masks(self, kinds, inputs_embeds, attention_mask, past_key_values, cache_position, position_ids):
        """{layer kind: its additive mask}; Falcon adds its ALiBi bias to them."""
        return {kind: _MASK_FUNCTIONS[kind](self.config, inputs_embeds, attention_mask, past_key_values,
                                            cache_position=cache_position, position_ids=position_ids)
                for kind in kinds}

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                return_dict=None, cache_position=None, **kwargs):
        output_attentions, output_hidden_states, return_dict = output_flags(
            self.config, output_attentions, output_hidden_states, return_dict)
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("You must specify exactly one of input_ids or inputs_embeds")
        use_cache = use_cache if use_cache is not None else self.config.use_cache
        if self.gradient_checkpointing and self.training:
            use_cache = False  # recomputing a layer in backward would write its keys to the cache twice
        if inputs_embeds is None:
            inputs_embeds = self.get_input_embeddings()(input_ids)
        if use_cache and past_key_values is None:
            past_key_values = DynamicCache(config=self.config)
        if cache_position is None:
            past_seen = past_key_values.get_seq_length() if past_key_values is not None else 0
            cache_position = core.arange(past_seen, past_seen + inputs_embeds.shape[1], device=inputs_embeds.device)
        if position_ids is None:
            position_ids = cache_position.unsqueeze(0)
        layer_types = attention_layer_types(self.config)
        masks = self.attention_masks(set(layer_types), inputs_embeds, attention_mask, past_key_values,
                                     cache_position, position_ids)
        hidden_states = self.input_hidden_states(inputs_embeds, position_ids)
        if self.rotary_emb is None:
            position_embeddings = dict.fromkeys(layer_types)
        else:
            position_embeddings = self.rotary_emb.for_layer_types(hidden_states, position_ids, masks)
        all_hidden = () if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer, layer_type in zip(getattr(self, self.layers_name)[: self.config.num_hidden_layers], layer_types):
            if output_hidden_states:
                all_hidden += (hidden_states,)
            hidden_states, weights = layer(hidden_states, position_embeddings[layer_type],
                                           attention_mask=masks[layer_type],
                                           past_key_values=past_key_values, output_attentions=output_attentions)
            if output_attentions:
                all_attentions += (weights,)
        hidden_states = self.final_hidden_states(hidden_states)
        if output_hidden_states:
            all_hidden += (hidden_states,)
        output = BaseModelOutputWithPast(last_hidden_state=hidden_states,
                                         past_key_values=past_key_values if use_cache else None,
                                         hidden_states=all_hidden, attentions=all_attentions)
        return output if return_dict else output.to_tuple()


class GenericForCausalLM(GenericHead):
    """Next-token logits from `lm_head` (tied to the embeddings when the config says so; biased
    when `lm_head_bias`, Phi; named `lm_head_name`, GPT-NeoX's `embed_out`), bounded to (-c, c)
    by c·tanh(logits/c) when `config.final_logit_softcapping` is c (Gemma 2)."""

    lm_head_bias = False
    lm_head_name = "lm_head"

    _tied_weights_keys = {"lm_head.weight": "model.embed_tokens.weight"}
    # How HF's tensor and pipeline parallelism split the head (metadata HF's tooling reads).
    _tp_plan = {"lm_head": "colwise_gather_output"}
    _pp_plan = {"lm_head": (["hidden_states"], ["logits"])}

    def __init__(self, config):
        super().__init__(config)
        self._build_base_model(config)
        self.vocab_size = config.vocab_size
        setattr(self, self.lm_head_name,
                nn.Linear(getattr(config, self.hidden_size_key), config.vocab_size, bias=self.lm_head_bias))
        self.post_init()

    def get_output_embeddings(self):
        return getattr(self, self.lm_head_name)

    def set_output_embeddings(self, new_embeddings):
        setattr(self, self.lm_head_name, new_embeddings)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, return_dict=None, logits_to_keep=0, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        loss, logits, outputs = self.predict_next_tokens(
            input_ids, labels, logits_to_keep, kwargs, attention_mask=attention_mask, position_ids=position_ids,
            past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache)
        output = CausalLMOutputWithPast(loss=loss, logits=logits, past_key_values=outputs.past_key_values,
                                        hidden_states=outputs.hidden_states, attentions=outputs.attentions)
        return output if return_dict else output.to_tuple()

    def predict_next_tokens(self, input_ids, labels, logits_to_keep, kwargs, **inputs):
        """(loss, logits, base model outputs): next-token logits and, with `labels`, the shifted
        cross-entropy (-100 ignored).

        `logits_to_keep` (an int n: the last n positions, or a tensor of positions) lets
        generation skip the vocabulary projection of the prompt's other positions.
        """
        outputs = self._run_base_model(input_ids, kwargs, **inputs)
        logits = self.get_output_embeddings()(keep_last_positions(outputs.last_hidden_state, logits_to_keep))
        softcap = getattr(self.config, "final_logit_softcapping", None)
        if softcap is not None:
            logits = core.tanh(logits / softcap) * softcap
        loss = None
        if labels is not None:
            loss = causal_lm_loss(logits, labels, self.config.vocab_size,
                                  num_items_in_batch=kwargs.get("num_items_in_batch"),
                                  shift_labels=kwargs.get("shift_labels"))
        return loss, logits, outputs
