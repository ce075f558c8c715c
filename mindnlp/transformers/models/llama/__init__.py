from .configuration_llama import LlamaConfig
from .tokenization_llama_fast import LlamaTokenizer, LlamaTokenizerFast
