# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""text2text-generation, summarization and translation: an encoder-decoder's `generate()` on a text.

`pipe("translate English to German: Hello")` → `[{"generated_text": "Hallo"}]`, one record per
returned sequence; summarization names its field `summary_text`, translation
`translation_text`, and `return_tensors=True` gives `<name>_token_ids` instead. A list of
texts gives a list of such lists, flattened to one record per text when each has one (HF's
format). Keywords other than the pipeline's own go to `generate()`.

A checkpoint's `task_specific_params` (T5's have them) set up the task the pipeline was built
for: its `prefix` is put before every text, the rest are generation defaults. A translation
pipeline named `translation_xx_to_yy` passes the two languages to tokenizers that build
translation inputs themselves (`_build_translation_inputs`, multilingual models).
"""
import copy
import logging

from .base import Pipeline
from .text_generation import ReturnType

logger = logging.getLogger(__name__)


class Text2TextGenerationPipeline(Pipeline):
    return_name = "generated"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.model.can_generate() or not self.model.config.is_encoder_decoder:
            raise ValueError(f"The model {self.model.__class__.__name__} is not an encoder-decoder that generates: "
                             f"{self.task} needs one (AutoModelForSeq2SeqLM)")
        self.generation_config = copy.deepcopy(self.model.generation_config)
        task_params = dict((getattr(self.model.config, "task_specific_params", None) or {}).get(self.task, {}))
        self.prefix = task_params.pop("prefix", getattr(self.model.config, "prefix", None)) or ""
        if task_params:
            self.generation_config.update(**task_params)

    def _sanitize_parameters(self, return_tensors=None, return_text=None, return_type=None,
                             clean_up_tokenization_spaces=None, truncation=None, stop_sequence=None,
                             **generate_kwargs):
        preprocess_params = {}
        if truncation is not None:
            preprocess_params["truncation"] = truncation
        postprocess_params = {}
        if return_tensors is not None and return_type is None:
            return_type = ReturnType.TENSORS if return_tensors else ReturnType.NEW_TEXT
        if return_type is not None:
            postprocess_params["return_type"] = return_type
        if clean_up_tokenization_spaces is not None:
            postprocess_params["clean_up_tokenization_spaces"] = clean_up_tokenization_spaces
        if stop_sequence is not None:
            stop_ids = self.tokenizer.encode(stop_sequence, add_special_tokens=False)
            if len(stop_ids) > 1:
                logger.warning("Stopping on a multiple token sequence is not yet supported on transformers. The "
                               "first token of the stop sequence will be used as the stop sequence string in the "
                               "interim.")
            generate_kwargs["eos_token_id"] = stop_ids[0]
        return preprocess_params, generate_kwargs, postprocess_params

    def check_inputs(self, input_length, min_length, max_length):
        """A task's warnings about lengths that make no sense for this input; text2text has none."""
        return True

    def __call__(self, *args, **kwargs):
        """Generate from a text or a list of texts (see the module docstring for the formats)."""
        result = super().__call__(*args, **kwargs)
        if isinstance(args[0], list) and all(isinstance(item, str) for item in args[0]) \
                and all(len(records) == 1 for records in result):
            return [records[0] for records in result]
        return result

    def _tokenize(self, text, truncation):
        if not isinstance(text, str):
            raise TypeError(f"`args[0]`: {text} have the wrong format. The should be either of type `str` or type "
                            "`list`")
        encoded = self.tokenizer(self.prefix + text, truncation=truncation, return_tensors="pt")
        encoded.pop("token_type_ids", None)
        return encoded

    def preprocess(self, inputs, truncation=False, **kwargs):
        return self._tokenize(inputs, truncation)

    def _forward(self, model_inputs, **generate_kwargs):
        batch_size, input_length = model_inputs["input_ids"].shape
        self.check_inputs(input_length, generate_kwargs.get("min_length", self.generation_config.min_length),
                          generate_kwargs.get("max_length", self.generation_config.max_length))
        if "generation_config" not in generate_kwargs:
            # the call's settings over the pipeline's (the model's, with the task's defaults)
            config = copy.deepcopy(self.generation_config)
            generate_kwargs = dict(config.update(**generate_kwargs), generation_config=config)
        output_ids = self.model.generate(**model_inputs, **generate_kwargs)
        return {"output_ids": output_ids.reshape(batch_size, output_ids.shape[0] // batch_size,
                                                 *output_ids.shape[1:])}

    def postprocess(self, model_outputs, return_type=ReturnType.NEW_TEXT, clean_up_tokenization_spaces=False):
        records = []
        for output_ids in model_outputs["output_ids"][0]:
            if return_type == ReturnType.TENSORS:
                records.append({f"{self.return_name}_token_ids": output_ids})
            else:
                text = self.tokenizer.decode(output_ids, skip_special_tokens=True,
                                             clean_up_tokenization_spaces=clean_up_tokenization_spaces)
                records.append({f"{self.return_name}_text": text})
        return records


class SummarizationPipeline(Text2TextGenerationPipeline):
    """`pipe(article)` → `[{"summary_text": ...}]`."""

    return_name = "summary"

    def check_inputs(self, input_length, min_length, max_length):
        if max_length is None:
            return True
        if min_length is not None and max_length < min_length:
            logger.warning(f"Your min_length={min_length} must be inferior than your max_length={max_length}.")
        if input_length < max_length:
            logger.warning(
                f"Your max_length is set to {max_length}, but your input_length is only {input_length}. Since this "
                "is a summarization task, where outputs shorter than the input are typically wanted, you might "
                f"consider decreasing max_length manually, e.g. summarizer('...', max_length={input_length // 2})"
            )
        return True


class TranslationPipeline(Text2TextGenerationPipeline):
    """`pipe(text)` → `[{"translation_text": ...}]`; the languages come from the task name
    (`translation_en_to_fr`) or from `src_lang=` / `tgt_lang=`."""

    return_name = "translation"

    def _sanitize_parameters(self, src_lang=None, tgt_lang=None, **kwargs):
        preprocess_params, forward_params, postprocess_params = super()._sanitize_parameters(**kwargs)
        items = (self.task or "").split("_")
        if len(items) == 4 and items[0] == "translation" and items[2] == "to":
            preprocess_params.setdefault("src_lang", items[1])
            preprocess_params.setdefault("tgt_lang", items[3])
        if src_lang is not None:
            preprocess_params["src_lang"] = src_lang
        if tgt_lang is not None:
            preprocess_params["tgt_lang"] = tgt_lang
        return preprocess_params, forward_params, postprocess_params

    def check_inputs(self, input_length, min_length, max_length):
        if max_length is not None and input_length > 0.9 * max_length:
            logger.warning(
                f"Your input_length: {input_length} is bigger than 0.9 * max_length: {max_length}. You might "
                "consider increasing your max_length manually, e.g. translator('...', max_length=400)"
            )
        return True

    def preprocess(self, inputs, truncation=False, src_lang=None, tgt_lang=None):
        build = getattr(self.tokenizer, "_build_translation_inputs", None)
        if build is not None:
            return build(inputs, return_tensors="pt", truncation=truncation, src_lang=src_lang, tgt_lang=tgt_lang)
        return self._tokenize(inputs, truncation)


__all__ = ["SummarizationPipeline", "Text2TextGenerationPipeline", "TranslationPipeline"]
