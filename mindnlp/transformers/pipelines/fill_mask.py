# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""fill-mask: the most likely tokens for each mask token, with the filled-in sequence."""
import logging

import numpy as np

from .base import Pipeline, PipelineException
from .text_classification import softmax

logger = logging.getLogger(__name__)


class FillMaskPipeline(Pipeline):
    """`pipe("Paris is the [MASK] of France.")` → [{"score", "token", "token_str", "sequence"}] * top_k.

    `top_k` (default 5) candidates per mask; `targets` restricts them to the given words. A
    text with several masks gives one list per mask (the sequences then keep special tokens,
    as in HF).
    """

    def _sanitize_parameters(self, top_k=None, targets=None, tokenizer_kwargs=None):
        if self.tokenizer.mask_token_id is None:
            raise PipelineException("fill-mask", self.model.base_model_prefix,
                                    "The tokenizer does not define a `mask_token`.")
        preprocess_params = {} if tokenizer_kwargs is None else {"tokenizer_kwargs": tokenizer_kwargs}
        postprocess_params = {}
        if targets is not None:
            postprocess_params["target_ids"] = self.get_target_ids(targets)
        if top_k is not None:
            postprocess_params["top_k"] = top_k
        return preprocess_params, {}, postprocess_params

    def __call__(self, inputs, **kwargs):
        outputs = super().__call__(inputs, **kwargs)
        if isinstance(inputs, list) and len(inputs) == 1:
            return outputs[0]
        return outputs

    def get_target_ids(self, targets):
        """Vocabulary ids of the target words; a word outside the vocabulary stands for its first token."""
        if isinstance(targets, str):
            targets = [targets]
        vocab = self.tokenizer.get_vocab()
        target_ids = []
        for target in targets:
            id_ = vocab.get(target)
            if id_ is None:
                input_ids = self.tokenizer(target, add_special_tokens=False, return_attention_mask=False,
                                           return_token_type_ids=False, max_length=1, truncation=True)["input_ids"]
                if len(input_ids) == 0:
                    logger.warning(f"The specified target token `{target}` does not exist in the model vocabulary. "
                                   "We cannot replace it with anything meaningful, ignoring it")
                    continue
                id_ = input_ids[0]
                logger.warning(f"The specified target token `{target}` does not exist in the model vocabulary. "
                               f"Replacing with `{self.tokenizer.convert_ids_to_tokens(id_)}`.")
            target_ids.append(id_)
        target_ids = list(set(target_ids))
        if len(target_ids) == 0:
            raise ValueError("At least one target must be provided when passed.")
        return np.array(target_ids)

    def preprocess(self, inputs, tokenizer_kwargs=None):
        model_inputs = self.tokenizer(inputs, return_tensors="pt", **(tokenizer_kwargs or {}))
        for input_ids in model_inputs["input_ids"].numpy():
            if not (input_ids == self.tokenizer.mask_token_id).any():
                raise PipelineException("fill-mask", self.model.base_model_prefix,
                                        f"No mask_token ({self.tokenizer.mask_token}) found on the input")
        return model_inputs

    def _forward(self, model_inputs):
        outputs = self.model(**model_inputs)
        return {"logits": outputs["logits"], "input_ids": model_inputs["input_ids"]}

    def postprocess(self, model_outputs, top_k=5, target_ids=None):
        if target_ids is not None and target_ids.shape[0] < top_k:
            top_k = target_ids.shape[0]
        input_ids = model_outputs["input_ids"][0].numpy()
        masked_index = np.nonzero(input_ids == self.tokenizer.mask_token_id)[0]
        probs = softmax(model_outputs["logits"][0].float().numpy()[masked_index, :])
        if target_ids is not None:
            probs = probs[..., target_ids]
        predictions = np.argsort(-probs, axis=-1, kind="stable")[:, :top_k]
        values = np.take_along_axis(probs, predictions, axis=-1)
        single_mask = values.shape[0] == 1
        result = []
        for i, (row_values, row_predictions) in enumerate(zip(values.tolist(), predictions.tolist())):
            row = []
            for score, prediction in zip(row_values, row_predictions):
                token = int(target_ids[prediction]) if target_ids is not None else prediction
                tokens = input_ids.copy()
                tokens[masked_index[i]] = token
                tokens = tokens[tokens != self.tokenizer.pad_token_id]
                sequence = self.tokenizer.decode(tokens.tolist(), skip_special_tokens=single_mask)
                row.append({"score": score, "token": token, "token_str": self.tokenizer.decode([token]),
                            "sequence": sequence})
            result.append(row)
        return result[0] if single_mask else result
