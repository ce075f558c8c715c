# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Hugging Face transformers' public API on mindnlp.core.

`from mindnlp.transformers import AutoModel, AutoTokenizer` works as the same names do in
Hugging Face transformers.
"""
from .configuration_utils import PretrainedConfig, PreTrainedConfig
from .generation.configuration_utils import (
    CompileConfig, GenerationConfig, SynthIDTextWatermarkingConfig, WatermarkingConfig,
)
from .models.auto.configuration_auto import CONFIG_MAPPING, AutoConfig
from .models.albert.configuration_albert import AlbertConfig
from .models.electra.configuration_electra import ElectraConfig
from .models.mpnet.configuration_mpnet import MPNetConfig
from .models.deberta_v2.configuration_deberta_v2 import DebertaV2Config
from .models.modernbert.configuration_modernbert import ModernBertConfig
from .models.camembert.configuration_camembert import CamembertConfig
from .models.bart.configuration_bart import BartConfig
from .models.bert.configuration_bert import BertConfig
from .models.deepseek_v3.configuration_deepseek_v3 import DeepseekV3Config
from .models.distilbert.configuration_distilbert import DistilBertConfig
from .models.gemma.configuration_gemma import GemmaConfig
from .models.gemma2.configuration_gemma2 import Gemma2Config
from .models.gemma3.configuration_gemma3 import Gemma3Config, Gemma3TextConfig
from .models.gpt2.configuration_gpt2 import GPT2Config
from .models.falcon.configuration_falcon import FalconConfig
from .models.gpt_neox.configuration_gpt_neox import GPTNeoXConfig
from .models.gpt_oss.configuration_gpt_oss import GptOssConfig
from .models.llama.configuration_llama import LlamaConfig
from .models.marian.configuration_marian import MarianConfig
from .models.mbart.configuration_mbart import MBartConfig
from .models.mistral.configuration_mistral import MistralConfig
from .models.mixtral.configuration_mixtral import MixtralConfig
from .models.mt5.configuration_mt5 import MT5Config
from .models.olmo2.configuration_olmo2 import Olmo2Config
from .models.opt.configuration_opt import OPTConfig
from .models.phi.configuration_phi import PhiConfig
from .models.phi3.configuration_phi3 import Phi3Config
from .models.qwen2.configuration_qwen2 import Qwen2Config
from .models.qwen2_moe.configuration_qwen2_moe import Qwen2MoeConfig
from .models.qwen3.configuration_qwen3 import Qwen3Config
from .models.qwen3_moe.configuration_qwen3_moe import Qwen3MoeConfig
from .models.roberta.configuration_roberta import RobertaConfig
from .models.siglip.configuration_siglip import SiglipVisionConfig
from .models.smollm3.configuration_smollm3 import SmolLM3Config
from .models.starcoder2.configuration_starcoder2 import Starcoder2Config
from .models.t5.configuration_t5 import T5Config
from .models.xlm_roberta.configuration_xlm_roberta import XLMRobertaConfig
from .models.whisper.configuration_whisper import WhisperConfig
from .tokenization_utils_base import BatchEncoding, PreTrainedTokenizerBase
from .tokenization_utils_fast import PreTrainedTokenizerFast, TokenizersBackend
from .tokenization_python import PreTrainedTokenizer, PythonBackend
from .tokenization_utils_sentencepiece import SentencePieceBackend
from .models.auto.tokenization_auto import TOKENIZER_MAPPING, AutoTokenizer
from .models.auto.processing_auto import AutoProcessor
from .models.albert.tokenization_albert import AlbertTokenizer, AlbertTokenizerFast
from .models.mpnet.tokenization_mpnet import MPNetTokenizer, MPNetTokenizerFast
from .models.deberta_v2.tokenization_deberta_v2 import DebertaV2Tokenizer, DebertaV2TokenizerFast
from .models.camembert.tokenization_camembert import CamembertTokenizer, CamembertTokenizerFast
from .models.bart.tokenization_bart import BartTokenizer, BartTokenizerFast
from .models.bert.tokenization_bert import BertTokenizer, BertTokenizerFast
from .models.distilbert.tokenization_distilbert import DistilBertTokenizer, DistilBertTokenizerFast
from .models.gemma.tokenization_gemma import GemmaTokenizer, GemmaTokenizerFast
from .models.gpt2.tokenization_gpt2 import GPT2Tokenizer, GPT2TokenizerFast
from .models.llama.tokenization_llama import LlamaTokenizer, LlamaTokenizerFast
from .models.marian.tokenization_marian import MarianTokenizer
from .models.mbart.tokenization_mbart import MBartTokenizer, MBartTokenizerFast
from .models.mbart50.tokenization_mbart50 import MBart50Tokenizer, MBart50TokenizerFast
from .models.gpt_neox.tokenization_gpt_neox import GPTNeoXTokenizer, GPTNeoXTokenizerFast
from .models.qwen2.tokenization_qwen2 import Qwen2Tokenizer, Qwen2TokenizerFast
from .models.roberta.tokenization_roberta import RobertaTokenizer, RobertaTokenizerFast
from .models.t5.tokenization_t5 import T5Tokenizer, T5TokenizerFast
from .models.whisper.tokenization_whisper import WhisperTokenizer, WhisperTokenizerFast
from .feature_extraction_utils import BatchFeature, FeatureExtractionMixin
from .feature_extraction_sequence_utils import SequenceFeatureExtractor
from .processing_utils import ProcessorMixin
from .models.whisper.feature_extraction_whisper import WhisperFeatureExtractor
from .models.whisper.processing_whisper import WhisperProcessor
from .models.auto.feature_extraction_auto import AutoFeatureExtractor
from .image_processing_utils import BaseImageProcessor
from .models.siglip.image_processing_siglip import SiglipImageProcessor
from .models.gemma3.image_processing_gemma3 import Gemma3ImageProcessor
from .models.gemma3.processing_gemma3 import Gemma3Processor
from .models.auto.image_processing_auto import AutoImageProcessor
from . import fused_decode_attention  # noqa: F401  (registers its pass on compiled graphs)
from .utils import is_mlx_available, is_torch_available, logging
from .utils.quantization_config import BitsAndBytesConfig, QuantizationConfigMixin, QuantoConfig
from .utils.unsupported import unsupported

ByT5Tokenizer = unsupported("ByT5Tokenizer", "the ByT5 byte-level tokenizer")
SpeechEncoderDecoderModel = unsupported("SpeechEncoderDecoderModel", "speech encoder-decoder models")
ImageGPTForCausalImageModeling = unsupported("ImageGPTForCausalImageModeling", "ImageGPT (image models)")
Florence2Config = unsupported("Florence2Config", "Florence-2 (vision-language) models")

# Model classes import the modeling stack (core.nn, caches, generation) on first use, so that
# configs and tokenizers stay cheap to import.
_LAZY_MODEL_NAMES = {
    "modeling_utils": ["PreTrainedModel"],
    "models.auto.modeling_auto": [
        "AutoModel", "AutoModelForCausalLM", "AutoModelForMaskedLM", "AutoModelForMultipleChoice",
        "AutoModelForNextSentencePrediction", "AutoModelForPreTraining", "AutoModelForQuestionAnswering",
        "AutoModelForSequenceClassification", "AutoModelForTokenClassification", "AutoModelForSeq2SeqLM",
        "AutoModelForSpeechSeq2Seq", "AutoModelForAudioClassification", "AutoModelForImageTextToText", "MODEL_FOR_CAUSAL_LM_MAPPING",
        "MODEL_FOR_MASKED_LM_MAPPING", "MODEL_FOR_MULTIPLE_CHOICE_MAPPING", "MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING",
        "MODEL_FOR_PRETRAINING_MAPPING", "MODEL_FOR_QUESTION_ANSWERING_MAPPING",
        "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING", "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING", "MODEL_MAPPING",
    ],
    "models.albert.modeling_albert": [
        "AlbertForMaskedLM", "AlbertForMultipleChoice", "AlbertForPreTraining", "AlbertForQuestionAnswering",
        "AlbertForSequenceClassification", "AlbertForTokenClassification", "AlbertModel", "AlbertPreTrainedModel",
    ],
    "models.electra.modeling_electra": [
        "ElectraForCausalLM", "ElectraForMaskedLM", "ElectraForMultipleChoice", "ElectraForPreTraining",
        "ElectraForQuestionAnswering", "ElectraForSequenceClassification", "ElectraForTokenClassification",
        "ElectraModel", "ElectraPreTrainedModel",
    ],
    "models.mpnet.modeling_mpnet": [
        "MPNetForMaskedLM", "MPNetForMultipleChoice", "MPNetForQuestionAnswering", "MPNetForSequenceClassification",
        "MPNetForTokenClassification", "MPNetModel", "MPNetPreTrainedModel",
    ],
    "models.deberta_v2.modeling_deberta_v2": [
        "DebertaV2ForMaskedLM", "DebertaV2ForMultipleChoice", "DebertaV2ForQuestionAnswering",
        "DebertaV2ForSequenceClassification", "DebertaV2ForTokenClassification", "DebertaV2Model",
        "DebertaV2PreTrainedModel",
    ],
    "models.modernbert.modeling_modernbert": [
        "ModernBertForMaskedLM", "ModernBertForMultipleChoice", "ModernBertForQuestionAnswering",
        "ModernBertForSequenceClassification", "ModernBertForTokenClassification", "ModernBertModel",
        "ModernBertPreTrainedModel",
    ],
    "models.camembert.modeling_camembert": [
        "CamembertForCausalLM", "CamembertForMaskedLM", "CamembertForMultipleChoice", "CamembertForQuestionAnswering",
        "CamembertForSequenceClassification", "CamembertForTokenClassification", "CamembertModel",
        "CamembertPreTrainedModel",
    ],
    "models.bert.modeling_bert": [
        "BertForMaskedLM", "BertForMultipleChoice", "BertForNextSentencePrediction", "BertForPreTraining",
        "BertForQuestionAnswering", "BertForSequenceClassification", "BertForTokenClassification",
        "BertLMHeadModel", "BertModel", "BertPreTrainedModel",
    ],
    "models.roberta.modeling_roberta": [
        "RobertaForCausalLM", "RobertaForMaskedLM", "RobertaForMultipleChoice", "RobertaForQuestionAnswering",
        "RobertaForSequenceClassification", "RobertaForTokenClassification", "RobertaModel", "RobertaPreTrainedModel",
    ],
    "models.xlm_roberta.modeling_xlm_roberta": [
        "XLMRobertaForCausalLM", "XLMRobertaForMaskedLM", "XLMRobertaForMultipleChoice",
        "XLMRobertaForQuestionAnswering", "XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
        "XLMRobertaModel", "XLMRobertaPreTrainedModel",
    ],
    "models.distilbert.modeling_distilbert": [
        "DistilBertForMaskedLM", "DistilBertForMultipleChoice", "DistilBertForQuestionAnswering",
        "DistilBertForSequenceClassification", "DistilBertForTokenClassification", "DistilBertModel",
        "DistilBertPreTrainedModel",
    ],
    "models.llama.modeling_llama": [
        "LlamaForCausalLM", "LlamaForQuestionAnswering", "LlamaForSequenceClassification",
        "LlamaForTokenClassification", "LlamaModel", "LlamaPreTrainedModel",
    ],
    "models.mistral.modeling_mistral": [
        "MistralForCausalLM", "MistralForQuestionAnswering", "MistralForSequenceClassification",
        "MistralForTokenClassification", "MistralModel", "MistralPreTrainedModel",
    ],
    "models.mixtral.modeling_mixtral": [
        "MixtralForCausalLM", "MixtralForQuestionAnswering", "MixtralForSequenceClassification",
        "MixtralForTokenClassification", "MixtralModel", "MixtralPreTrainedModel",
    ],
    "models.deepseek_v3.modeling_deepseek_v3": [
        "DeepseekV3ForCausalLM", "DeepseekV3ForSequenceClassification", "DeepseekV3ForTokenClassification",
        "DeepseekV3Model", "DeepseekV3PreTrainedModel",
    ],
    "models.gpt_oss.modeling_gpt_oss": [
        "GptOssForCausalLM", "GptOssForSequenceClassification", "GptOssForTokenClassification", "GptOssModel",
        "GptOssPreTrainedModel",
    ],
    "models.qwen2_moe.modeling_qwen2_moe": [
        "Qwen2MoeForCausalLM", "Qwen2MoeForQuestionAnswering", "Qwen2MoeForSequenceClassification",
        "Qwen2MoeForTokenClassification", "Qwen2MoeModel", "Qwen2MoePreTrainedModel",
    ],
    "models.qwen3_moe.modeling_qwen3_moe": [
        "Qwen3MoeForCausalLM", "Qwen3MoeForQuestionAnswering", "Qwen3MoeForSequenceClassification",
        "Qwen3MoeForTokenClassification", "Qwen3MoeModel", "Qwen3MoePreTrainedModel",
    ],
    "models.qwen2.modeling_qwen2": [
        "Qwen2ForCausalLM", "Qwen2ForQuestionAnswering", "Qwen2ForSequenceClassification",
        "Qwen2ForTokenClassification", "Qwen2Model", "Qwen2PreTrainedModel",
    ],
    "models.qwen3.modeling_qwen3": [
        "Qwen3ForCausalLM", "Qwen3ForQuestionAnswering", "Qwen3ForSequenceClassification",
        "Qwen3ForTokenClassification", "Qwen3Model", "Qwen3PreTrainedModel",
    ],
    "models.starcoder2.modeling_starcoder2": [
        "Starcoder2ForCausalLM", "Starcoder2ForSequenceClassification", "Starcoder2ForTokenClassification",
        "Starcoder2Model", "Starcoder2PreTrainedModel",
    ],
    "models.olmo2.modeling_olmo2": ["Olmo2ForCausalLM", "Olmo2Model", "Olmo2PreTrainedModel"],
    "models.gemma.modeling_gemma": [
        "GemmaForCausalLM", "GemmaForSequenceClassification", "GemmaForTokenClassification", "GemmaModel",
        "GemmaPreTrainedModel",
    ],
    "models.gemma2.modeling_gemma2": [
        "Gemma2ForCausalLM", "Gemma2ForSequenceClassification", "Gemma2ForTokenClassification", "Gemma2Model",
        "Gemma2PreTrainedModel",
    ],
    "models.gemma3.modeling_gemma3": [
        "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Gemma3ForSequenceClassification", "Gemma3Model",
        "Gemma3PreTrainedModel", "Gemma3TextForSequenceClassification", "Gemma3TextModel",
    ],
    "models.siglip.modeling_siglip": ["SiglipPreTrainedModel", "SiglipVisionModel"],
    "models.gpt_neox.modeling_gpt_neox": [
        "GPTNeoXForCausalLM", "GPTNeoXForQuestionAnswering", "GPTNeoXForSequenceClassification",
        "GPTNeoXForTokenClassification", "GPTNeoXLayer", "GPTNeoXModel", "GPTNeoXPreTrainedModel",
    ],
    "models.opt.modeling_opt": [
        "OPTForCausalLM", "OPTForQuestionAnswering", "OPTForSequenceClassification", "OPTModel", "OPTPreTrainedModel",
    ],
    "models.falcon.modeling_falcon": [
        "FalconForCausalLM", "FalconForQuestionAnswering", "FalconForSequenceClassification",
        "FalconForTokenClassification", "FalconModel", "FalconPreTrainedModel",
    ],
    "models.smollm3.modeling_smollm3": [
        "SmolLM3ForCausalLM", "SmolLM3ForQuestionAnswering", "SmolLM3ForSequenceClassification",
        "SmolLM3ForTokenClassification", "SmolLM3Model", "SmolLM3PreTrainedModel",
    ],
    "models.phi.modeling_phi": [
        "PhiForCausalLM", "PhiForSequenceClassification", "PhiForTokenClassification", "PhiModel", "PhiPreTrainedModel",
    ],
    "models.phi3.modeling_phi3": [
        "Phi3ForCausalLM", "Phi3ForSequenceClassification", "Phi3ForTokenClassification", "Phi3Model",
        "Phi3PreTrainedModel",
    ],
    "models.gpt2.modeling_gpt2": [
        "GPT2DoubleHeadsModel", "GPT2ForQuestionAnswering", "GPT2ForSequenceClassification",
        "GPT2ForTokenClassification", "GPT2LMHeadModel", "GPT2Model", "GPT2PreTrainedModel",
    ],
    "models.t5.modeling_t5": [
        "T5EncoderModel", "T5ForConditionalGeneration", "T5ForQuestionAnswering", "T5ForSequenceClassification",
        "T5ForTokenClassification", "T5Model", "T5PreTrainedModel",
    ],
    "models.mt5.modeling_mt5": [
        "MT5EncoderModel", "MT5ForConditionalGeneration", "MT5ForQuestionAnswering", "MT5ForSequenceClassification",
        "MT5ForTokenClassification", "MT5Model", "MT5PreTrainedModel",
    ],
    "models.bart.modeling_bart": [
        "BartForCausalLM", "BartForConditionalGeneration", "BartForQuestionAnswering", "BartForSequenceClassification",
        "BartModel", "BartPreTrainedModel",
    ],
    "models.mbart.modeling_mbart": [
        "MBartForCausalLM", "MBartForConditionalGeneration", "MBartForQuestionAnswering",
        "MBartForSequenceClassification", "MBartModel", "MBartPreTrainedModel",
    ],
    "models.marian.modeling_marian": ["MarianForCausalLM", "MarianModel", "MarianMTModel", "MarianPreTrainedModel"],
    "models.whisper.modeling_whisper": [
        "WhisperForAudioClassification", "WhisperForCausalLM", "WhisperForConditionalGeneration", "WhisperModel",
        "WhisperPreTrainedModel",
    ],
    "pipelines": [
        "Pipeline", "SummarizationPipeline", "Text2TextGenerationPipeline", "TranslationPipeline", "pipeline",
    ],
    "trainer": ["Trainer"],
    "trainer_seq2seq": ["Seq2SeqTrainer"],
    "training_args": ["TrainingArguments"],
    "training_args_seq2seq": ["Seq2SeqTrainingArguments"],
    "trainer_callback": [
        "DefaultFlowCallback", "EarlyStoppingCallback", "PrinterCallback", "ProgressCallback", "TrainerCallback",
        "TrainerControl", "TrainerState",
    ],
    "trainer_utils": ["EvalPrediction", "IntervalStrategy", "SchedulerType", "get_last_checkpoint", "set_seed"],
    "data.data_collator": [
        "DataCollatorForLanguageModeling", "DataCollatorForSeq2Seq", "DataCollatorForTokenClassification",
        "DataCollatorWithFlattening", "DataCollatorWithPadding", "DefaultDataCollator", "default_data_collator",
    ],
    "optimization": [
        "Adafactor", "AdafactorSchedule", "get_adafactor_schedule", "get_constant_schedule", "get_constant_schedule_with_warmup", "get_cosine_schedule_with_warmup",
        "get_cosine_with_hard_restarts_schedule_with_warmup", "get_inverse_sqrt_schedule",
        "get_linear_schedule_with_warmup", "get_polynomial_decay_schedule_with_warmup", "get_scheduler",
    ],
    "cache_utils": ["Cache", "DynamicCache", "EncoderDecoderCache", "SlidingWindowCache", "StaticCache", "StaticLayer",
                    "StaticSlidingWindowLayer"],
    "generation": [
        "AlternatingCodebooksLogitsProcessor", "AsyncTextIteratorStreamer", "BayesianDetectorConfig",
        "BayesianDetectorModel", "ClassifierFreeGuidanceLogitsProcessor",
        "EncoderNoRepeatNGramLogitsProcessor", "EncoderRepetitionPenaltyLogitsProcessor", "EosTokenCriteria",
        "EpsilonLogitsWarper", "EtaLogitsWarper", "ExponentialDecayLengthPenalty", "ForcedBOSTokenLogitsProcessor",
        "ForcedEOSTokenLogitsProcessor", "GenerationMixin", "InfNanRemoveLogitsProcessor", "LogitNormalization",
        "LogitsProcessor", "LogitsProcessorList", "MaxLengthCriteria", "MaxTimeCriteria", "MinLengthLogitsProcessor",
        "MinNewTokensLengthLogitsProcessor", "MinPLogitsWarper", "NoBadWordsLogitsProcessor",
        "NoRepeatNGramLogitsProcessor", "PrefixConstrainedLogitsProcessor", "RepetitionPenaltyLogitsProcessor",
        "SequenceBiasLogitsProcessor", "StoppingCriteria", "StoppingCriteriaList", "StopStringCriteria",
        "SuppressTokensAtBeginLogitsProcessor", "SuppressTokensLogitsProcessor", "SynthIDTextWatermarkDetector",
        "SynthIDTextWatermarkLogitsProcessor", "TemperatureLogitsWarper", "TextIteratorStreamer", "TextStreamer",
        "TopHLogitsWarper", "TopKLogitsWarper", "TopPLogitsWarper", "TypicalLogitsWarper",
        "UnbatchedClassifierFreeGuidanceLogitsProcessor", "WatermarkDetector", "WatermarkLogitsProcessor",
    ],
}
_LAZY_MODULE_OF = {name: module for module, names in _LAZY_MODEL_NAMES.items() for name in names}


def __getattr__(name):
    if name not in _LAZY_MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY_MODULE_OF[name]}", __name__), name)
    globals()[name] = value
    return value
