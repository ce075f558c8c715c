# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""zero-shot-classification: rank labels chosen at call time with a model trained on NLI.

Each candidate label becomes a hypothesis ("This example is {label}.") paired with the text as
premise; the model's *entailment* logit says how well the label fits. As in HF, one text with n
labels is n model calls (a `ChunkPipeline`), which `batch_size` groups together.
"""
import logging

import numpy as np

from .base import ChunkPipeline

logger = logging.getLogger(__name__)

_UNSET = object()  # tells "candidate_labels=None" (an error) apart from "not given" (the default applies)


def parse_labels(labels):
    """A list of labels, or one string of comma-separated labels ("politics, public health")."""
    if isinstance(labels, str):
        return [label.strip() for label in labels.split(",") if label.strip()]
    return labels


def sequence_pairs(sequences, labels, hypothesis_template):
    """[premise, hypothesis] for every (sequence, label), sequences outermost; and the sequences."""
    if sequences is None or not isinstance(sequences, (str, list, tuple)):
        raise TypeError(f"zero-shot-classification takes a text or a list of texts, got {type(sequences).__name__}")
    if labels is None or not isinstance(labels, (list, tuple)):
        raise TypeError(f"candidate_labels must be a label, a comma-separated string or a list of labels, got "
                        f"{type(labels).__name__}")
    if not isinstance(hypothesis_template, str):
        raise TypeError(f"hypothesis_template must be a string with a {{}} where the label goes, got "
                        f"{type(hypothesis_template).__name__}")
    if len(labels) == 0 or len(sequences) == 0:
        raise ValueError("You must include at least one label and at least one sequence.")
    if hypothesis_template.format(labels[0]) == hypothesis_template:
        raise ValueError(f'The provided hypothesis_template "{hypothesis_template}" was not able to be formatted with '
                         "the target labels. Make sure the passed template includes formatting syntax such as {} "
                         "where the label should go.")
    if isinstance(sequences, str):
        sequences = [sequences]
    pairs = [[sequence, hypothesis_template.format(label)] for sequence in sequences for label in labels]
    return pairs, sequences


class ZeroShotClassificationPipeline(ChunkPipeline):
    """`pipe(text, candidate_labels=["sports", "politics"])` → {"sequence", "labels", "scores"},
    labels sorted by score (a list of such dicts for a list of texts).

    `candidate_labels` may be one comma-separated string; `hypothesis_template` (default "This
    example is {}.") turns a label into the hypothesis; `multi_label=True` scores each label on
    its own (entailment against contradiction) instead of a softmax over the labels. A single
    label is always scored on its own. The entailment class is the first label of
    `config.label2id` starting with "entail" (the last logit when there is none, with a warning).
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.entailment_id == -1:
            logger.warning("Failed to determine 'entailment' label id from the label2id mapping in the model config. "
                           "Setting to -1. Define a descriptive label2id mapping in the model config to ensure "
                           "correct outputs.")

    @property
    def entailment_id(self):
        for label, index in self.model.config.label2id.items():
            if label.lower().startswith("entail"):
                return index
        return -1

    def __call__(self, sequences, *args, **kwargs):
        """The candidate labels may be given as the second positional argument."""
        if len(args) == 1 and "candidate_labels" not in kwargs:
            kwargs["candidate_labels"] = args[0]
        elif args:
            raise ValueError(f"Unable to understand extra arguments {args}")
        return super().__call__(sequences, **kwargs)

    def _sanitize_parameters(self, candidate_labels=_UNSET, hypothesis_template=_UNSET, multi_label=None):
        preprocess_params = {}
        if candidate_labels is not _UNSET:
            preprocess_params["candidate_labels"] = parse_labels(candidate_labels)
        if hypothesis_template is not _UNSET:
            preprocess_params["hypothesis_template"] = hypothesis_template
        postprocess_params = {} if multi_label is None else {"multi_label": multi_label}
        return preprocess_params, {}, postprocess_params

    def _tokenize_pair(self, pair):
        """Truncate the premise only, so the hypothesis (the label) is never cut; a pair that needs
        no truncation but whose hypothesis alone is too long for that rule is left whole (HF)."""
        if self.tokenizer.pad_token is None:
            logger.error("Tokenizer was not supporting padding necessary for zero-shot, attempting to use "
                         "`pad_token=eos_token`")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        try:
            return self.tokenizer([pair], padding=True, truncation="only_first", return_tensors="pt")
        except Exception as error:
            if "too short" not in str(error):
                raise
            return self.tokenizer([pair], padding=True, truncation=False, return_tensors="pt")

    def preprocess(self, inputs, candidate_labels=None, hypothesis_template="This example is {}."):
        pairs, sequences = sequence_pairs(inputs, candidate_labels, hypothesis_template)
        for i, (label, pair) in enumerate(zip(candidate_labels, pairs)):
            yield {"candidate_label": label, "sequence": sequences[0], "is_last": i == len(candidate_labels) - 1,
                   **self._tokenize_pair(pair)}

    def _forward(self, inputs):
        model_inputs = {name: inputs[name] for name in self.tokenizer.model_input_names if name in inputs}
        if self._model_accepts("use_cache"):
            model_inputs["use_cache"] = False
        outputs = self.model(**model_inputs)
        return {"candidate_label": inputs["candidate_label"], "sequence": inputs["sequence"],
                "is_last": inputs["is_last"], "logits": outputs["logits"]}

    def postprocess(self, model_outputs, multi_label=False):
        candidate_labels = [output["candidate_label"] for output in model_outputs]
        logits = np.concatenate([output["logits"].float().numpy() for output in model_outputs])
        logits = logits.reshape((-1, len(candidate_labels), logits.shape[-1]))[0]
        entailment_id = self.entailment_id
        if multi_label or len(candidate_labels) == 1:
            # each label on its own: softmax of [contradiction, entailment]
            contradiction_id = -1 if entailment_id == 0 else 0
            pair = logits[:, [contradiction_id, entailment_id]]
            pair = np.exp(pair - pair.max(axis=-1, keepdims=True))
            scores = pair[:, 1] / pair.sum(axis=-1)
        else:
            # the labels compete: softmax of the entailment logits over the labels
            entail = np.exp(logits[:, entailment_id] - logits[:, entailment_id].max())
            scores = entail / entail.sum()
        order = list(reversed(scores.argsort()))
        return {"sequence": model_outputs[0]["sequence"], "labels": [candidate_labels[i] for i in order],
                "scores": scores[order].tolist()}
