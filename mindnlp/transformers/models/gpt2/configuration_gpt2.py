# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-2 configuration (defaults: openai-community/gpt2, the 124M model).

GPT-2 names its sizes `n_embd`, `n_positions`, `n_head`, `n_layer`; the common names map onto them.
"""
from ...configuration_utils import PretrainedConfig


class GPT2Config(PretrainedConfig):
    """`n_inner` is the feed-forward size (None: 4 * n_embd). The `summary_*` fields configure
    the sequence-summary head of the double-heads model. `scale_attn_by_inverse_layer_idx`
    additionally divides attention scores by layer_idx + 1; `reorder_and_upcast_attn` computes
    them in float32 with keys pre-scaled."""

    model_type = "gpt2"
    keys_to_ignore_at_inference = ["past_key_values"]
    attribute_map = {
        "hidden_size": "n_embd",
        "max_position_embeddings": "n_positions",
        "num_attention_heads": "n_head",
        "num_hidden_layers": "n_layer",
    }

    vocab_size: int = 50257
    n_positions: int = 1024
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    n_inner: int | None = None
    activation_function: str = "gelu_new"
    resid_pdrop: float | int = 0.1
    embd_pdrop: float | int = 0.1
    attn_pdrop: float | int = 0.1
    layer_norm_epsilon: float = 1e-5
    initializer_range: float = 0.02
    summary_type: str = "cls_index"
    summary_use_proj: bool = True
    summary_activation: str | None = None
    summary_proj_to_labels: bool = True
    summary_first_dropout: float | int = 0.1
    scale_attn_weights: bool = True
    use_cache: bool = True
    bos_token_id: int | None = 50256
    eos_token_id: int | list[int] | None = 50256
    pad_token_id: int | None = None
    scale_attn_by_inverse_layer_idx: bool = False
    reorder_and_upcast_attn: bool = False
    add_cross_attention: bool = False
    tie_word_embeddings: bool = True
