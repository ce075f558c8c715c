# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Auto classes: map a checkpoint's `model_type` to the matching config, tokenizer and model."""
from .configuration_auto import CONFIG_MAPPING, AutoConfig
from .modeling_auto import (
    MODEL_FOR_CAUSAL_LM_MAPPING, MODEL_FOR_MASKED_LM_MAPPING, MODEL_FOR_MULTIPLE_CHOICE_MAPPING,
    MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING, MODEL_FOR_PRETRAINING_MAPPING, MODEL_FOR_QUESTION_ANSWERING_MAPPING,
    MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING, MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING, MODEL_MAPPING, AutoModel,
    AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForMultipleChoice, AutoModelForNextSentencePrediction,
    AutoModelForPreTraining, AutoModelForQuestionAnswering, AutoModelForSequenceClassification,
    AutoModelForTokenClassification, get_values,
)
from .image_processing_auto import IMAGE_PROCESSOR_MAPPING, AutoImageProcessor
from .tokenization_auto import TOKENIZER_MAPPING, AutoTokenizer
