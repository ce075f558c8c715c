"""XLM-RoBERTa configuration.

The architecture is RoBERTa's; the class exists so that config.json files with
`"model_type": "xlm-roberta"` load and save under their own type. The defaults are the ones
transformers declares (BERT-sized vocabulary); real checkpoints always state vocab_size.
"""
from ...configuration_utils import PretrainedConfig


class XLMRobertaConfig(PretrainedConfig):
    model_type = "xlm-roberta"

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float | int = 0.1
    attention_probs_dropout_prob: float | int = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int | None = 1
    bos_token_id: int | None = 0
    eos_token_id: int | list[int] | None = 2
    use_cache: bool = True
    classifier_dropout: float | int | None = None
    is_decoder: bool = False
    add_cross_attention: bool = False
    tie_word_embeddings: bool = True
