from .configuration_gpt2 import GPT2Config
from .tokenization_gpt2_fast import GPT2Tokenizer, GPT2TokenizerFast
