# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""text-classification / sentiment-analysis: label names and scores from a sequence classifier."""
from enum import Enum

import numpy as np

from .base import Pipeline


def sigmoid(outputs):
    return 1.0 / (1.0 + np.exp(-outputs))


def softmax(outputs):
    shifted = np.exp(outputs - np.max(outputs, axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


class ClassificationFunction(Enum):
    SIGMOID = "sigmoid"
    SOFTMAX = "softmax"
    NONE = "none"


def _classification_function(value):
    if isinstance(value, ClassificationFunction):
        return value
    try:
        return ClassificationFunction[value.upper()]
    except KeyError:
        raise ValueError(f"Unrecognized `function_to_apply` argument: {value!r}; use 'sigmoid', 'softmax' or "
                         "'none'") from None


class TextClassificationPipeline(Pipeline):
    """`pipe(text)` → [{"label", "score"}] for the best label.

    `top_k=n` gives the n best labels (None: all), sorted; `function_to_apply` chooses how
    logits become scores (default: sigmoid for one label or multi-label models, softmax
    otherwise, none for regression). A text pair is passed as {"text": ..., "text_pair": ...}.
    The legacy `return_all_scores=True` returns every label in label order.
    """

    def _sanitize_parameters(self, return_all_scores=None, function_to_apply=None, top_k="", **tokenizer_kwargs):
        postprocess_params = {}
        if return_all_scores is None and hasattr(self.model.config, "return_all_scores"):
            return_all_scores = self.model.config.return_all_scores
        if isinstance(top_k, int) or top_k is None:
            postprocess_params["top_k"] = top_k
            postprocess_params["_legacy"] = False
        elif return_all_scores is not None:
            postprocess_params["top_k"] = None if return_all_scores else 1
        if function_to_apply is not None:
            postprocess_params["function_to_apply"] = _classification_function(function_to_apply)
        return tokenizer_kwargs, {}, postprocess_params

    def __call__(self, inputs, **kwargs):
        """A single text gives a list of one answer (HF's legacy shape) unless top_k is given."""
        result = super().__call__(inputs, **kwargs)
        if isinstance(inputs, str) and "top_k" not in kwargs:
            return [result]
        return result

    def preprocess(self, inputs, **tokenizer_kwargs):
        if isinstance(inputs, dict):
            return self.tokenizer(**inputs, return_tensors="pt", **tokenizer_kwargs)
        if isinstance(inputs, list) and len(inputs) == 1 and isinstance(inputs[0], list) and len(inputs[0]) == 2:
            return self.tokenizer(text=inputs[0][0], text_pair=inputs[0][1], return_tensors="pt", **tokenizer_kwargs)
        if isinstance(inputs, list):
            raise ValueError(
                "The pipeline received invalid inputs, if you are trying to send text pairs, you can try to send a"
                ' dictionary `{"text": "My text", "text_pair": "My pair"}` in order to send a text pair.')
        return self.tokenizer(inputs, return_tensors="pt", **tokenizer_kwargs)

    def _forward(self, model_inputs):
        if self._model_accepts("use_cache"):
            model_inputs["use_cache"] = False
        return self.model(**model_inputs)

    def _default_function(self):
        config = self.model.config
        if config.problem_type == "regression":
            return ClassificationFunction.NONE
        if config.problem_type == "multi_label_classification" or config.num_labels == 1:
            return ClassificationFunction.SIGMOID
        if config.problem_type == "single_label_classification" or config.num_labels > 1:
            return ClassificationFunction.SOFTMAX
        if getattr(config, "function_to_apply", None) is not None:
            return _classification_function(config.function_to_apply)
        return ClassificationFunction.NONE

    def postprocess(self, model_outputs, function_to_apply=None, top_k=1, _legacy=True):
        if function_to_apply is None:
            function_to_apply = self._default_function()
        outputs = model_outputs["logits"][0].float().numpy()
        if function_to_apply == ClassificationFunction.SIGMOID:
            scores = sigmoid(outputs)
        elif function_to_apply == ClassificationFunction.SOFTMAX:
            scores = softmax(outputs)
        else:
            scores = outputs
        id2label = self.model.config.id2label
        if top_k == 1 and _legacy:
            return {"label": id2label[scores.argmax().item()], "score": scores.max().item()}
        ranked = [{"label": id2label[i], "score": score.item()} for i, score in enumerate(scores)]
        if not _legacy:
            ranked.sort(key=lambda x: x["score"], reverse=True)
            if top_k is not None:
                ranked = ranked[:top_k]
        return ranked
