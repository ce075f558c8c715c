# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_llama import LlamaConfig
from .tokenization_llama import LlamaTokenizer, LlamaTokenizerFast
