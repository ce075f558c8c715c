# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Text generation: GenerationConfig, logits processors, stopping criteria, streamers,
candidate generators for assisted decoding, watermarking and its detectors, generate().

Only the configuration classes are imported eagerly (configs load without the tensor core);
the rest is imported on first use.
"""
from .configuration_utils import (
    DEFAULT_GENERATION_PARAMS, BaseWatermarkingConfig, CompileConfig, GenerationConfig, GenerationMode,
    SynthIDTextWatermarkingConfig, WatermarkingConfig,
)

_LAZY_NAMES = {
    "candidate_generator": [
        "AssistedCandidateGenerator", "AssistedCandidateGeneratorDifferentTokenizers", "AssistantToTargetTranslator",
        "AssistantVocabTranslatorCache", "CandidateGenerator", "EarlyExitCandidateGenerator",
        "PromptLookupCandidateGenerator", "UniversalSpeculativeDecodingGenerator",
    ],
    "logits_process": [
        "AlternatingCodebooksLogitsProcessor", "BarkEosPrioritizerLogitsProcessor",
        "ClassifierFreeGuidanceLogitsProcessor", "DiaClassifierFreeGuidanceLogitsProcessor",
        "DiaEOSChannelFilterLogitsProcessor", "DiaEOSDelayPatternLogitsProcessor",
        "EncoderNoRepeatNGramLogitsProcessor", "EncoderRepetitionPenaltyLogitsProcessor", "EpsilonLogitsWarper",
        "EtaLogitsWarper", "ExponentialDecayLengthPenalty", "ForcedBOSTokenLogitsProcessor",
        "ForcedEOSTokenLogitsProcessor", "InfNanRemoveLogitsProcessor", "LogitNormalization", "LogitsProcessor",
        "LogitsProcessorList", "LogitsWarper", "MinLengthLogitsProcessor", "MinNewTokensLengthLogitsProcessor",
        "MinPLogitsWarper", "NoBadWordsLogitsProcessor", "NoRepeatNGramLogitsProcessor",
        "PrefixConstrainedLogitsProcessor", "RepetitionPenaltyLogitsProcessor", "SequenceBiasLogitsProcessor",
        "SuppressTokensAtBeginLogitsProcessor", "SuppressTokensLogitsProcessor",
        "SynthIDTextWatermarkLogitsProcessor", "TemperatureLogitsWarper", "TopHLogitsWarper", "TopKLogitsWarper",
        "TopPLogitsWarper", "TypicalLogitsWarper", "UnbatchedClassifierFreeGuidanceLogitsProcessor",
        "WatermarkLogitsProcessor", "WhisperNoSpeechDetection", "WhisperTimeStampLogitsProcessor",
    ],
    "stopping_criteria": [
        "ConfidenceCriteria", "EosTokenCriteria", "MaxLengthCriteria", "MaxTimeCriteria", "StopStringCriteria",
        "StoppingCriteria", "StoppingCriteriaList", "validate_stopping_criteria",
    ],
    "streamers": ["AsyncTextIteratorStreamer", "BaseStreamer", "TextIteratorStreamer", "TextStreamer"],
    "utils": [
        "GenerateBeamDecoderOnlyOutput", "GenerateBeamEncoderDecoderOutput", "GenerateDecoderOnlyOutput",
        "GenerateEncoderDecoderOutput", "GenerationMixin",
    ],
    "watermarking": [
        "BayesianDetectorConfig", "BayesianDetectorModel", "SynthIDTextWatermarkDetector", "WatermarkDetector",
        "WatermarkDetectorOutput",
    ],
}
_LAZY_MODULE_OF = {name: module for module, names in _LAZY_NAMES.items() for name in names}


def __getattr__(name):
    if name not in _LAZY_MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY_MODULE_OF[name]}", __name__), name)
    globals()[name] = value
    return value
