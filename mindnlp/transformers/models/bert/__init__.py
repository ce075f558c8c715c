# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
from .configuration_bert import BertConfig
from .tokenization_bert import BertTokenizer, BertTokenizerFast
