from .configuration_gemma import GemmaConfig
from .tokenization_gemma_fast import GemmaTokenizer, GemmaTokenizerFast
