# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Tensor-parallel plans: which sharding style each parameter of a model would get.

Configs carry HF's `base_model_tp_plan` (module patterns → style) as metadata and models
expose the assembled `tp_plan`; mindnlp does not shard models across devices itself.
"""
import re


def replace_layer_number_by_wildcard(name):
    """'layers.3.mlp.up_proj' → 'layers.*.mlp.up_proj': module-list indices become wildcards
    (digits inside a name, as in 'w1', stay)."""
    return re.sub(r"\.\d+(\.|$)", lambda m: ".*" + m.group(1), name)


def _get_parameter_tp_plan(parameter_name, tp_plan, is_weight=True):
    """The plan's style for a parameter (or module) name, or None. A weight or bias also
    matches the entry of the module that owns it."""
    generic = replace_layer_number_by_wildcard(parameter_name)
    if generic in tp_plan:
        return tp_plan[generic]
    if is_weight and "." in generic:
        module_name = generic.rsplit(".", 1)[0]
        if module_name in tp_plan:
            return tp_plan[module_name]
    return None
