# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Which key renamings apply to a model's checkpoints (HF v5's conversion registry).

"legacy" holds renamings of old checkpoint formats that any model may meet (TF-era
LayerNorm.gamma/beta); families register their own under their model_type. MoE checkpoints
hold one Linear per expert, which loading stacks into the fused 3-D expert parameters.
"""
import copy

from .core_model_loading import Concatenate, MergeModulelist, WeightConverter, WeightRenaming


def _per_expert_gated_mlp(gate, up, down):
    """Per-expert `experts.<i>.{gate,up,down}` Linear weights into `experts.gate_up_proj` / `experts.down_proj`."""
    return [
        WeightConverter([f".experts.*.{gate}.weight", f".experts.*.{up}.weight"], ".experts.gate_up_proj",
                        operations=[MergeModulelist(dim=0), Concatenate(dim=1)]),
        WeightConverter(f".experts.*.{down}.weight", ".experts.down_proj", operations=[MergeModulelist(dim=0)]),
    ]


def _build_registry():
    qwen2_moe = _per_expert_gated_mlp("gate_proj", "up_proj", "down_proj")
    return {
        "legacy": [
            WeightRenaming(source_patterns="LayerNorm.gamma", target_patterns="LayerNorm.weight"),
            WeightRenaming(source_patterns="LayerNorm.beta", target_patterns="LayerNorm.bias"),
        ],
        "mixtral": [WeightRenaming(".block_sparse_moe.", ".mlp."), *_per_expert_gated_mlp("w1", "w3", "w2")],
        "qwen2_moe": qwen2_moe,
        "qwen3_moe": qwen2_moe,
        "deepseek_v3": qwen2_moe,
    }


# Renamings of layouts that loading still reads but saving no longer writes (so never reverted):
# Gemma 3 checkpoints written before transformers 5 nest the SigLIP tower's modules one level deeper.
_OLDER_LAYOUTS = {
    "gemma3": [WeightRenaming(r"vision_tower\.vision_model\.", "vision_tower.")],
}

_registry = None


def _conversions():
    global _registry
    if _registry is None:
        _registry = _build_registry()
    return _registry


def get_checkpoint_conversion_mapping(model_type):
    return copy.deepcopy(_conversions().get(model_type))


def register_checkpoint_conversion_mapping(model_type, mapping, overwrite=False):
    if model_type in _conversions() and not overwrite:
        raise ValueError(f"Model type {model_type} already exists in the checkpoint conversion mapping.")
    _conversions()[model_type] = mapping


def get_model_conversion_mapping(model, key_mapping=None, hf_quantizer=None, add_legacy=True):
    """The renamings to apply when loading into `model`: a caller's key_mapping (else the model
    class's `_checkpoint_conversion_mapping`: the vision-language models' saved layout), the
    model type's registered ones, then (add_legacy, loading only) the model type's older layouts
    and the legacy ones."""
    if hf_quantizer is not None:
        raise NotImplementedError("mindnlp has no quantizers: checkpoint conversion for one is not available")
    if key_mapping is None:
        key_mapping = getattr(model, "_checkpoint_conversion_mapping", None)
    conversions = [WeightRenaming(k, v) for k, v in (key_mapping or {}).items()]
    model_type = getattr(model.config, "model_type", None)
    conversions += get_checkpoint_conversion_mapping(model_type) or []
    if add_legacy:
        conversions += copy.deepcopy(_OLDER_LAYOUTS.get(model_type, []))
        conversions += get_checkpoint_conversion_mapping("legacy")
    return conversions
