"""Auto classes: map a checkpoint's `model_type` to the matching config, tokenizer and model."""
from .configuration_auto import CONFIG_MAPPING, AutoConfig
from .tokenization_auto import TOKENIZER_MAPPING, AutoTokenizer
