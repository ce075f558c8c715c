# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_gemma import GemmaConfig
from .tokenization_gemma import GemmaTokenizer, GemmaTokenizerFast
