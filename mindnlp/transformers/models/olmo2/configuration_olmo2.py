"""OLMo 2 configuration (defaults: allenai/OLMo-2-1124-7B).

Llama's fields with OLMo's vocabulary and special tokens; `num_key_value_heads` defaults to
`num_attention_heads`.
"""
from ...configuration_utils import PretrainedConfig
from ..llama.configuration_llama import LlamaConfig


class Olmo2Config(PretrainedConfig):
    model_type = "olmo2"
    keys_to_ignore_at_inference = ["past_key_values"]
    # The q/k norms act over all heads at once, so the q/k/v outputs are gathered and o_proj
    # reads a replicated input (metadata HF's tooling reads).
    base_model_tp_plan = {
        **LlamaConfig.base_model_tp_plan,
        **{f"layers.*.self_attn.{name}_proj": "colwise_gather_output" for name in "qkv"},
        "layers.*.self_attn.o_proj": "rowwise_split_input",
    }
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 50304
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: int | None = None
    hidden_act: str = "silu"
    max_position_embeddings: int = 2048
    initializer_range: float = 0.02
    use_cache: bool = True
    pad_token_id: int | None = 1
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = 50279
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    attention_bias: bool = False
    attention_dropout: float | int = 0.0
    rms_norm_eps: float = 1e-5

    def __post_init__(self, **kwargs):
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        super().__post_init__(**kwargs)
