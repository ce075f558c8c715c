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
from .utils import (ModulesToSaveWrapper, PeftType, TaskType, get_peft_model_state_dict, load_peft_weights,
                    set_peft_model_state_dict)

register_peft_method(name="lora", config_cls=LoraConfig, model_cls=LoraModel)
