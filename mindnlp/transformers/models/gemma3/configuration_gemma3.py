"""Gemma 3 text configuration (defaults: google/gemma-3-4b's language model).

Gemma 2's fields with q/k norm implied, no soft-capping by default, and two RoPE bases: the
sliding (local) layers rotate with `rope_local_base_freq` (10k) and the full (global) layers
with `rope_theta` (1M), so `rope_parameters` holds one dict per layer type. v4 files with
`rope_scaling` scale the global layers only, as in HF. `layer_types` defaults to five sliding
layers for each full one (`sliding_window_pattern`, 6, in older files).
"""
from ..gemma2.configuration_gemma2 import Gemma2Config


class Gemma3TextConfig(Gemma2Config):
    model_type = "gemma3_text"
    default_theta = {"global": 1_000_000.0, "local": 10_000.0}

    vocab_size: int = 262_208
    max_position_embeddings: int = 131_072
    final_logit_softcapping: float | None = None
    attn_logit_softcapping: float | None = None
    use_bidirectional_attention: bool | None = False

    def __post_init__(self, **kwargs):
        if self.layer_types is None:
            pattern = kwargs.get("sliding_window_pattern", 6)
            self.layer_types = ["sliding_attention" if (i + 1) % pattern else "full_attention"
                                for i in range(self.num_hidden_layers)]
        rope = self.rope_parameters or {}
        rope = {kind: dict(rope.get(kind) or {"rope_type": "default"})
                for kind in ("full_attention", "sliding_attention")}
        rope["full_attention"].update(kwargs.pop("rope_scaling", None) or {})
        rope["full_attention"].setdefault("rope_theta", kwargs.pop("rope_theta", self.default_theta["global"]))
        rope["sliding_attention"].setdefault("rope_theta",
                                             kwargs.pop("rope_local_base_freq", self.default_theta["local"]))
        self.rope_parameters = rope
        super().__post_init__(**kwargs)
