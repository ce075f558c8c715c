# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""ModernBERT configuration (defaults: answerdotai/ModernBERT-base).

Layers alternate between full attention and a local window of `local_attention` tokens (each
token sees `local_attention // 2` on either side, `sliding_window`): every
`global_attn_every_n_layers`-th layer, from the first, is global, unless `layer_types` says
otherwise. The two kinds rotate with their own RoPE bases, so `rope_parameters` holds one
dict per layer type, filled from v4's `global_rope_theta` (160k) and `local_rope_theta` (10k);
v4's `rope_scaling` applies to both.
"""
from ...configuration_utils import PretrainedConfig


class ModernBertConfig(PretrainedConfig):
    model_type = "modernbert"
    keys_to_ignore_at_inference = ["past_key_values"]
    default_theta = {"global": 160_000.0, "local": 10_000.0}

    vocab_size: int = 50368
    hidden_size: int = 768
    intermediate_size: int = 1152
    num_hidden_layers: int = 22
    num_attention_heads: int = 12
    hidden_activation: str = "gelu"
    max_position_embeddings: int = 8192
    initializer_range: float = 0.02
    initializer_cutoff_factor: float | int | None = 2.0
    norm_eps: float = 1e-5
    norm_bias: bool = False
    pad_token_id: int | None = 50283
    eos_token_id: int | list[int] | None = 50282
    bos_token_id: int | None = 50281
    cls_token_id: int | None = 50281
    sep_token_id: int | None = 50282
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    layer_types: list[str] | None = None
    rope_parameters: dict | None = None
    local_attention: int = 128
    embedding_dropout: float | int = 0.0
    mlp_bias: bool = False
    mlp_dropout: float | int = 0.0
    decoder_bias: bool = True
    classifier_pooling: str = "cls"
    classifier_dropout: float | int = 0.0
    classifier_bias: bool = False
    classifier_activation: str = "gelu"
    deterministic_flash_attn: bool = False
    sparse_prediction: bool = False
    sparse_pred_ignore_index: int = -100
    tie_word_embeddings: bool = True

    def __post_init__(self, **kwargs):
        if self.classifier_pooling not in ("cls", "mean"):
            raise ValueError(f'classifier_pooling must be "cls" or "mean", not {self.classifier_pooling!r}')
        kwargs.pop("reference_compile", None)  # a torch.compile switch of older files
        self.global_attn_every_n_layers = kwargs.pop("global_attn_every_n_layers", 3)
        if self.layer_types is None:
            self.layer_types = ["sliding_attention" if i % self.global_attn_every_n_layers else "full_attention"
                                for i in range(self.num_hidden_layers)]
        if len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types lists {len(self.layer_types)} layers, the model has {self.num_hidden_layers}")
        rope = self.rope_parameters or {}
        rope = {kind: dict(rope.get(kind) or {"rope_type": "default"})
                for kind in ("full_attention", "sliding_attention")}
        scaling = kwargs.pop("rope_scaling", None) or {}
        for params in rope.values():
            params.update(scaling)
        rope["full_attention"].setdefault("rope_theta", kwargs.pop("global_rope_theta", self.default_theta["global"]))
        rope["sliding_attention"].setdefault("rope_theta",
                                             kwargs.pop("local_rope_theta", self.default_theta["local"]))
        self.rope_parameters = rope
        super().__post_init__(**kwargs)

    @property
    def sliding_window(self):
        """How far a local layer sees on each side: half of `local_attention`."""
        return self.local_attention // 2

    @sliding_window.setter
    def sliding_window(self, value):
        self.local_attention = value * 2

    @property
    def num_key_value_heads(self):
        """Every head has its own keys and values."""
        return self.num_attention_heads
