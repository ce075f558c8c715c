# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""GPT-NeoX configuration (defaults: EleutherAI/gpt-neox-20b; Pythia uses the same class).

Multi-head attention (no grouped-query heads) with biased projections (`attention_bias`),
LayerNorm (`layer_norm_eps`), one dropout for embeddings and residual branches
(`hidden_dropout`), parallel or sequential residuals (`use_parallel_residual`), and partial
rotary: released files name the rotated fraction `rotary_pct` (default 0.25) and the base
`rotary_emb_base`, both folded into `rope_parameters`.
"""
from ...configuration_utils import PretrainedConfig


class GPTNeoXConfig(PretrainedConfig):
    model_type = "gpt_neox"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = {
        "layers.*.attention.query_key_value": "colwise",
        "layers.*.attention.dense": "rowwise",
        "layers.*.mlp.dense_h_to_4h": "colwise",
        "layers.*.mlp.dense_4h_to_h": "rowwise",
    }
    base_model_pp_plan = {
        "embed_in": (["input_ids"], ["inputs_embeds"]),
        "emb_dropout": (["inputs_embeds"], ["hidden_states"]),
        "layers": (["hidden_states", "attention_mask"], ["hidden_states"]),
        "final_layer_norm": (["hidden_states"], ["hidden_states"]),
    }

    vocab_size: int = 50432
    hidden_size: int = 6144
    num_hidden_layers: int = 44
    num_attention_heads: int = 64
    intermediate_size: int = 24576
    hidden_act: str = "gelu"
    attention_dropout: float = 0.0
    hidden_dropout: float = 0.0
    classifier_dropout: float = 0.1
    max_position_embeddings: int = 2048
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-5
    use_cache: bool = True
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 2
    pad_token_id: int | None = None
    tie_word_embeddings: bool = False
    use_parallel_residual: bool = True
    rope_parameters: dict | None = None
    attention_bias: bool = True
    is_decoder: bool = False

    @property
    def num_key_value_heads(self):
        """Every head has its own keys and values; the shared attention and cache read this."""
        return self.num_attention_heads

    def __post_init__(self, **kwargs):
        kwargs.pop("num_key_value_heads", None)  # no grouped-query heads: HF's GPT-NeoX ignores the key too
        rope = dict(kwargs.pop("rope_scaling", None) or self.rope_parameters or {})
        rope.setdefault("rope_theta", kwargs.pop("rotary_emb_base", self.default_theta))
        if "rotary_pct" in kwargs:
            rope["partial_rotary_factor"] = kwargs.pop("rotary_pct")
        rope.setdefault("partial_rotary_factor", 0.25)
        self.rope_parameters = rope
        super().__post_init__(**kwargs)

    def validate_architecture(self):
        super().validate_architecture()
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) must be a multiple of num_attention_heads "
                             f"({self.num_attention_heads})")
