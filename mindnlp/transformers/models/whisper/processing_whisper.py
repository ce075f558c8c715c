# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""WhisperProcessor: the feature extractor for audio and the tokenizer for text, in one object."""
from ...processing_utils import ProcessorMixin


class WhisperProcessor(ProcessorMixin):
    """`processor(audio, sampling_rate=..., text=...)` gives the features, with the text's ids
    as `labels` when both are given; `decode` / `batch_decode` are the tokenizer's."""

    feature_extractor_class = "WhisperFeatureExtractor"
    tokenizer_class = "WhisperTokenizer"

    def __init__(self, feature_extractor, tokenizer):
        super().__init__(feature_extractor, tokenizer)

    def get_decoder_prompt_ids(self, task=None, language=None, no_timestamps=True):
        return self.tokenizer.get_decoder_prompt_ids(task=task, language=language, no_timestamps=no_timestamps)

    def get_prompt_ids(self, text, return_tensors="np"):
        return self.tokenizer.get_prompt_ids(text, return_tensors=return_tensors)

    def __call__(self, *args, audio=None, sampling_rate=None, text=None, **kwargs):
        if args:
            audio, args = args[0], args[1:]
        if audio is None and text is None:
            raise ValueError("You need to specify either an `audio` or `text` input to process.")
        inputs = self.feature_extractor(audio, *args, sampling_rate=sampling_rate, **kwargs) \
            if audio is not None else None
        encodings = self.tokenizer(text, **kwargs) if text is not None else None
        if encodings is None:
            return inputs
        if inputs is None:
            return encodings
        inputs["labels"] = encodings["input_ids"]
        return inputs


__all__ = ["WhisperProcessor"]
