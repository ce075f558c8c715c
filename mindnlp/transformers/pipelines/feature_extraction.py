# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""feature-extraction: the base model's last hidden states, as nested lists (or a tensor)."""
from .base import Pipeline


class FeatureExtractionPipeline(Pipeline):
    """`pipe(text)` → [1][tokens][hidden] floats; `return_tensors=True` gives the tensor instead.

    `truncation` and `tokenize_kwargs` are passed to the tokenizer.
    """

    def _sanitize_parameters(self, truncation=None, tokenize_kwargs=None, return_tensors=None, **kwargs):
        tokenize_kwargs = dict(tokenize_kwargs or {})
        if truncation is not None:
            if "truncation" in tokenize_kwargs:
                raise ValueError(
                    "truncation parameter defined twice (given as keyword argument as well as in tokenize_kwargs)")
            tokenize_kwargs["truncation"] = truncation
        postprocess_params = {} if return_tensors is None else {"return_tensors": return_tensors}
        return tokenize_kwargs, {}, postprocess_params

    def preprocess(self, inputs, **tokenize_kwargs):
        return self.tokenizer(inputs, return_tensors="pt", **tokenize_kwargs)

    def _forward(self, model_inputs):
        # Only hidden states are read: a decoder's key/value cache would cost memory, and a batch's
        # cache is not a per-item tensor that could be split back into its items.
        if self._model_accepts("use_cache"):
            model_inputs["use_cache"] = False
        return self.model(**model_inputs)

    def postprocess(self, model_outputs, return_tensors=False):
        if return_tensors:
            return model_outputs[0]
        return model_outputs[0].tolist()
