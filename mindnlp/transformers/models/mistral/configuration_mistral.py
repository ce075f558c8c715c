"""Mistral configuration (defaults: mistralai/Mistral-7B-v0.1).

Llama's layout with grouped-query attention by default and a `sliding_window` (None: full
attention). RoPE parameters as in LlamaConfig.
"""
import logging

from ...configuration_utils import PretrainedConfig
from ..llama.configuration_llama import LlamaConfig

logger = logging.getLogger(__name__)


class MistralConfig(PretrainedConfig):
    model_type = "mistral"
    keys_to_ignore_at_inference = ["past_key_values"]
    base_model_tp_plan = LlamaConfig.base_model_tp_plan
    base_model_pp_plan = LlamaConfig.base_model_pp_plan

    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 14336
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: int = 8
    head_dim: int | None = None
    hidden_act: str = "silu"
    max_position_embeddings: int = 4096 * 32
    initializer_range: float = 0.02
    rms_norm_eps: float = 1e-6
    use_cache: bool = True
    pad_token_id: int | None = None
    bos_token_id: int | None = 1
    eos_token_id: int | list[int] | None = 2
    tie_word_embeddings: bool = False
    rope_parameters: dict | None = None
    sliding_window: int | None = 4096
    attention_dropout: float | int = 0.0

    def __post_init__(self, **kwargs):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if "layer_types" in kwargs:
            logger.warning(
                "this Mistral config has layer_types; alternating attention is a Ministral feature and is ignored here"
            )
        super().__post_init__(**kwargs)
