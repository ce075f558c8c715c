# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Parameter-efficient fine-tuning with Hugging Face peft's API and on-disk format.

`from mindnlp.peft import LoraConfig, get_peft_model, PeftModel` works as the same names do
in HF peft; adapters saved here load in HF peft and the reverse.
"""
from .config import PeftConfig, PromptLearningConfig
from .mapping import (PEFT_TYPE_TO_CONFIG_MAPPING, PEFT_TYPE_TO_PREFIX_MAPPING, PEFT_TYPE_TO_TUNER_MAPPING,
                      get_peft_config, get_peft_model, register_peft_method)
from .peft_model import (MODEL_TYPE_TO_PEFT_MODEL_MAPPING, PeftModel, PeftModelForCausalLM,
                         PeftModelForFeatureExtraction, PeftModelForQuestionAnswering, PeftModelForSeq2SeqLM,
                         PeftModelForSequenceClassification, PeftModelForTokenClassification)
from .tuners import BaseTuner, BaseTunerLayer, LoraConfig, LoraModel, check_target_module_exists
from .tuners import (AdaLoraConfig, AdaLoraModel, IA3Config, IA3Model, LoHaConfig, LoHaModel, LoKrConfig, LoKrModel,
                     PrefixEncoder, PrefixTuningConfig, PromptEmbedding, PromptEncoder, PromptEncoderConfig,
                     PromptEncoderReparameterizationType, PromptTuningConfig, PromptTuningInit)
from .utils import (ModulesToSaveWrapper, PeftType, TaskType, get_peft_model_state_dict, load_peft_weights,
                    prepare_model_for_kbit_training, set_peft_model_state_dict)

register_peft_method(name="lora", config_cls=LoraConfig, model_cls=LoraModel)
register_peft_method(name="adalora", config_cls=AdaLoraConfig, model_cls=AdaLoraModel, prefix="lora_")
register_peft_method(name="ia3", config_cls=IA3Config, model_cls=IA3Model)
register_peft_method(name="loha", config_cls=LoHaConfig, model_cls=LoHaModel)
register_peft_method(name="lokr", config_cls=LoKrConfig, model_cls=LoKrModel)
register_peft_method(name="prompt_tuning", config_cls=PromptTuningConfig, prompt_encoder_cls=PromptEmbedding)
register_peft_method(name="prefix_tuning", config_cls=PrefixTuningConfig, prompt_encoder_cls=PrefixEncoder)
register_peft_method(name="p_tuning", config_cls=PromptEncoderConfig, prompt_encoder_cls=PromptEncoder)
