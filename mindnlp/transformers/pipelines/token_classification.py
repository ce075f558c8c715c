# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""token-classification / ner: a label per token, optionally grouped into entities."""
import types
from enum import Enum

import numpy as np

from .base import ChunkPipeline


class AggregationStrategy(Enum):
    """How tokens become entities: "none" (one per token), "simple" (adjacent B-/I- tags of one
    type merged), or word-level choices "first", "average", "max" (a word gets one label, from
    its first token, the average of its tokens' scores, or its most confident token)."""

    NONE = "none"
    SIMPLE = "simple"
    FIRST = "first"
    AVERAGE = "average"
    MAX = "max"


def _split_inputs(inputs, offset_mapping):
    """HF's argument handling: a string becomes a batch of one; offsets must match the batch. A
    generator streams its texts through the pipeline as they come, so it cannot be paired with
    offsets (HF drops them silently; here that is an error)."""
    if isinstance(inputs, types.GeneratorType):
        if offset_mapping:
            raise ValueError("offset_mapping cannot be given with a generator of inputs: pass a list instead")
        return inputs, None
    if isinstance(inputs, (list, tuple)) and len(inputs) > 0:
        inputs = list(inputs)
        batch_size = len(inputs)
    elif isinstance(inputs, str):
        inputs = [inputs]
        batch_size = 1
    else:
        raise ValueError("At least one input is required.")
    if offset_mapping:
        if isinstance(offset_mapping, list) and isinstance(offset_mapping[0], tuple):
            offset_mapping = [offset_mapping]
        if len(offset_mapping) != batch_size:
            raise ValueError("offset_mapping should have the same batch size as the input")
    return inputs, offset_mapping


class TokenClassificationPipeline(ChunkPipeline):
    """`pipe(text)` → [{"entity", "score", "index", "word", "start", "end"}] for tokens not labelled
    with an `ignore_labels` label (default ["O"]); with an aggregation strategy, entities are
    {"entity_group", "score", "word", "start", "end"}.

    `stride` runs texts longer than the tokenizer's model_max_length in overlapping windows
    and merges the entities found in the overlaps. `is_split_into_words=True` takes lists of
    words (joined with `delimiter`, default " ").
    """

    def _sanitize_parameters(self, ignore_labels=None, aggregation_strategy=None, offset_mapping=None,
                             is_split_into_words=False, stride=None, delimiter=None):
        preprocess_params = {"is_split_into_words": is_split_into_words}
        if is_split_into_words:
            preprocess_params["delimiter"] = " " if delimiter is None else delimiter
        if offset_mapping is not None:
            preprocess_params["offset_mapping"] = offset_mapping
        postprocess_params = {}
        if aggregation_strategy is not None:
            if isinstance(aggregation_strategy, str):
                try:
                    aggregation_strategy = AggregationStrategy[aggregation_strategy.upper()]
                except KeyError:
                    raise ValueError(f"Unknown aggregation_strategy {aggregation_strategy!r}; use one of "
                                     f"{[s.value for s in AggregationStrategy]}") from None
            postprocess_params["aggregation_strategy"] = aggregation_strategy
        if ignore_labels is not None:
            postprocess_params["ignore_labels"] = ignore_labels
        if stride is not None:
            if stride >= self.tokenizer.model_max_length:
                raise ValueError("`stride` must be less than `tokenizer.model_max_length` (or even lower if the "
                                 "tokenizer adds special tokens)")
            if aggregation_strategy in (None, AggregationStrategy.NONE):
                raise ValueError("`stride` was provided to process all the text but `aggregation_strategy="
                                 f'"{aggregation_strategy}"`, please select another one instead.')
            preprocess_params["tokenizer_params"] = {"return_overflowing_tokens": True, "padding": True,
                                                     "stride": stride}
        return preprocess_params, {}, postprocess_params

    def __call__(self, inputs, **kwargs):
        """A text gives a list of entities, a list of texts a list of such lists, a generator of
        texts a generator of such lists. As in HF, one text pre-split into words
        (`is_split_into_words=True`) is answered as a batch of one."""
        _, offset_mapping = _split_inputs(inputs, kwargs.get("offset_mapping"))
        if offset_mapping:
            kwargs["offset_mapping"] = offset_mapping
        if (kwargs.get("is_split_into_words") and not isinstance(inputs, types.GeneratorType)
                and not all(isinstance(words, list) for words in inputs)):
            return super().__call__([inputs], **kwargs)
        return super().__call__(inputs, **kwargs)

    def preprocess(self, sentence, offset_mapping=None, **preprocess_params):
        tokenizer_params = dict(preprocess_params.pop("tokenizer_params", {}))
        truncation = bool(self.tokenizer.model_max_length and self.tokenizer.model_max_length > 0)
        word_to_chars_map = None
        if preprocess_params["is_split_into_words"]:
            if not isinstance(sentence, list):
                raise ValueError("When `is_split_into_words=True`, `sentence` must be a list of tokens.")
            delimiter = preprocess_params["delimiter"]
            words = sentence
            sentence = delimiter.join(words)
            word_to_chars_map, start = [], 0
            for word in words:
                word_to_chars_map.append((start, start + len(word)))
                start += len(word) + len(delimiter)
            text = words
            tokenizer_params["is_split_into_words"] = True
        else:
            if not isinstance(sentence, str):
                raise ValueError("When `is_split_into_words=False`, `sentence` must be an untokenized string.")
            text = sentence
        inputs = self.tokenizer(text, return_tensors="pt", truncation=truncation, return_special_tokens_mask=True,
                                return_offsets_mapping=True, **tokenizer_params)
        inputs.pop("overflow_to_sample_mapping", None)
        num_chunks = len(inputs["input_ids"])
        for i in range(num_chunks):
            model_inputs = {k: v[i].unsqueeze(0) for k, v in inputs.items()}
            if offset_mapping is not None:
                model_inputs["offset_mapping"] = offset_mapping
            model_inputs["sentence"] = sentence if i == 0 else None
            model_inputs["is_last"] = i == num_chunks - 1
            if word_to_chars_map is not None:
                model_inputs["word_ids"] = inputs.word_ids(i)
                model_inputs["word_to_chars_map"] = word_to_chars_map
            yield model_inputs

    def _forward(self, model_inputs):
        extras = {key: model_inputs.pop(key, None) for key in
                  ("special_tokens_mask", "offset_mapping", "sentence", "is_last", "word_ids", "word_to_chars_map")}
        output = self.model(**model_inputs)
        return {"logits": output["logits"], **extras, **model_inputs}

    def postprocess(self, all_outputs, aggregation_strategy=AggregationStrategy.NONE, ignore_labels=None):
        if ignore_labels is None:
            ignore_labels = ["O"]
        all_entities = []
        sentence = all_outputs[0]["sentence"]
        word_to_chars_map = all_outputs[0].get("word_to_chars_map")
        for model_outputs in all_outputs:
            logits = model_outputs["logits"][0].float().numpy()
            input_ids = model_outputs["input_ids"][0].numpy()
            offsets = model_outputs["offset_mapping"]
            offset_mapping = offsets[0].tolist() if hasattr(offsets, "tolist") else offsets[0] \
                if offsets is not None else None
            special_tokens_mask = model_outputs["special_tokens_mask"][0].numpy()
            shifted = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
            scores = shifted / shifted.sum(axis=-1, keepdims=True)
            pre_entities = self.gather_pre_entities(sentence, input_ids, scores, offset_mapping, special_tokens_mask,
                                                    aggregation_strategy, word_ids=model_outputs.get("word_ids"),
                                                    word_to_chars_map=word_to_chars_map)
            grouped = self.aggregate(pre_entities, aggregation_strategy)
            all_entities.extend(entity for entity in grouped
                                if entity.get("entity") not in ignore_labels
                                and entity.get("entity_group") not in ignore_labels)
        if len(all_outputs) > 1:
            all_entities = self.aggregate_overlapping_entities(all_entities)
        return all_entities

    @staticmethod
    def aggregate_overlapping_entities(entities):
        """Of entities that overlap (windows of a long text), keep the longest, then the most confident."""
        if len(entities) == 0:
            return entities
        entities = sorted(entities, key=lambda x: x["start"])
        aggregated = []
        previous = entities[0]
        for entity in entities:
            if previous["start"] <= entity["start"] < previous["end"]:
                length = entity["end"] - entity["start"]
                previous_length = previous["end"] - previous["start"]
                if length > previous_length or (length == previous_length and entity["score"] > previous["score"]):
                    previous = entity
            else:
                aggregated.append(previous)
                previous = entity
        aggregated.append(previous)
        return aggregated

    def _continues_words(self):
        """WordPiece-style vocabularies mark word continuations ("##"), which tells subwords apart."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None)
        return backend is not None and getattr(backend.model, "continuing_subword_prefix", None)

    def gather_pre_entities(self, sentence, input_ids, scores, offset_mapping, special_tokens_mask,
                            aggregation_strategy, word_ids=None, word_to_chars_map=None):
        """One dict per non-special token: its word, scores, character span and whether it continues a word."""
        pre_entities = []
        for idx, token_scores in enumerate(scores):
            if special_tokens_mask[idx]:
                continue
            word = self.tokenizer.convert_ids_to_tokens(int(input_ids[idx]))
            if offset_mapping is not None:
                start_ind, end_ind = (int(v) for v in offset_mapping[idx])
                if word_ids is not None and word_to_chars_map is not None:
                    word_index = word_ids[idx]
                    if word_index is not None:
                        start_char, _ = word_to_chars_map[word_index]
                        start_ind += start_char
                        end_ind += start_char
                word_ref = sentence[start_ind:end_ind]
                if self._continues_words():
                    is_subword = len(word) != len(word_ref)
                else:
                    # Without a continuation marker: a token glued to the previous character continues a word.
                    is_subword = start_ind > 0 and " " not in sentence[start_ind - 1:start_ind + 1]
                if int(input_ids[idx]) == self.tokenizer.unk_token_id:
                    word = word_ref
                    is_subword = False
            else:
                start_ind = end_ind = None
                is_subword = False
            pre_entities.append({"word": word, "scores": token_scores, "start": start_ind, "end": end_ind,
                                 "index": idx, "is_subword": is_subword})
        return pre_entities

    def aggregate(self, pre_entities, aggregation_strategy):
        if aggregation_strategy in (AggregationStrategy.NONE, AggregationStrategy.SIMPLE):
            entities = []
            for pre_entity in pre_entities:
                entity_idx = pre_entity["scores"].argmax()
                entities.append({"entity": self.model.config.id2label[int(entity_idx)],
                                 "score": pre_entity["scores"][entity_idx], "index": pre_entity["index"],
                                 "word": pre_entity["word"], "start": pre_entity["start"], "end": pre_entity["end"]})
        else:
            entities = self.aggregate_words(pre_entities, aggregation_strategy)
        if aggregation_strategy == AggregationStrategy.NONE:
            return entities
        return self.group_entities(entities)

    def aggregate_word(self, entities, aggregation_strategy):
        """The tokens of one word → one entity, labelled by the strategy."""
        word = self.tokenizer.convert_tokens_to_string([entity["word"] for entity in entities])
        if aggregation_strategy == AggregationStrategy.FIRST:
            scores = entities[0]["scores"]
        elif aggregation_strategy == AggregationStrategy.MAX:
            scores = max(entities, key=lambda entity: entity["scores"].max())["scores"]
        elif aggregation_strategy == AggregationStrategy.AVERAGE:
            scores = np.nanmean(np.stack([entity["scores"] for entity in entities]), axis=0)
        else:
            raise ValueError("Invalid aggregation_strategy")
        idx = scores.argmax()
        return {"entity": self.model.config.id2label[int(idx)], "score": scores[idx], "word": word,
                "start": entities[0]["start"], "end": entities[-1]["end"]}

    def aggregate_words(self, entities, aggregation_strategy):
        """Group tokens into words (a subword joins the word before it) and label each word once."""
        word_entities = []
        word_group = None
        for entity in entities:
            if word_group is None:
                word_group = [entity]
            elif entity["is_subword"]:
                word_group.append(entity)
            else:
                word_entities.append(self.aggregate_word(word_group, aggregation_strategy))
                word_group = [entity]
        if word_group is not None:
            word_entities.append(self.aggregate_word(word_group, aggregation_strategy))
        return word_entities

    def group_sub_entities(self, entities):
        """Adjacent tokens of one entity → {"entity_group", mean score, joined word, span}."""
        entity = entities[0]["entity"].split("-", 1)[-1]
        scores = np.nanmean([entity["score"] for entity in entities])
        return {"entity_group": entity, "score": np.mean(scores),
                "word": self.tokenizer.convert_tokens_to_string([entity["word"] for entity in entities]),
                "start": entities[0]["start"], "end": entities[-1]["end"]}

    @staticmethod
    def get_tag(entity_name):
        """("B" | "I", type) of a label; labels without a B-/I- prefix count as inside ("I")."""
        if entity_name.startswith("B-"):
            return "B", entity_name[2:]
        if entity_name.startswith("I-"):
            return "I", entity_name[2:]
        return "I", entity_name

    def group_entities(self, entities):
        """Merge runs of one entity type; a B- tag starts a new entity."""
        groups, current = [], []
        for entity in entities:
            if not current:
                current.append(entity)
                continue
            bi, tag = self.get_tag(entity["entity"])
            _, last_tag = self.get_tag(current[-1]["entity"])
            if tag == last_tag and bi != "B":
                current.append(entity)
            else:
                groups.append(self.group_sub_entities(current))
                current = [entity]
        if current:
            groups.append(self.group_sub_entities(current))
        return groups


NerPipeline = TokenClassificationPipeline
