# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`pipeline(task, model=...)`: Hugging Face's one-line inference API.

Each task names its `Pipeline` class and the Auto model class that loads a checkpoint for
it. Other tasks join by registering in `PIPELINE_REGISTRY` (a task name, its pipeline class
and its Auto model class).
"""
from ..models.auto.tokenization_auto import AutoTokenizer
from .automatic_speech_recognition import AutomaticSpeechRecognitionPipeline
from .base import ChunkPipeline, Pipeline, PipelineException
from .feature_extraction import FeatureExtractionPipeline
from .fill_mask import FillMaskPipeline
from .question_answering import QuestionAnsweringPipeline, SquadExample
from .text2text_generation import SummarizationPipeline, Text2TextGenerationPipeline, TranslationPipeline
from .text_classification import ClassificationFunction, TextClassificationPipeline
from .text_generation import Chat, ReturnType, TextGenerationPipeline
from .token_classification import AggregationStrategy, NerPipeline, TokenClassificationPipeline
from .zero_shot_classification import ZeroShotClassificationPipeline


class PipelineRegistry:
    """task → {"impl": Pipeline subclass, "auto": name of the Auto model class}, with aliases."""

    def __init__(self, supported_tasks, task_aliases):
        self.supported_tasks = supported_tasks
        self.task_aliases = task_aliases

    def get_supported_tasks(self):
        return sorted(set(self.supported_tasks) | set(self.task_aliases))

    def check_task(self, task):
        """The canonical task name and its entry; an unknown task is an error listing the known ones.
        `translation_xx_to_yy` is the translation task between two languages."""
        task = self.task_aliases.get(task, task)
        if task in self.supported_tasks:
            return task, self.supported_tasks[task]
        parts = task.split("_")
        if len(parts) == 4 and parts[0] == "translation" and parts[2] == "to" and "translation" in self.supported_tasks:
            return "translation", self.supported_tasks["translation"]
        raise KeyError(f"Unknown task {task}, available tasks are {self.get_supported_tasks()}")

    def register_pipeline(self, task, pipeline_class, auto_model_class):
        """Add (or replace) a task: `auto_model_class` is an Auto class or its name in mindnlp.transformers."""
        name = auto_model_class if isinstance(auto_model_class, str) else auto_model_class.__name__
        self.supported_tasks[task] = {"impl": pipeline_class, "auto": name}


SUPPORTED_TASKS = {
    "automatic-speech-recognition": {"impl": AutomaticSpeechRecognitionPipeline, "auto": "AutoModelForSpeechSeq2Seq"},
    "feature-extraction": {"impl": FeatureExtractionPipeline, "auto": "AutoModel"},
    "fill-mask": {"impl": FillMaskPipeline, "auto": "AutoModelForMaskedLM"},
    "text-classification": {"impl": TextClassificationPipeline, "auto": "AutoModelForSequenceClassification"},
    "token-classification": {"impl": TokenClassificationPipeline, "auto": "AutoModelForTokenClassification"},
    "question-answering": {"impl": QuestionAnsweringPipeline, "auto": "AutoModelForQuestionAnswering"},
    "text-generation": {"impl": TextGenerationPipeline, "auto": "AutoModelForCausalLM"},
    "text2text-generation": {"impl": Text2TextGenerationPipeline, "auto": "AutoModelForSeq2SeqLM"},
    "summarization": {"impl": SummarizationPipeline, "auto": "AutoModelForSeq2SeqLM"},
    "translation": {"impl": TranslationPipeline, "auto": "AutoModelForSeq2SeqLM"},
    "zero-shot-classification": {"impl": ZeroShotClassificationPipeline, "auto": "AutoModelForSequenceClassification"},
}
TASK_ALIASES = {"sentiment-analysis": "text-classification", "ner": "token-classification"}
PIPELINE_REGISTRY = PipelineRegistry(SUPPORTED_TASKS, TASK_ALIASES)

_HUB_KWARGS = ("revision", "token", "cache_dir", "local_files_only", "mirror", "endpoint", "subfolder")


def pipeline(task=None, model=None, tokenizer=None, feature_extractor=None, device=None, dtype=None, *,
             model_kwargs=None, **kwargs):
    """Build the pipeline of `task` for `model` (a hub id, a local folder, or a model instance).

    `tokenizer` (and, for speech, `feature_extractor`) defaults to the model's own (loaded from
    the same id/folder); `device` is an
    int (-1 = cpu, n = cuda:n), a string or a device; `dtype` (or `torch_dtype`) is passed to
    from_pretrained. Remaining keywords (`batch_size`, `top_k`, ...) become the pipeline's
    default call options.
    """
    if task is None:
        raise ValueError("pipeline() needs a task, e.g. pipeline('fill-mask', model=...); supported: "
                         f"{PIPELINE_REGISTRY.get_supported_tasks()}")
    if model is None:
        raise ValueError(f"pipeline({task!r}) needs a model: a hub id, a local folder or a model instance "
                         "(mindnlp does not download a default model)")
    canonical, entry = PIPELINE_REGISTRY.check_task(task)
    # a translation pipeline keeps its languages in its task name (translation_en_to_de)
    task = task if canonical == "translation" else canonical
    dtype = dtype if dtype is not None else kwargs.pop("torch_dtype", None)
    hub = {k: kwargs.pop(k) for k in _HUB_KWARGS if k in kwargs}
    if isinstance(model, str):
        from ..models.auto import modeling_auto

        auto_class = getattr(modeling_auto, entry["auto"])
        loading = dict(model_kwargs or {}, **hub)
        if dtype is not None:
            loading["dtype"] = dtype
        source = model
        model = auto_class.from_pretrained(source, **loading)
        if tokenizer is None:
            tokenizer = source
    if tokenizer is None:
        source = getattr(model.config, "name_or_path", None)
        if not source:
            raise ValueError("the model instance does not say where it was loaded from: pass tokenizer=")
        tokenizer = source
    if getattr(entry["impl"], "needs_feature_extractor", False):
        from ..models.auto.feature_extraction_auto import AutoFeatureExtractor

        feature_extractor = tokenizer if feature_extractor is None and isinstance(tokenizer, str) \
            else feature_extractor
        if isinstance(feature_extractor, str):
            feature_extractor = AutoFeatureExtractor.from_pretrained(feature_extractor, **hub)
        kwargs["feature_extractor"] = feature_extractor
    if isinstance(tokenizer, str):
        tokenizer = AutoTokenizer.from_pretrained(tokenizer, **hub)
    elif isinstance(tokenizer, tuple):
        name, tokenizer_kwargs = tokenizer
        tokenizer = AutoTokenizer.from_pretrained(name, **tokenizer_kwargs)
    return entry["impl"](model=model, tokenizer=tokenizer, task=task, device=device, **kwargs)


__all__ = [
    "AggregationStrategy", "AutomaticSpeechRecognitionPipeline", "Chat", "ChunkPipeline", "ClassificationFunction", "FeatureExtractionPipeline",
    "FillMaskPipeline", "NerPipeline", "Pipeline", "PipelineException", "PipelineRegistry", "PIPELINE_REGISTRY",
    "QuestionAnsweringPipeline", "ReturnType", "SquadExample", "SummarizationPipeline", "SUPPORTED_TASKS",
    "TASK_ALIASES", "Text2TextGenerationPipeline", "TextClassificationPipeline", "TextGenerationPipeline",
    "TokenClassificationPipeline", "TranslationPipeline",
    "ZeroShotClassificationPipeline", "pipeline",
]
