# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_gpt_neox import GPTNeoXConfig
from .tokenization_gpt_neox import GPTNeoXTokenizer, GPTNeoXTokenizerFast
