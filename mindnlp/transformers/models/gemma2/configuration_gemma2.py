"""Gemma 2 configuration (defaults: google/gemma-2-2b).

Gemma's fields with the activation under HF's name `hidden_activation`, soft-capping of the
attention scores and of the final logits, `query_pre_attn_scalar` (the attention scale is its
inverse square root), and alternating attention: `layer_types` defaults to a sliding window
(`sliding_window`) on even layers and full attention on odd ones.
"""
from ...configuration_utils import PretrainedConfig
from ..llama.configuration_llama import LlamaConfig


class Gemma2Config(PretrainedConfig):
    model_type = "gemma2"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = LlamaConfig.base_model_tp_plan
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 256000
    hidden_size: int = 2304
    intermediate_size: int = 9216
    num_hidden_layers: int = 26
    num_attention_heads: int = 8
    num_key_value_heads: int = 4
    head_dim: int = 256
    hidden_activation: str = "gelu_pytorch_tanh"
    max_position_embeddings: int = 8192
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 1
    bos_token_id: int | None = 2
    tie_word_embeddings: bool = True
    rope_parameters: dict | None = None
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    query_pre_attn_scalar: int | float = 256
    sliding_window: int | None = 4096
    layer_types: list[str] | None = None
    final_logit_softcapping: float | None = 30.0
    attn_logit_softcapping: float | None = 50.0
    use_bidirectional_attention: bool | None = None

    def __post_init__(self, **kwargs):
        if self.layer_types is None:
            self.layer_types = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                                for i in range(self.num_hidden_layers)]
        super().__post_init__(**kwargs)
