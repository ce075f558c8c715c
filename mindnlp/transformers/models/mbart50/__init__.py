# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .tokenization_mbart50 import MBart50Tokenizer, MBart50TokenizerFast
