"""Text generation: GenerationConfig, logits processors, stopping criteria, streamers, generate().

Only GenerationConfig is imported eagerly (configs load without the tensor core); the rest
is imported on first use.
"""
from .configuration_utils import DEFAULT_GENERATION_PARAMS, GenerationConfig

_LAZY_NAMES = {
    "logits_process": [
        "EncoderNoRepeatNGramLogitsProcessor", "EncoderRepetitionPenaltyLogitsProcessor", "EpsilonLogitsWarper",
        "EtaLogitsWarper", "ExponentialDecayLengthPenalty", "ForcedBOSTokenLogitsProcessor",
        "ForcedEOSTokenLogitsProcessor", "InfNanRemoveLogitsProcessor", "LogitNormalization", "LogitsProcessor",
        "LogitsProcessorList", "LogitsWarper", "MinLengthLogitsProcessor", "MinNewTokensLengthLogitsProcessor",
        "MinPLogitsWarper", "NoBadWordsLogitsProcessor", "NoRepeatNGramLogitsProcessor",
        "PrefixConstrainedLogitsProcessor", "RepetitionPenaltyLogitsProcessor", "SequenceBiasLogitsProcessor",
        "SuppressTokensAtBeginLogitsProcessor", "SuppressTokensLogitsProcessor", "TemperatureLogitsWarper",
        "TopKLogitsWarper", "TopPLogitsWarper", "TypicalLogitsWarper",
    ],
    "stopping_criteria": [
        "EosTokenCriteria", "MaxLengthCriteria", "MaxTimeCriteria", "StopStringCriteria", "StoppingCriteria",
        "StoppingCriteriaList",
    ],
    "streamers": ["BaseStreamer", "TextIteratorStreamer", "TextStreamer"],
    "utils": ["GenerateBeamDecoderOnlyOutput", "GenerateDecoderOnlyOutput", "GenerationMixin"],
}
_LAZY_MODULE_OF = {name: module for module, names in _LAZY_NAMES.items() for name in names}


def __getattr__(name):
    if name not in _LAZY_MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_LAZY_MODULE_OF[name]}", __name__), name)
    globals()[name] = value
    return value
