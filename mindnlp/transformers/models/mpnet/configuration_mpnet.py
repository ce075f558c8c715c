"""MPNet configuration (defaults: microsoft/mpnet-base)."""
from ...configuration_utils import PretrainedConfig


class MPNetConfig(PretrainedConfig):
    """RoBERTa's fields without token types, plus `relative_attention_num_buckets` (the rows of the
    learned relative-position bias)."""

    model_type = "mpnet"

    vocab_size: int = 30527
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float | int = 0.1
    attention_probs_dropout_prob: float | int = 0.1
    max_position_embeddings: int = 512
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    relative_attention_num_buckets: int = 32
    pad_token_id: int | None = 1
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 2
    tie_word_embeddings: bool = True
