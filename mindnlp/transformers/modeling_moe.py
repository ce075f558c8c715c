# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The mixture-of-experts blocks of decoder families (Mixtral, Qwen2-MoE, Qwen3-MoE, ...), written once.

A sparse MoE block replaces a layer's MLP: a router scores every expert for every token,
each token goes to its `num_experts_per_tok` best experts, and their outputs are summed
with the router's weights. A family declares its block by subclassing `SparseMoeBlock`
(a shared expert beside the routed ones, say) and sets it as its layer's `mlp_class`, or
returns it from `DecoderLayer.build_mlp` for the layers that have experts.

The experts are stored as HF v5 stores them, one 3-D parameter for all of them
(`experts.gate_up_proj`: experts × 2·intermediate × hidden, `experts.down_proj`), and run
grouped: the token-expert assignments are sorted by expert and each expert that received
tokens runs one matrix product over all of them. A token costs the work of its top-k
experts, never that of all of them.

`MoeModel` and `MoeForCausalLM` add to the decoder stack what routing adds to the outputs:
the router logits of every MoE layer (`output_router_logits`) and the auxiliary
load-balancing loss, weighted by `router_aux_loss_coef` into the LM loss.
"""
import contextlib

from .. import core
from ..core import nn
from .activations import ACT2FN, gated_activation
from .integrations.moe import ALL_EXPERTS_FUNCTIONS, grouped_mm_experts_forward
from .modeling_decoder import DecoderModel, DecoderPreTrainedModel, GenericForCausalLM
from .modeling_outputs import MoeCausalLMOutputWithPast, MoeModelOutputWithPast


def load_balancing_loss_func(gate_logits, num_experts=None, top_k=2, attention_mask=None):
    """Switch Transformer's auxiliary loss (Fedus et al., 2021, eqs. 4-6), summed over layers.

    num_experts · Σ_e f_e · P_e, where f_e is the fraction of top-k assignments that go to
    expert e and P_e the mean router probability of e, over every layer's tokens; the
    padding positions of `attention_mask` (batch, seq) are left out. It is 1 · top_k when
    the routing is uniform and grows as it concentrates. `gate_logits` is the tuple of
    per-layer router logits (tokens × experts); anything else gives 0, as in HF.
    """
    if gate_logits is None or not isinstance(gate_logits, tuple):
        return 0
    device = gate_logits[0].device
    flat_mask = None
    if attention_mask is not None:
        flat_mask = attention_mask.reshape(-1).to(device=device, dtype=core.float32)
    assignments = core.zeros(num_experts, dtype=core.float32, device=device)
    probabilities = core.zeros(num_experts, dtype=core.float32, device=device)
    rows = 0.0
    for layer_logits in gate_logits:
        routing_weights = nn.functional.softmax(layer_logits.to(device).float(), dim=-1)
        _, selected = core.topk(routing_weights, top_k, dim=-1)
        counted = None if flat_mask is None else flat_mask.repeat_interleave(top_k)
        assignments = assignments + core.bincount(selected.reshape(-1), weights=counted, minlength=num_experts).float()
        if flat_mask is None:
            probabilities = probabilities + routing_weights.sum(dim=0)
            rows = rows + routing_weights.shape[0]
        else:
            probabilities = probabilities + (routing_weights * flat_mask.unsqueeze(-1)).sum(dim=0)
            rows = rows + flat_mask.sum()
    return (assignments / rows * (probabilities / rows)).sum() * num_experts


class TopKRouter(nn.Module):
    """Linear scores over the experts → softmax (in float32) → the top-k experts of each token.

    Returns (router logits, the top-k weights, the top-k expert indices). The weights are the
    top-k probabilities, renormalised to sum to 1 when `config.norm_topk_prob` (Mixtral, whose
    config has no such key, always renormalises).
    """

    def __init__(self, config):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.num_experts = config.num_experts
        self.norm_topk_prob = getattr(config, "norm_topk_prob", True)
        self.hidden_dim = config.hidden_size
        self.weight = nn.Parameter(core.zeros(self.num_experts, self.hidden_dim))

    def forward(self, hidden_states):
        hidden_states = hidden_states.reshape(-1, self.hidden_dim)
        router_logits = nn.functional.linear(hidden_states, self.weight)
        probabilities = nn.functional.softmax(router_logits.float(), dim=-1)
        top_weights, top_index = core.topk(probabilities, self.top_k, dim=-1)
        if self.norm_topk_prob:
            top_weights = top_weights / top_weights.sum(dim=-1, keepdim=True)
        return router_logits, top_weights.to(router_logits.dtype), top_index


class MoeExperts(nn.Module):
    """Every expert's gated MLP in two 3-D parameters, run grouped by expert.

    The experts' width is `config.moe_intermediate_size` where the config has one (Qwen-MoE,
    DeepSeek), else `config.intermediate_size` (Mixtral). A family whose checkpoints store
    the weights as (in, out) rather than Linear's (out, in) sets `is_transposed`, and one
    whose experts have biases (`gate_up_proj_bias`, `down_proj_bias`) sets `has_bias`
    (gpt-oss, both). `config._experts_implementation` picks how they run (see
    `integrations.moe`); by default, `grouped`.
    """

    is_transposed = False
    has_bias = False

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_experts = config.num_experts
        self.hidden_dim = config.hidden_size
        self.intermediate_dim = getattr(config, "moe_intermediate_size", None) or config.intermediate_size
        for name, (outputs, inputs) in (("gate_up_proj", (2 * self.intermediate_dim, self.hidden_dim)),
                                        ("down_proj", (self.hidden_dim, self.intermediate_dim))):
            shape = (inputs, outputs) if self.is_transposed else (outputs, inputs)
            setattr(self, name, nn.Parameter(core.empty(self.num_experts, *shape)))
            if self.has_bias:
                setattr(self, f"{name}_bias", nn.Parameter(core.empty(self.num_experts, outputs)))
        self.act_fn = ACT2FN[config.hidden_act]

    def activate(self, gate_up):
        """act(gate) · up from the gate_up projection, whose halves are gate and up."""
        gate, up = gate_up.chunk(2, dim=-1)
        return gated_activation(self.act_fn, gate, up)

    def project(self, inputs, name, experts):
        """`inputs` through projection `name` of `experts`: a tensor of experts, one per row of a
        batch (tokens, 1, in), or `slice(None)`, every expert, with inputs of (experts, tokens, in)."""
        weight = getattr(self, name)[experts]
        bias = getattr(self, f"{name}_bias")[experts] if self.has_bias else None
        if self.is_transposed:
            weight = weight.transpose(-1, -2)
        output = core.bmm(inputs, weight.transpose(1, 2))
        return output if bias is None else output + bias.unsqueeze(1)

    def project_groups(self, inputs, name, experts, ends):
        """Rows of `inputs` sorted by expert (`experts`, with `ends` the cumulative end row of
        each expert's run) through projection `name`: one grouped product (core._grouped_mm)."""
        weight = getattr(self, name)
        output = core._grouped_mm(inputs, weight if self.is_transposed else weight.transpose(1, 2), ends)
        return output + getattr(self, f"{name}_bias")[experts] if self.has_bias else output

    def forward(self, hidden_states, top_k_index, top_k_weights):
        """Σ over each token's top-k experts of weight · expert(token), for tokens × hidden states."""
        experts_forward = ALL_EXPERTS_FUNCTIONS.get_interface(self.config._experts_implementation, None)
        if experts_forward is None:
            experts_forward = MoeExperts.grouped
        if experts_forward in (MoeExperts.grouped, grouped_mm_experts_forward) and core.onnx.is_in_onnx_export():
            experts_forward = MoeExperts.dense
        return experts_forward(self, hidden_states, top_k_index, top_k_weights)

    def grouped(self, hidden_states, top_k_index, top_k_weights):
        """The (token, expert) assignments sorted by expert (stably, so a token's experts add up
        in expert order as in HF), the tokens gathered once in that order, and every expert's
        contiguous run through one grouped product per projection. The grouping lives inside
        that op, so a captured graph (core.compile) replays it for any routing, and no
        expert's weights are copied."""
        top_k = top_k_index.shape[-1]
        experts = top_k_index.reshape(-1)
        order = core.argsort(experts, stable=True)
        tokens = order // top_k
        sorted_experts = experts[order]
        every_expert = core.arange(self.num_experts, device=experts.device)
        ends = (experts.unsqueeze(-1) == every_expert).sum(dim=0).cumsum(dim=0)
        gate_up = self.project_groups(hidden_states[tokens], "gate_up_proj", sorted_experts, ends)
        projected = self.project_groups(self.activate(gate_up), "down_proj", sorted_experts, ends)
        weighted = projected * top_k_weights.reshape(-1)[order].unsqueeze(-1)
        return core.zeros_like(hidden_states).index_add(0, tokens, weighted.to(hidden_states.dtype))

    def dense(self, hidden_states, top_k_index, top_k_weights):
        """Every expert over every token, each output weighed by the token's routing weight for
        that expert (zero when not chosen): num_experts / top_k times the products, but only
        standard ops, which is what an exported ONNX graph runs."""
        tokens = hidden_states.shape[0]
        experts = core.arange(self.num_experts, device=top_k_index.device)
        chosen = (top_k_index.unsqueeze(-1) == experts).to(top_k_weights.dtype)
        routing = (chosen * top_k_weights.unsqueeze(-1)).sum(dim=1)
        inputs = hidden_states.unsqueeze(0).expand(self.num_experts, tokens, self.hidden_dim)
        gate_up = self.project(inputs, "gate_up_proj", slice(None))
        projected = self.project(self.activate(gate_up), "down_proj", slice(None))
        weighted = projected * routing.t().unsqueeze(-1).to(projected.dtype)
        return weighted.sum(dim=0).to(hidden_states.dtype)


class SparseMoeBlock(nn.Module):
    """A router and its experts in place of a layer's MLP; `router_class`, `experts_class` and
    the router's attribute name `router_name` (`gate`; gpt-oss: `router`) are the family's. In
    training, `config.router_jitter_noise` scales the inputs by a random factor in
    [1 - noise, 1 + noise] (Mixtral)."""

    router_class = TopKRouter
    experts_class = MoeExperts
    router_name = "gate"

    def __init__(self, config):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.jitter_noise = getattr(config, "router_jitter_noise", 0.0)
        setattr(self, self.router_name, self.router_class(config))
        self.experts = self.experts_class(config)

    def forward(self, hidden_states):
        shape = hidden_states.shape
        if self.training and self.jitter_noise > 0:
            noise = core.empty_like(hidden_states).uniform_(1.0 - self.jitter_noise, 1.0 + self.jitter_noise)
            hidden_states = hidden_states * noise
        hidden_states = hidden_states.reshape(-1, shape[-1])
        _, top_k_weights, top_k_index = getattr(self, self.router_name)(hidden_states)
        return self.experts(hidden_states, top_k_index, top_k_weights).reshape(shape)


class MoePreTrainedModel(DecoderPreTrainedModel):
    """Initialises the experts and routers as HF does (normal with `initializer_range`); the
    experts' implementation can be switched (`set_experts_implementation`)."""

    @classmethod
    def _can_set_experts_implementation(cls):
        return True

    def _init_weights(self, module):
        super()._init_weights(module)
        std = self.config.initializer_range
        if isinstance(module, MoeExperts):
            nn.init.normal_(module.gate_up_proj, mean=0.0, std=std)
            nn.init.normal_(module.down_proj, mean=0.0, std=std)
            if module.has_bias:
                nn.init.zeros_(module.gate_up_proj_bias)
                nn.init.zeros_(module.down_proj_bias)
        elif isinstance(module, TopKRouter):
            nn.init.normal_(module.weight, mean=0.0, std=std)


@contextlib.contextmanager
def recorded_router_logits(model, record):
    """Collect, in call order, the router logits of every TopKRouter of `model` while the block
    runs (when `record`), into the yielded list."""
    logits = []
    handles = [module.register_forward_hook(lambda _module, _args, output: logits.append(output[0]))
               for module in model.modules() if isinstance(module, TopKRouter)] if record else []
    try:
        yield logits
    finally:
        for handle in handles:
            handle.remove()


class MoeModel(DecoderModel):
    """The decoder stack of an MoE family: its outputs add `router_logits` (one tensor of
    tokens × experts per MoE layer) when `output_router_logits` (or the config) asks."""

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, use_cache=None, output_attentions=None, output_hidden_states=None,
                output_router_logits=None, return_dict=None, cache_position=None, **kwargs):
        if output_router_logits is None:
            output_router_logits = self.config.output_router_logits
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        with recorded_router_logits(self, output_router_logits) as router_logits:
            outputs = super().forward(input_ids, attention_mask=attention_mask, position_ids=position_ids,
                                      past_key_values=past_key_values, inputs_embeds=inputs_embeds,
                                      use_cache=use_cache, output_attentions=output_attentions,
                                      output_hidden_states=output_hidden_states, return_dict=True,
                                      cache_position=cache_position, **kwargs)
        output = MoeModelOutputWithPast(**outputs, router_logits=tuple(router_logits) if output_router_logits else None)
        return output if return_dict else output.to_tuple()


class MoeForCausalLM(GenericForCausalLM):
    """Next-token logits; with router logits, the load-balancing `aux_loss`, which joins the LM
    loss weighted by `config.router_aux_loss_coef`. A family trained without that loss
    (DeepSeek-V3 balances its experts with a bias instead) returns None from `auxiliary_loss`
    and its outputs carry the router logits alone."""

    def __init__(self, config):
        super().__init__(config)
        self.router_aux_loss_coef = getattr(config, "router_aux_loss_coef", 0.0)
        self.num_experts = config.num_experts
        self.num_experts_per_tok = config.num_experts_per_tok

    def auxiliary_loss(self, router_logits, attention_mask):
        """Switch Transformer's load-balancing loss over the layers' router logits."""
        return load_balancing_loss_func(router_logits, self.num_experts, self.num_experts_per_tok, attention_mask)

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, past_key_values=None,
                inputs_embeds=None, labels=None, use_cache=None, output_router_logits=None, return_dict=None,
                logits_to_keep=0, **kwargs):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        if output_router_logits is None:
            output_router_logits = self.config.output_router_logits
        loss, logits, outputs = self.predict_next_tokens(
            input_ids, labels, logits_to_keep, kwargs, attention_mask=attention_mask, position_ids=position_ids,
            past_key_values=past_key_values, inputs_embeds=inputs_embeds, use_cache=use_cache,
            output_router_logits=output_router_logits)
        aux_loss = self.auxiliary_loss(outputs.router_logits, attention_mask) if output_router_logits else None
        if aux_loss is not None and labels is not None:
            loss = loss + self.router_aux_loss_coef * aux_loss.to(loss.device)
        output = MoeCausalLMOutputWithPast(loss=loss, aux_loss=aux_loss, logits=logits,
                                           past_key_values=outputs.past_key_values,
                                           hidden_states=outputs.hidden_states, attentions=outputs.attentions,
                                           router_logits=outputs.router_logits)
        return output if return_dict else output.to_tuple()
