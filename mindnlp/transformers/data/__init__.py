# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Data collators for the Trainer (HF's `transformers.data`)."""
from .data_collator import (DataCollatorForLanguageModeling, DataCollatorForSeq2Seq, DataCollatorForTokenClassification,
                            DataCollatorWithPadding, DefaultDataCollator, default_data_collator)

__all__ = ["DataCollatorForLanguageModeling", "DataCollatorForSeq2Seq", "DataCollatorForTokenClassification",
           "DataCollatorWithPadding", "DefaultDataCollator", "default_data_collator"]
