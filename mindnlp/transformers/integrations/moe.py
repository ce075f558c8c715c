# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""The experts implementations of mixture-of-experts layers, chosen by `config._experts_implementation`.

- "eager" (the default) and "grouped_mm": the token-expert assignments sorted by expert and
  every expert's run of tokens through one grouped product, `core._grouped_mm`, as HF's
  "grouped_mm" calls torch's (`MoeExperts.grouped`).
- "batched_mm": each assignment gathers its expert's weights and all of them run as one
  batched product: no host-side grouping, but a copy of an expert's weights per assignment,
  which only a handful of tokens (a decode step) can afford.
"""


def grouped_mm_experts_forward(module, hidden_states, top_k_index, top_k_weights):
    return module.grouped(hidden_states, top_k_index, top_k_weights)


def batched_mm_experts_forward(module, hidden_states, top_k_index, top_k_weights):
    top_k = top_k_index.shape[-1]
    experts = top_k_index.reshape(-1)
    tokens, hidden = hidden_states.shape
    inputs = hidden_states.unsqueeze(1).expand(tokens, top_k, hidden).reshape(-1, 1, hidden)
    gate_up = module.project(inputs, "gate_up_proj", experts)
    projected = module.project(module.activate(gate_up), "down_proj", experts).squeeze(1)
    weighted = projected * top_k_weights.reshape(-1, 1).to(projected.dtype)
    return weighted.view(-1, top_k, hidden_states.shape[-1]).sum(dim=1).to(hidden_states.dtype)


class ExpertsInterface:
    """Name → experts function, as HF's ALL_EXPERTS_FUNCTIONS ("eager" is the module's own)."""

    _global_mapping = {"batched_mm": batched_mm_experts_forward, "grouped_mm": grouped_mm_experts_forward}

    def get_interface(self, name, default):
        if name in (None, "eager"):
            return default
        if name not in self._global_mapping:
            raise KeyError(f"unknown experts implementation {name!r}; choose from eager, {', '.join(self._global_mapping)}")
        return self._global_mapping[name]


ALL_EXPERTS_FUNCTIONS = ExpertsInterface()
